"""The bytes of a requirements file, checked before YAML sees them (:mod:`.yamlsafe` parses them).

What is refused here, and why:

* files over :data:`MAX_BYTES` (checked before any parsing), empty files, bytes that are not
  UTF-8 (an archive, a PDF or an image is named as such), NUL and other binary control
  characters.
"""

from __future__ import annotations

import difflib
import itertools
import os
import pathlib
import re
from typing import Final

from ..base.errors import InputError
from ..base.textsafe import printable
from .yamlpositions import _line_col

__all__ = ["MAX_BYTES", "checked_text", "read_file"]

MAX_BYTES: Final = 1_000_000
"""Refuse requirement files larger than this many bytes (checked before parsing)."""

_EXAMPLE = "`schema_version: 1`"

# The characters PyYAML's reader accepts (YAML 1.1 "printable"); everything else -- NUL, the
# other C0/C1 control characters, DEL, lone surrogates, U+FFFE/U+FFFF -- is refused up front
# with a position instead of PyYAML's less friendly ReaderError.
_NOT_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def read_file(path: pathlib.Path | str) -> tuple[bytes, str]:
    """The bytes of ``path`` (refused before reading if it is over :data:`MAX_BYTES`) and its
    name as messages show it."""
    p = pathlib.Path(path)
    filename = printable(str(path))
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise _too_large(size, filename)
        # O_NONBLOCK: opening a named pipe that nobody writes to would otherwise hang for
        # ever (a hostile folder can hold a FIFO called acme.yaml); once open, reads block
        # as usual, and a pipe without a writer reads as empty.
        nonblocking = getattr(os, "O_NONBLOCK", 0)  # POSIX only; Windows has no FIFOs here
        fd = os.open(p, os.O_RDONLY | nonblocking)
        with os.fdopen(fd, "rb") as handle:
            if nonblocking:
                os.set_blocking(fd, True)
            data = handle.read(MAX_BYTES + 1)  # special files can report size 0
    except FileNotFoundError:
        raise InputError(
            "file not found: check the path and the file name" + _nearby(p), file=filename
        ) from None
    except IsADirectoryError:
        raise InputError(
            "this is a folder, not a file: give the path of the requirements file", file=filename
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot read the file ({exc.strerror or exc}): check that it exists and that you "
            "may read it",
            file=filename,
        ) from None
    return data, filename


def _nearby(path: pathlib.Path) -> str:
    """The requirement files beside a path not found whose names are close to it (`acme.yml`
    for acme.yaml, a typo), or that its folder is missing: the fix, not only the failure."""
    folder = path.parent
    if not folder.is_dir():
        return f"; the folder {printable(str(folder))} does not exist"
    try:  # a bounded look: a huge folder is not listed whole for a hint
        with os.scandir(folder) as entries:
            names = [e.name for e in itertools.islice(entries, 2000)
                     if e.name.lower().endswith((".yaml", ".yml"))]
    except OSError:
        return ""
    lower = {n.lower(): n for n in names}
    close = [lower[c] for c in difflib.get_close_matches(path.name.lower(), lower, n=2,
                                                          cutoff=0.8)]
    return printable(f" (did you mean {' or '.join(close)}?)") if close else ""


def checked_text(text: str | bytes, filename: str) -> str:
    """``text`` as the string the YAML parser gets: within :data:`MAX_BYTES`, UTF-8 when given
    as bytes, not empty, no control characters; a byte-order mark removed."""
    if isinstance(text, bytes | bytearray):
        if len(text) > MAX_BYTES:
            raise _too_large(len(text), filename)
        text = _decode(bytes(text), filename)
    else:
        # characters <= bytes, so this cheap test catches most oversized strings unencoded
        if len(text) > MAX_BYTES:
            raise _too_large(len(text.encode("utf-8", "surrogatepass")), filename)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_BYTES:
            raise _too_large(size, filename)
    if text.startswith("\ufeff"):  # a byte-order mark; PyYAML would skip it, but columns shift
        text = text[1:]

    if not text.strip():
        raise InputError(
            f"file is empty: expected a mapping such as {_EXAMPLE} followed by the other "
            "requirements, one `key: value` per line",
            file=filename,
        )
    bad = _NOT_PRINTABLE.search(text)
    if bad is not None:
        line, column = _line_col(text, bad.start())
        char = bad.group()
        what = "a NUL byte" if char == "\x00" else f"the control character U+{ord(char):04X}"
        raise InputError(
            f"file contains {what}, so it is not a plain text file (binary data or a bad "
            "copy-paste); save it as plain UTF-8 text or delete the character",
            file=filename,
            line=line,
            column=column,
        )
    odd = _YAML_ONLY_BREAK.search(text)
    if odd is not None:
        line, column = _line_col(text, odd.start())
        raise InputError(
            f"file contains {_BREAK_NAMES[odd.group()]}, an invisible character that YAML reads "
            "as a line break although editors show none (it comes with text copied from a web "
            "page, a PDF or a word processor): delete it or type a space in its place",
            file=filename,
            line=line,
            column=column,
        )
    return text


# YAML 1.1 (PyYAML) breaks lines at these too: a name holding one split in two, the error
# named a line the editor did not show, and every later line number was off by one.
_YAML_ONLY_BREAK = re.compile("[\x85\u2028\u2029]")
_BREAK_NAMES = {"\x85": "the next-line character U+0085", "\u2028": "the line separator U+2028",
                "\u2029": "the paragraph separator U+2029"}


def _too_large(size: int, filename: str) -> InputError:
    return InputError(
        f"file is too large ({size:,} bytes; the limit is {MAX_BYTES:,}): a requirements file "
        "is normally a few kilobytes, so check that this is the right file",
        file=filename,
    )


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a ZIP archive (an .xlsx, .docx or .zip file?)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"\xd0\xcf\x11\xe0", "an old Office document (.xls or .doc?)"),
    (b"\x7fELF", "a program (ELF executable)"),
    (b"\x1f\x8b", "a gzip archive"),
)


def _decode(data: bytes, filename: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(
            "file is saved as UTF-16, not UTF-8: save it again choosing the UTF-8 encoding",
            file=filename,
            line=1,
            column=1,
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        kind = next((what for magic, what in _MAGIC if data.startswith(magic)), None)
        if kind is not None or b"\x00" in data[:8192]:
            raise InputError(
                f"this is {kind or 'binary data'}, not a YAML text file: give the path of the "
                "requirements .yaml file (written as in inputs/example.yaml)",
                file=filename,
            ) from None
        offset = exc.start
        line_start = data.rfind(b"\n", 0, offset) + 1
        line = data.count(b"\n", 0, offset) + 1
        column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
        raise InputError(
            f"file is not valid UTF-8 text: byte 0x{data[offset]:02X} at byte offset {offset} "
            f"(line {line}) cannot be read; save the file with the UTF-8 encoding "
            "(e.g. 'Save as… → Encoding: UTF-8')",
            file=filename,
            line=line,
            column=column,
        ) from None
