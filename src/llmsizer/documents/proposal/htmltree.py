"""The proposal's HTML as an element tree, built by Python's C-speed ``html.parser`` when the
markup is plain enough that an HTML5 parser would build the very same tree.

WeasyPrint parses HTML with tinyhtml5, an HTML5 tree builder in pure Python: ~30 ms of each
proposal's ~0.5 s layout, against ~5 ms here (docs/benchmarks.md, sixth round). The HTML5
rules differ from plain nesting only where markup is left to them: an end tag left out, a
``<div>`` that closes an open ``<p>``, a ``<tr>`` straight in a ``<table>`` (an implied
``<tbody>``, which this builder adds too), text inside a table, misnested inline tags,
special elements (forms, ``<pre>``, scripts, SVG). :func:`plain_tree` builds the tree only
for markup that needs none of them, and returns None for anything else, where the caller
lets tinyhtml5 parse as before. tests/test_proposal_writer.py checks the trees are equal for
every shipped account and for the markup this builder refuses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

__all__ = ["plain_tree"]


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


VOID = _names("area br col embed hr img meta wbr")
# Start tags that close an open <p> (HTML5 "in body": <p> in button scope).
CLOSES_P = _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p search section "
    "summary table ul li dd dt")
# Elements with rules of their own (implied ends, raw text, foreign content, forms...).
SPECIAL = _names(
    "a applet area base basefont bgsound body button caption col colgroup dialog embed form "
    "frame frameset head html iframe image input isindex keygen link listing marquee math nobr "
    "noembed noframes noscript object option optgroup param plaintext pre rb rp rt rtc ruby "
    "script select source style svg template textarea title track xmp")
HEADINGS = _names("h1 h2 h3 h4 h5 h6")
# Where a list item's implied end stops looking for an open one: some of HTML5's "special"
# elements (stopping at fewer only refuses more).
LIST_SCOPE = _names(
    "article aside blockquote body details dir dl fieldset figure footer header html main "
    "menu nav ol section summary table td th ul")
# Children a table part may hold (anything else would be moved out of the table).
TABLE_CHILDREN = {"table": frozenset({"colgroup", "thead", "tbody", "tfoot"}),
                  "colgroup": frozenset({"col"}), "thead": frozenset({"tr"}),
                  "tbody": frozenset({"tr"}), "tfoot": frozenset({"tr"}),
                  "tr": frozenset({"td", "th"})}
TABLE_PARTS = (frozenset(TABLE_CHILDREN) - {"table"}) | {"td", "th", "col", "caption"}
# "<" that starts no tag, "&" that ends no reference with ";", and the characters an HTML5
# parser replaces: their handling differs between the two parsers.
UNPLAIN = re.compile(r"<(?![a-zA-Z/!])|</(?![a-zA-Z])|<!(?!DOCTYPE html>)|"
                     r"&(?!(?:[a-zA-Z][a-zA-Z0-9]*|#[0-9]+|#[xX][0-9a-fA-F]+);)|[\r\0]")
ALLOWED_IN_HEAD = frozenset({"meta", "title"})


class _NotPlain(Exception):
    """Markup an HTML5 parser would build differently from plain nesting."""


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[ET.Element] = []
        self.implied: ET.Element | None = None  # an implied <tbody>
        self.root: ET.Element | None = None
        self.mode = "before"  # before, head, after-head, body, after-body

    # -- text: appended where an HTML5 parser puts it
    def _append_text(self, parent: ET.Element, text: str) -> None:
        if len(parent):
            parent[-1].tail = (parent[-1].tail or "") + text
        else:
            parent.text = (parent.text or "") + text

    def handle_data(self, data: str) -> None:
        blank = not data.strip(" \t\n\f")
        if self.mode == "before":
            if not blank:
                raise _NotPlain("text before <html>")
        elif self.mode == "head-wait":  # between <html> and <head>
            if not blank:
                raise _NotPlain("text before <head>")
        elif self.mode in ("after-body", "after-html"):  # HTML5 puts it in the body
            if not blank:
                raise _NotPlain("text after </body>")
            assert self.root is not None
            self._append_text(self.root[-1], data)
        else:
            current = self.stack[-1]
            if not blank and (current.tag in TABLE_CHILDREN or current.tag == "table"
                              or (self.mode != "body" and current.tag != "title")):
                raise _NotPlain(f"text in <{current.tag}>")
            self._append_text(current, data)

    def handle_decl(self, decl: str) -> None:
        if self.mode != "before" or decl != "DOCTYPE html":
            raise _NotPlain(decl)

    def handle_comment(self, data: str) -> None:
        raise _NotPlain("comment")

    def handle_pi(self, data: str) -> None:
        raise _NotPlain("processing instruction")

    def unknown_decl(self, data: str) -> None:
        raise _NotPlain(data)

    # -- tags
    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:  # HTML5 ignores the "/": the element stays open
            raise _NotPlain(f"<{tag}/>")
        self.handle_starttag(tag, attrs)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = [k for k, _ in attrs]
        if len(set(names)) != len(names):
            raise _NotPlain("an attribute given twice")
        attrib = {k: "" if v is None else v for k, v in attrs}
        if self.mode == "before":
            if tag != "html":
                raise _NotPlain(f"<{tag}> before <html>")
            self.root = ET.Element(tag, attrib)
            self.stack.append(self.root)
            self.mode = "head-wait"
            return
        if self.mode == "head-wait":
            if tag != "head":
                raise _NotPlain(f"<{tag}> before <head>")
            self._open(tag, attrib, void=False)
            self.mode = "head"
            return
        if self.mode == "head":
            if tag not in ALLOWED_IN_HEAD or self.stack[-1].tag != "head":
                raise _NotPlain(f"<{tag}> in <head>")
            self._open(tag, attrib, void=tag in VOID)
            return
        if self.mode == "after-head":
            if tag != "body":
                raise _NotPlain(f"<{tag}> after </head>")
            self._open(tag, attrib, void=False)
            self.mode = "body"
            return
        if self.mode != "body":
            raise _NotPlain(f"<{tag}> after </body>")
        self._body_start(tag, attrib)

    def _body_start(self, tag: str, attrib: dict[str, str]) -> None:
        current = self.stack[-1].tag
        open_tags = [e.tag for e in self.stack]
        if tag in SPECIAL - {"col", "colgroup", "caption"} and tag != "a":
            raise _NotPlain(f"<{tag}>")
        if tag == "a" and "a" in open_tags:
            raise _NotPlain("<a> in <a>")
        if current in TABLE_CHILDREN or current == "table":
            if tag == "tr" and current == "table":  # HTML5 implies a <tbody>
                self.implied = self._open("tbody", {}, void=False)
            elif tag not in TABLE_CHILDREN.get(current, ()):
                raise _NotPlain(f"<{tag}> in <{current}>")
        elif tag in TABLE_PARTS:
            raise _NotPlain(f"<{tag}> outside its table part")
        if tag in CLOSES_P and "p" in open_tags[open_tags.index("body"):]:
            raise _NotPlain(f"<{tag}> in an open <p>")
        if tag in HEADINGS and current in HEADINGS:
            raise _NotPlain("a heading in a heading")
        if tag in ("li", "dd", "dt"):
            for name in reversed(open_tags):
                if name in ("li", "dd", "dt"):
                    raise _NotPlain(f"<{tag}> in an open <{name}>")
                if name in LIST_SCOPE:
                    break
        self._open(tag, attrib, void=tag in VOID)

    def _open(self, tag: str, attrib: dict[str, str], void: bool) -> ET.Element:
        element = ET.SubElement(self.stack[-1], tag, attrib)
        if not void:
            self.stack.append(element)
        return element

    def handle_endtag(self, tag: str) -> None:
        if tag == "html" and self.mode == "after-body":
            self.mode = "after-html"
            return
        if self.mode == "after-html" or not self.stack:
            raise _NotPlain(f"</{tag}> after </html>")
        if tag == "table" and self.implied is not None and self.stack[-1] is self.implied:
            self.stack.pop()
            self.implied = None
        if self.stack[-1].tag != tag or tag in VOID:
            raise _NotPlain(f"</{tag}> closes <{self.stack[-1].tag}>")
        self.stack.pop()
        if tag == "head":
            self.mode = "after-head"
        elif tag == "body":
            self.mode = "after-body"
        elif tag == "html":
            raise _NotPlain("</html> before </body>")


def plain_tree(html: str) -> ET.Element | None:
    """The ``<html>`` element of ``html`` as tinyhtml5 builds it (namespace_html_elements off),
    or None where the markup relies on an HTML5 parser's repairs."""
    if UNPLAIN.search(html):
        return None
    builder = _Builder()
    try:
        builder.feed(html)
        builder.close()
    except _NotPlain:
        return None
    if builder.mode == "after-body":  # "</html>" left out: same tree
        builder.mode = "after-html"
    if builder.mode != "after-html" or builder.root is None:
        return None
    return builder.root
