"""The marker a workbook carries so llmsizer can re-read it: written by
:mod:`llmsizer.documents.workbook`, read by :mod:`llmsizer.documents.reread` (both import this module; neither
imports the other's internals).

Custom document properties ``llmsizer`` (a marker), ``llmsizer_version`` and
``llmsizer_data_000``… (zlib-compressed, base64 JSON cut into 250-character pieces, the limit
of a property value in Excel), plus the digest of every formula and defined name, normalised
the way Excel and LibreOffice re-write formulas (:func:`normalize_formula`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ..base.errors import InputError
from ..base.jsonsafe import no_duplicates
from ..base.textsafe import printable
from ..base.version import __version__

FORMAT = 1
MARKER = "llmsizer"
CHUNK = 250  # characters per property value (Excel's limit is 255)
MAX_CHUNKS = 4000  # 1 MB of metadata
MAX_JSON_BYTES = 5_000_000  # inflated metadata; bounded before parsing (docs/security.md)
PREFIX = "llmsizer_data_"

__all__ = [
    "FORMAT",
    "KEY_OUTPUTS",
    "key_outputs",
    "metadata_properties",
    "normal_name_target",
    "normalize_formula",
    "num_text",
    "read_metadata",
    "structure_digest",
]

# --- formulas, normalised -------------------------------------------

_STRING = re.compile(r'"(?:[^"]|"")*"')
_SHEET_QUOTES = re.compile(r"'((?:[^']|'')+)'!")
_NUMBER = re.compile(r"(?<![A-Z0-9_.!])(\d+\.?\d*|\.\d+)(E[+-]?\d+)?(?![A-Z0-9_(.])")


def normalize_formula(text: str) -> str:
    """A formula as a spreadsheet may re-write it, reduced to what it means: no leading
    ``=``, upper case and no spaces or ``$`` outside strings, sheet names unquoted, numbers
    by value (12 significant digits)."""
    body = text[1:] if text.startswith("=") else text
    if '"' not in body:  # no string literal: most formulas
        return _normal_code(body)
    out: list[str] = []
    pos = 0
    for m in _STRING.finditer(body):
        out.append(_normal_code(body[pos:m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(_normal_code(body[pos:]))
    return "".join(out)


_SPACE_OR_DOLLAR = re.compile(r"[\s$]")


def _normal_code(code: str) -> str:
    if "'" in code:
        code = _SHEET_QUOTES.sub(lambda m: m.group(1).replace("''", "'") + "!", code)
    code = _SPACE_OR_DOLLAR.sub("", code).upper()
    return _NUMBER.sub(_number_by_value, code)


def _number_by_value(m: re.Match[str]) -> str:
    return _canonical_number(m.group(0))


@lru_cache(maxsize=4096)  # formulas repeat the same few constants
def _canonical_number(token: str) -> str:
    return num_text(float(token))


def num_text(x: float) -> str:
    return f"{x:.12g}"


def normal_name_target(text: str) -> str:
    return _normal_code(text.lstrip("="))


def structure_digest(formulas: Iterable[tuple[str, str, str]],
                     names: Iterable[tuple[str, str]],
                     known: Mapping[tuple[str, str], str] | None = None) -> str:
    """sha256 of every (sheet, cell, formula) and (defined name, target), normalised.
    ``known``: (sheet, cell) -> the formula there already normalised (the writer normalises
    a calculation sheet's row once, from its template, not once per column)."""
    given = known or {}
    lines = sorted(f"{sheet}!{cell}={given.get((sheet, cell)) or normalize_formula(f)}"
                   for sheet, cell, f in formulas)
    lines += sorted(f"name:{n}={normal_name_target(t)}" for n, t in names)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def metadata_properties(meta: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The custom document properties that carry ``meta`` (all text)."""
    blob = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False)
    packed = base64.b64encode(zlib.compress(blob.encode("utf-8"), 9)).decode("ascii")
    chunks = [packed[i:i + CHUNK] for i in range(0, len(packed), CHUNK)]
    props = [(MARKER, f"llmsizer workbook, format {FORMAT}: re-read with `llmsizer report "
                      "FILE.xlsx --out DIR`"),
             ("llmsizer_version", __version__), ("llmsizer_format", str(FORMAT)),
             ("llmsizer_chunks", str(len(chunks))),
             ("llmsizer_sha256", hashlib.sha256(packed.encode("ascii")).hexdigest())]
    props += [(f"{PREFIX}{i:03d}", c) for i, c in enumerate(chunks)]
    return props


def read_metadata(props: Mapping[str, str], filename: str) -> dict[str, Any]:
    """The metadata a workbook's custom properties carry; InputError when there is none."""
    if MARKER not in props:
        raise InputError("not a workbook llmsizer wrote (it carries no llmsizer marker in its "
                         "document properties); llmsizer re-reads only the .xlsx files `llmsizer "
                         "report` writes, saved from Excel or LibreOffice (Google Sheets drops the "
                         "marker)", file=filename)
    version = props.get("llmsizer_version", "?")
    if version != __version__:
        raise InputError(f"written by llmsizer {printable(version[:40])}, this is llmsizer "
                         f"{__version__}: formulas may differ between versions; size the "
                         "requirements file again with this version", file=filename)
    try:
        fmt = int(float(props.get("llmsizer_format", "0")))
        n = int(float(props.get("llmsizer_chunks", "0")))
        if fmt != FORMAT or not 0 < n <= MAX_CHUNKS:
            raise ValueError
        packed = "".join(props[f"{PREFIX}{i:03d}"] for i in range(n))
        if hashlib.sha256(packed.encode("ascii")).hexdigest() != props.get("llmsizer_sha256"):
            raise ValueError
        inflate = zlib.decompressobj()
        blob = inflate.decompress(base64.b64decode(packed, validate=True), MAX_JSON_BYTES)
        if inflate.unconsumed_tail or not inflate.eof:
            raise ValueError
        # a key given twice is refused, as in every JSON llmsizer reads: llmsizer writes
        # each once, so a second one was put there to be read in place of the first
        meta = json.loads(blob.decode("utf-8"), parse_constant=_no_constant,
                          object_pairs_hook=no_duplicates)
        if not isinstance(meta, dict):
            raise ValueError
    except (KeyError, ValueError, UnicodeError, zlib.error, RecursionError):
        raise InputError("the llmsizer data in this workbook's document properties is "
                         "damaged or incomplete; size the requirements file again",
                         file=filename) from None
    return meta


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number llmsizer writes")


# --- key outputs (for --diff) ------------------------------------------------------------

KEY_OUTPUTS = ("gpus", "nodes", "capex", "annual_cost_onprem", "annual_cost_cloud")


def key_outputs(result: Any) -> dict[str, Any]:
    """The figures ``--diff`` compares: per workload and in total."""
    workloads = []
    for w in result.workloads:
        best = w.best
        row: dict[str, Any] = {"name": w.name, "recommended": w.recommended}
        for k in KEY_OUTPUTS:
            row[k] = float(best.values[k]) if best is not None else None
        workloads.append(row)
    # the cloud total is None where a GPU of the plan has no cloud price
    totals = {k: None if getattr(result.totals, k) is None else float(getattr(result.totals, k))
              for k in KEY_OUTPUTS}
    return {"currency": result.account.currency, "workloads": workloads, "totals": totals}
