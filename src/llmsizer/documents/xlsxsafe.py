"""Opening a workbook that comes back from outside (``llmsizer report edited.xlsx``), bounded
and safe: size, part, cell and time limits, XML parsed with no document type or entity, then
openpyxl read-only, sheets streamed cell by cell. Each refusal is one line naming the part
(:class:`~llmsizer.base.errors.InputError`). What is read is checked in :mod:`.reread`.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.parsers import expat

from ..base.errors import InputError
from ..base.textsafe import printable

# --- reading a workbook that may be hostile -----------------------------------------------------
#
# An edited workbook comes from outside, so it is read in two passes over the same bytes
# (read once into memory: what was checked is what is parsed). The first pass inflates every
# part with a running count of the bytes actually produced (a zip header can lie about
# sizes), parses each with expat configured to refuse a document type declaration (so no
# entity, external or nested, is ever defined), and counts elements and cells, under a time
# limit. Only then does openpyxl see the file, read-only, its sheets streamed cell by cell
# (never padded to the sheet's stated dimension). openpyxl parses with defusedxml, a
# dependency for this reason, as a second line. The limits are far above what llmsizer
# writes: the example account's workbook is 77 KB, 23 parts, 446 KB unpacked, 4,100 cells.

MAX_WORKBOOK_BYTES = 20_000_000
MAX_UNPACKED_BYTES = 50_000_000
MAX_PARTS = 500
MAX_PART_BYTES = 25_000_000
MAX_TOTAL_CELLS = 200_000
MAX_ELEMENTS = 2_000_000
READ_SECONDS = 10.0
_XML_SUFFIXES = (".xml", ".rels", ".vml")
_CHUNK = 1 << 16


class _Refused(Exception):
    """A part the first pass refuses (turned into an InputError naming the part)."""


@dataclass
class _Budget:
    deadline: float
    unpacked: int = 0
    elements: int = 0
    cells: int = 0

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise _Refused(f"took longer than {READ_SECONDS:.0f} s to read")


def _read_file(path: Path, filename: str) -> bytes:
    """The file's bytes, refused from its size before reading; a regular file only (a named
    pipe or a device is refused, not read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError("workbook not found", file=filename) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror or exc})", file=filename) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError("is not a regular file: llmsizer re-reads only .xlsx workbooks",
                             file=filename)
        if info.st_size > MAX_WORKBOOK_BYTES:
            raise InputError(f"is larger than {MAX_WORKBOOK_BYTES:,} bytes: not a workbook "
                             "llmsizer wrote", file=filename)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_WORKBOOK_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror or exc})", file=filename) from None
    finally:
        os.close(fd)
    if len(data) > MAX_WORKBOOK_BYTES:
        raise InputError(f"is larger than {MAX_WORKBOOK_BYTES:,} bytes: not a workbook "
                         "llmsizer wrote", file=filename)
    return data


def _vet(data: bytes, filename: str) -> None:
    """The first pass (comment above): every part inflated, counted and parsed; each
    refusal one line naming the part."""
    not_xlsx = ("cannot be opened as an .xlsx workbook (it is not a zip archive); save it as an "
                "Excel workbook (.xlsx)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError,
            IndexError, struct.error):
        raise InputError(not_xlsx, file=filename) from None
    if len(infos) > MAX_PARTS:
        raise InputError(f"holds {len(infos):,} parts (at most {MAX_PARTS} are read): not a "
                         "workbook llmsizer wrote", file=filename)
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"part {_part(dup)} appears twice in the archive: the file is damaged",
                         file=filename)
    declared = 0
    for info in infos:
        if info.file_size > MAX_PART_BYTES:
            raise InputError(f"part {_part(info.filename)} unpacks to {info.file_size:,} "
                             f"bytes (at most {MAX_PART_BYTES:,}): not a workbook llmsizer "
                             "wrote", file=filename)
        declared += info.file_size
    if declared > MAX_UNPACKED_BYTES:
        raise InputError(f"unpacks to more than {MAX_UNPACKED_BYTES:,} bytes: not a workbook "
                         "llmsizer wrote", file=filename)
    budget = _Budget(deadline=time.monotonic() + READ_SECONDS)
    for info in infos:
        try:
            _vet_part(archive, info, budget)
        except _Refused as exc:
            raise InputError(f"part {_part(info.filename)} {exc}", file=filename) from None
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError,
                NotImplementedError, RuntimeError, struct.error) as exc:
            raise InputError(f"part {_part(info.filename)} is damaged and cannot be unpacked "
                             f"({short_reason(exc)}); save the workbook again from Excel or "
                             "LibreOffice", file=filename) from None
    if budget.cells > MAX_TOTAL_CELLS:
        raise InputError(f"holds {budget.cells:,} cells (at most {MAX_TOTAL_CELLS:,} are "
                         "read): not a workbook llmsizer wrote", file=filename)


def _part(name: str) -> str:
    return repr(printable(name[:100]))


def short_reason(exc: BaseException) -> str:
    """An exception's first line, printable and at most 80 characters (for one-line refusals)."""
    text = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return text if len(text) <= 80 else text[:77] + "..."


def _vet_part(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> None:
    if info.flag_bits & 0x1:
        raise _Refused("is encrypted: llmsizer re-reads only unprotected workbooks")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _Refused(f"is compressed with method {info.compress_type}, which Excel and "
                       "LibreOffice never write; save the workbook again")
    xml = info.filename.lower().endswith(_XML_SUFFIXES)
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def doctype(*_: Any) -> None:
        raise _Refused("declares a document type (<!DOCTYPE ...>), which can define entities "
                       "(external files, exponential expansion); Excel never writes one")

    def entity(*_: Any) -> Any:
        raise _Refused("declares an XML entity; Excel never writes one")

    def element(tag: str, _attrs: Any) -> None:
        budget.elements += 1
        if tag == "c" or tag.endswith(":c"):
            budget.cells += 1
            if budget.cells > MAX_TOTAL_CELLS:
                raise _Refused(f"holds more than {MAX_TOTAL_CELLS:,} cells: not a workbook "
                               "llmsizer wrote")
        if budget.elements > MAX_ELEMENTS:
            raise _Refused(f"holds more than {MAX_ELEMENTS:,} XML elements: not a workbook "
                           "llmsizer wrote")
        if not budget.elements & 0xFFF:
            budget.tick()

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity
    parser.UnparsedEntityDeclHandler = entity
    parser.ExternalEntityRefHandler = entity
    parser.StartElementHandler = element
    parsing = True
    produced = 0
    with archive.open(info) as handle:
        while True:
            chunk = handle.read(_CHUNK)
            if not chunk:
                break
            produced += len(chunk)
            budget.unpacked += len(chunk)
            if produced > MAX_PART_BYTES or produced > info.file_size:
                raise _Refused(f"unpacks to more than {min(MAX_PART_BYTES, info.file_size):,} "
                               "bytes: not a workbook llmsizer wrote")
            if budget.unpacked > MAX_UNPACKED_BYTES:
                raise _Refused(f"takes the workbook past {MAX_UNPACKED_BYTES:,} unpacked "
                               "bytes: not a workbook llmsizer wrote")
            budget.tick()
            if parsing:
                parsing = _feed(parser, chunk, xml, final=False)
    if parsing:
        _feed(parser, b"", xml, final=True)


def _feed(parser: Any, chunk: bytes, xml: bool, final: bool) -> bool:
    """Parse a chunk; False once a part that is not named as XML turns out not to be XML (an
    image: never parsed as XML by anyone). A part named .xml must be well-formed."""
    try:
        parser.Parse(chunk, final)
    except expat.ExpatError as exc:
        if xml:
            raise _Refused(f"is not well-formed XML (line {exc.lineno}, column {exc.offset}: "
                           f"{expat.ErrorString(exc.code)})") from None
        return False
    return True


# openpyxl's reading steps, run one by one so that a failure names what was being read.
_STEPS = (("read_manifest", "'[Content_Types].xml'"),
          ("read_strings", "the shared strings ('xl/sharedStrings.xml')"),
          ("read_workbook", "the workbook part ('xl/workbook.xml') or its relationships"),
          ("read_properties", "'docProps/core.xml'"),
          ("read_custom", "the custom properties ('docProps/custom.xml')"),
          ("read_theme", "the theme"),
          ("apply_stylesheet", "the styles ('xl/styles.xml')"),
          ("read_worksheets", "the list of worksheets"),
          ("assign_names", "the defined names ('xl/workbook.xml')"))


def open_workbook(path: Path, filename: str) -> Any:
    """The workbook (openpyxl, read-only), after the first pass has vetted its bytes."""
    data = _read_file(path, filename)
    _vet(data, filename)
    from openpyxl.reader.excel import ExcelReader
    from openpyxl.styles.stylesheet import apply_stylesheet

    what = "the archive"
    try:
        reader = ExcelReader(io.BytesIO(data), read_only=True, keep_vba=False,
                             data_only=False, keep_links=False)
        for step, label in _STEPS:
            what = label
            if step == "apply_stylesheet":
                apply_stylesheet(reader.archive, reader.wb)
            elif step == "assign_names":
                reader.parser.assign_names()
            else:
                getattr(reader, step)()
    except InputError:
        raise
    except Exception as exc:  # openpyxl raises many kinds on malformed parts
        raise InputError(f"cannot be read as an .xlsx workbook: {what} is damaged "
                         f"({type(exc).__name__}: {short_reason(exc)}); save it again from "
                         "Excel or LibreOffice", file=filename) from None
    return reader.wb


Cells = dict[str, tuple[Any, str]]  # 'C5' -> (value, openpyxl data type)


def sheet_cells(wb: Any, sheet: str, filename: str) -> Cells:
    """Every cell a sheet's XML holds, streamed once (never padded to the stated dimension):
    coordinate -> (value, data type)."""
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet._reader import WorkSheetParser

    ws = wb[sheet]
    part = getattr(ws, "_worksheet_path", sheet)
    cells: Cells = {}
    try:
        with ws._get_source() as src:
            parser = WorkSheetParser(src, ws._shared_strings, data_only=False,
                                     epoch=wb.epoch, date_formats=wb._date_formats,
                                     timedelta_formats=wb._timedelta_formats)
            for _, row in parser.parse():
                for c in row:
                    cells[f"{get_column_letter(c['column'])}{c['row']}"] = (c["value"],
                                                                           c["data_type"])
    except Exception as exc:
        raise InputError(f"sheet {sheet!r} (part {_part(str(part))}) cannot be read "
                         f"({type(exc).__name__}: {short_reason(exc)}); save the workbook "
                         "again from Excel or LibreOffice", file=filename) from None
    return cells


def custom_properties(wb: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for prop in getattr(wb.custom_doc_props, "props", []):
        if isinstance(prop.name, str) and prop.value is not None:
            out[prop.name] = str(prop.value)
    return out


def defined_names(wb: Any) -> dict[str, str]:
    out = {}
    for name, defn in wb.defined_names.items():
        out[str(name)] = str(defn.attr_text)
    return out
