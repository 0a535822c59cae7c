"""The parts of a written .xlsx that benchmarks/excel_rules.py checks, read straight from the
zip as Excel parses them, and a formula parser giving the tree the rules walk."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from openpyxl.formula.tokenizer import Token, Tokenizer

__all__ = ["NS", "PRECEDENCE", "REF", "Book", "Node", "is_cell", "parse", "ptg_bytes", "split_cell"]

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
      "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
      "c": "http://schemas.openxmlformats.org/drawingml/2006/chart",
      "pr": "http://schemas.openxmlformats.org/package/2006/relationships"}

_CELL = r"\$?[A-Z]{1,3}\$?[0-9]{1,7}"
REF = re.compile(rf"^(?:(?P<sheet>'(?:[^']|'')+'|[^'!]+)!)?(?P<a>{_CELL})(?::(?P<b>{_CELL}))?$")


@dataclass
class Node:
    kind: str                    # num, str, bool, err, ref, fn, op, neg, pct
    value: str = ""
    args: list[Node] = field(default_factory=list)


# --- parsing ------------------------------------------------------------------------------------

PRECEDENCE = {"=": 1, "<>": 1, "<": 1, ">": 1, "<=": 1, ">=": 1, "&": 2, "+": 3, "-": 3,
              "*": 4, "/": 4, "^": 5}


def parse(formula: str) -> Node:
    """The formula's tree, by precedence climbing over openpyxl's tokens (Excel's operator
    precedence: comparison < & < + - < * / < ^ < unary)."""
    tokens = [t for t in Tokenizer("=" + formula.removeprefix("=")).items
              if t.type != Token.WSPACE]
    pos = 0

    def peek() -> Token | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> Token:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def primary() -> Node:
        tok = take()
        if tok.type == Token.OP_PRE:
            return Node("neg" if tok.value == "-" else "pos", tok.value, [expression(6)])
        if tok.type == Token.FUNC and tok.subtype == Token.OPEN:
            node = Node("fn", tok.value[:-1].upper())
            nxt = peek()
            if nxt is not None and nxt.type == Token.FUNC and nxt.subtype == Token.CLOSE:
                take()
                return node
            while True:
                node.args.append(expression(0))
                sep = take()
                if sep.type == Token.FUNC and sep.subtype == Token.CLOSE:
                    return node
                if not (sep.type == Token.SEP and sep.subtype == Token.ARG):
                    raise ValueError(f"unexpected {sep.value!r} in {formula}")
        if tok.type == Token.PAREN and tok.subtype == Token.OPEN:
            inner = expression(0)
            take()
            return inner
        if tok.type == Token.OPERAND:
            kind = {Token.NUMBER: "num", Token.TEXT: "str", Token.LOGICAL: "bool",
                    Token.ERROR: "err"}.get(tok.subtype, "ref")
            return Node(kind, tok.value)
        raise ValueError(f"unexpected {tok.value!r} in {formula}")

    def expression(min_prec: int) -> Node:
        left = primary()
        while True:
            tok = peek()
            if tok is not None and tok.type == Token.OP_POST:
                take()
                left = Node("pct", "%", [left])
                continue
            if tok is None or tok.type != Token.OP_IN or PRECEDENCE[tok.value] <= min_prec - 1:
                return left
            prec = PRECEDENCE[take().value]
            right = expression(prec + 1)
            left = Node("op", tok.value, [left, right])

    tree = expression(0)
    if pos != len(tokens):
        raise ValueError(f"trailing tokens in {formula}")
    return tree


# --- the workbook ------------------------------------------------------------------------------


def split_cell(ref: str) -> tuple[int, int]:
    m = re.fullmatch(r"\$?([A-Z]+)\$?([0-9]+)", ref)
    assert m, ref
    col = 0
    for ch in m.group(1):
        col = col * 26 + ord(ch) - 64
    return col, int(m.group(2))


def is_cell(name: str) -> bool:
    m = re.fullmatch(r"([A-Za-z]{1,3})([0-9]+)", name)
    if not m:
        return False
    col, row = split_cell(name.upper())
    return col <= 16384 and 1 <= row <= 1048576


class Book:
    """The parts of one .xlsx that the rules read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path)
        wb = self._xml("xl/workbook.xml")
        rels = {r.get("Id"): r.get("Target") for r in
                self._xml("xl/_rels/workbook.xml.rels").findall("pr:Relationship", NS)}
        self.sheets: dict[str, str] = {}
        for s in wb.findall("m:sheets/m:sheet", NS):
            target = rels[s.get(f"{{{NS['r']}}}id")] or ""
            self.sheets[s.get("name") or ""] = "xl/" + target.removeprefix("/xl/")
        self.names = [(d.get("name") or "", d.text or "", d.get("localSheetId"))
                      for d in wb.findall("m:definedNames/m:definedName", NS)]
        self.all_names = {n.lower() for n, _t, _l in self.names}
        self.global_names = {n.lower(): t for n, t, local in self.names if local is None}
        self.strings: list[str] = []
        if "xl/sharedStrings.xml" in self.zip.namelist():
            for si in self._xml("xl/sharedStrings.xml").findall("m:si", NS):
                self.strings.append("".join(t.text or "" for t in si.iter(f"{{{NS['m']}}}t")))
        # sheet -> cell -> (type, cached value, formula or None)
        styles = self._xml("xl/styles.xml")
        codes = {f.get("numFmtId"): f.get("formatCode") or ""
                 for f in styles.findall("m:numFmts/m:numFmt", NS)}
        self.formats = [codes.get(xf.get("numFmtId"), "")
                        for xf in styles.findall("m:cellXfs/m:xf", NS)]
        self.styles: dict[tuple[str, str], int] = {}
        self.spans: dict[tuple[str, str, str, int], set[str]] = {}
        self.static: dict[tuple[str, str], set[str]] = {}
        self.cells: dict[str, dict[str, tuple[str, str, str | None]]] = {}
        self.kinds: dict[str, list[tuple[int, int, str]]] = {}
        self.xml: dict[str, ElementTree.Element] = {}
        for name, part in self.sheets.items():
            root = self._xml(part)
            self.xml[name] = root
            cells: dict[str, tuple[str, str, str | None]] = {}
            for c in root.iter(f"{{{NS['m']}}}c"):
                f = c.find("m:f", NS)
                v = c.find("m:v", NS)
                t = c.get("t") or "n"
                value = v.text or "" if v is not None else ""
                if t == "s" and value:
                    value = self.strings[int(value)]
                cells[c.get("r") or ""] = (t, value, None if f is None else (f.text or ""))
                self.styles[name, c.get("r") or ""] = int(c.get("s") or 0)
            self.cells[name] = cells
            self.kinds[name] = [(*split_cell(r), {"s": "s", "str": "s", "inlineStr": "s",
                                                   "b": "b", "e": ""}.get(t, "n"))
                                for r, (t, _v, _f) in cells.items()]

    def _xml(self, part: str) -> ElementTree.Element:
        return ElementTree.fromstring(self.zip.read(part))

    def charts(self) -> Iterator[tuple[str, str]]:
        for part in sorted(n for n in self.zip.namelist() if n.startswith("xl/charts/chart")):
            for f in self._xml(part).iter(f"{{{NS['c']}}}f"):
                yield part, f.text or ""

    def resolve(self, ref: str, here: str) -> tuple[str, str, str] | None:
        """(sheet, first cell, last cell) of a reference or a workbook-level defined name."""
        ref = self.global_names.get(ref.lower(), ref)
        m = REF.match(ref)
        if not m:
            return None
        sheet = m.group("sheet") or here
        if sheet.startswith("'"):
            sheet = sheet[1:-1].replace("''", "'")
        return sheet, m.group("a").replace("$", ""), (m.group("b") or m.group("a")).replace("$", "")


def ptg_bytes(node: Node) -> int:
    """An upper estimate of the formula's parsed size, from the token sizes of MS-XLSB
    §2.5.98 (Ptg): a number 9 bytes, a string 3 + 2 per character, a 3-D area 15, a name 5,
    a function 4, an operator 1, IF's two jumps 8; parentheses 1."""
    k = node.kind
    own = {"num": 9, "bool": 2, "err": 2, "neg": 1, "pos": 1, "pct": 1, "op": 1}.get(k, 0)
    if k == "str":
        own = 3 + 2 * (len(node.value) - 2)
    elif k == "ref":
        own = 15 if ("!" in node.value or ":" in node.value) else 7
    elif k == "fn":
        own = 4 + (8 if node.value == "IF" else 0)
    return own + 1 + sum(ptg_bytes(a) for a in node.args)
