"""A strict, safe YAML loader for hand-written (and possibly hostile) requirement files.

    located = load_file("acme.yaml")        # or load_text(text_or_bytes, "acme.yaml")
    located.data                             # plain dict / list / str / int / float / bool / None
    located.position(("workloads", 1, "output_tokens"))   # -> (12, 5), 1-based line, column

Everything a user can get wrong raises :class:`~llmsizer.base.errors.InputError` with the file,
the 1-based line and column, and a one-line message that says how to fix it.

What is refused, and why:

* files over :data:`MAX_BYTES` (checked before any parsing), empty files, bytes that are not
  UTF-8, NUL and other binary control characters;
* anything PyYAML cannot parse (with a hint for the usual culprits, tabs above all), several
  documents in one file, and a top level that is not a ``key: value`` mapping;
* anchors, aliases and merge keys (``&a``, ``*a``, ``<<:``): aliases share objects, so a
  few hundred bytes can expand into gigabytes once anything walks the data ("billion laughs");
* explicit tags (``!!python/object``, ``!foo``, ``!!str``);
* duplicate keys (PyYAML silently keeps the last one) and keys that are not text;
* more than :data:`MAX_NODES` values (a dense 1 MB file would take PyYAML ~10 s);
* nesting deeper than :data:`MAX_DEPTH`. PyYAML's composer recurses once per level (and
  libyaml's ``CSafeLoader`` segfaults near 30,000 levels), so depth is checked on the event
  stream: every event is inspected as the parser produces it, *before* the composer sees it,
  and the composer never gets an event deeper than ``MAX_DEPTH``. The parser and scanner
  themselves are iterative, so a 10,000-deep file is refused in milliseconds.

Scalars are resolved with a YAML 1.2-core-like table instead of YAML 1.1's, to avoid its
surprises (only *plain*, i.e. unquoted, scalars are resolved; quoted ones are always text):

* booleans: only ``true`` / ``false`` in any case; ``yes``, ``no``, ``on``, ``off``, ``y``,
  ``n`` stay text (so Norway's ``NO`` stays ``"NO"``);
* null: ``null``, ``Null``, ``NULL``, ``~`` and an empty value;
* integers: decimal only, optionally signed, no ``_`` separators. A number with a leading
  zero (``010``) stays the *text* ``"010"``: ids keep the digits as written, and a numeric
  field reports a type error instead of silently reading 8 (YAML 1.1) or 10. Hex ``0x1F``,
  octal ``0o17`` and sexagesimal ``1:20`` stay text too;
* floats: plain decimals (``1.5``, ``.5``, ``1.``, ``1e3``, ``-2.5E-3``; no leading zero
  before the point other than ``0.x``) and ``.inf`` / ``-.inf`` / ``.nan`` (any of the core
  schema's spellings; the schema rejects them later). Note ``1.10`` is the float ``1.1``:
  a version-like value must be quoted (``version: "1.10"``);
* everything else, timestamps included (``2024-01-31``), is text.

Positions: the node tree is composed once and the data and a position index are built from
it; :meth:`Located.position` maps a pydantic error ``loc`` back to a line and column.
"""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Callable
from typing import Any, ClassVar, Final, NoReturn, TypedDict

import yaml
from yaml.error import Mark, MarkedYAMLError, YAMLError
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    NodeEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..base.errors import InputError
from ..base.textsafe import printable

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "Located", "load_file", "load_text"]

MAX_BYTES: Final = 1_000_000
"""Refuse requirement files larger than this many bytes (checked before parsing)."""

MAX_DEPTH: Final = 40
"""Refuse nesting deeper than this many mappings/lists (the top-level mapping is level 1)."""

MAX_NODES: Final = 20_000
"""Refuse files with more values than this (keys, values and list items all count). A full
requirements file with 50 workloads has about 1,000; the cap stops a dense 1 MB file early,
which pure-Python PyYAML would otherwise take ~10 s to parse."""

Loc = tuple[str | int, ...]
Pos = tuple[int, int]

_EXAMPLE = "`schema_version: 1`"

_STR_TAG: Final = "tag:yaml.org,2002:str"
_INT_TAG: Final = "tag:yaml.org,2002:int"
_FLOAT_TAG: Final = "tag:yaml.org,2002:float"
_BOOL_TAG: Final = "tag:yaml.org,2002:bool"
_NULL_TAG: Final = "tag:yaml.org,2002:null"

# The characters PyYAML's reader accepts (YAML 1.1 "printable"); everything else -- NUL, the
# other C0/C1 control characters, DEL, lone surrogates, U+FFFE/U+FFFF -- is refused up front
# with a position instead of PyYAML's less friendly ReaderError.
_NOT_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)

_INT_RE = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT_RE = re.compile(
    r"""^(?:
        [-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?
      | [-+]?\.(?:inf|Inf|INF)
      | \.(?:nan|NaN|NAN)
    )$""",
    re.VERBOSE,
)
_BOOL_RE = re.compile(r"^(?i:true|false)$")
_NULL_RE = re.compile(r"^(?:~|null|Null|NULL|)$")


# --------------------------------------------------------------------------- the loader


def _construct_str(loader: _StrictLoader, node: ScalarNode) -> str:
    return str(node.value)


def _construct_null(loader: _StrictLoader, node: ScalarNode) -> None:
    return None


def _construct_bool(loader: _StrictLoader, node: ScalarNode) -> bool:
    return str(node.value).lower() == "true"


def _construct_int(loader: _StrictLoader, node: ScalarNode) -> int:
    try:
        return int(node.value)
    except ValueError:  # more digits than Python's int-from-text limit (4300)
        raise InputError(
            f"the number starting {node.value[:20]}… has too many digits; "
            "write a realistic number, or put it in quotes if it is an id",
            file=loader.filename,
            **_where(node.start_mark),
        ) from None


def _construct_float(loader: _StrictLoader, node: ScalarNode) -> float:
    text = str(node.value).lower()
    if text.endswith((".inf", ".nan")):
        text = text.replace(".", "", 1)
    return float(text)


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader (pure Python) with a YAML 1.2-core-like resolver, only the five plain
    constructors, and a hook that vets every parser event before the composer sees it."""

    # Fresh tables: nothing is inherited from SafeLoader's YAML 1.1 resolvers/constructors.
    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 - PyYAML's class-level table
    yaml_path_resolvers: dict[Any, Any] = {}  # noqa: RUF012
    yaml_constructors: ClassVar[dict[Any, Any]] = {}
    yaml_multi_constructors: ClassVar[dict[Any, Any]] = {}

    def __init__(self, text: str, filename: str) -> None:
        super().__init__(text)
        self.filename = filename
        self._depth = 0
        self._documents = 0
        self._nodes = 0

    # -- event vetting -------------------------------------------------------------------

    def _pull(self) -> None:
        if self.current_event is None and self.state:
            event = self.state()
            self._vet(event)
            self.current_event = event

    def check_event(self, *choices: Any) -> bool:
        self._pull()
        return bool(super().check_event(*choices))

    def peek_event(self) -> Any:
        self._pull()
        return super().peek_event()  # type: ignore[no-untyped-call]

    def get_event(self) -> Any:
        self._pull()
        return super().get_event()  # type: ignore[no-untyped-call]

    def _vet(self, event: Event) -> None:
        mark = event.start_mark
        if isinstance(event, AliasEvent):
            self._refuse(
                f"anchors/aliases are not allowed in requirement files (found the alias "
                f"`*{event.anchor}`); write the value out in full instead of referring to it",
                mark,
            )
        if isinstance(event, NodeEvent) and event.anchor is not None:
            self._refuse(
                f"anchors/aliases are not allowed in requirement files (found the anchor "
                f"`&{event.anchor}`); remove it and write repeated values out in full",
                mark,
            )
        if isinstance(event, NodeEvent):
            self._nodes += 1
            if self._nodes > MAX_NODES:
                self._refuse(
                    f"the file holds more than {MAX_NODES:,} values; a requirements file needs "
                    "a few hundred (at most 50 workloads): check that this is the right file",
                    mark,
                )
        tag = getattr(event, "tag", None)
        if tag is not None:
            shown = "!!" + tag[len("tag:yaml.org,2002:") :] if tag.startswith("tag:yaml") else tag
            self._refuse(
                f"explicit tags such as `{shown}` are not allowed in requirement files; "
                "remove the tag (put the value in quotes if it should be text)",
                mark,
            )
        if isinstance(event, DocumentStartEvent):
            self._documents += 1
            if self._documents > 1:
                self._refuse(
                    "the file contains more than one YAML document (a second `---` starts "
                    "here); keep one document per file, or remove the extra `---` line",
                    mark,
                )
        elif isinstance(event, CollectionStartEvent):
            self._depth += 1
            if self._depth > MAX_DEPTH:
                self._refuse(
                    f"the file nests mappings/lists more than {MAX_DEPTH} levels deep; "
                    "requirement files need only a few levels: check the indentation and "
                    "that every `[` or `{` is closed",
                    mark,
                )
        elif isinstance(event, CollectionEndEvent):
            self._depth -= 1

    def _refuse(self, message: str, mark: Mark | Any) -> NoReturn:
        raise InputError(message, file=self.filename, **_where(mark))


_StrictLoader.add_implicit_resolver(_BOOL_TAG, _BOOL_RE, list("tTfF"))
_StrictLoader.add_implicit_resolver(_NULL_TAG, _NULL_RE, ["~", "n", "N", ""])
_StrictLoader.add_implicit_resolver(_INT_TAG, _INT_RE, list("-+0123456789"))
_StrictLoader.add_implicit_resolver(_FLOAT_TAG, _FLOAT_RE, list("-+0123456789."))

_CONSTRUCTORS: dict[str, Callable[[_StrictLoader, ScalarNode], Any]] = {
    _STR_TAG: _construct_str,
    _NULL_TAG: _construct_null,
    _BOOL_TAG: _construct_bool,
    _INT_TAG: _construct_int,
    _FLOAT_TAG: _construct_float,
}
for _tag, _constructor in _CONSTRUCTORS.items():
    _StrictLoader.add_constructor(_tag, _constructor)


# --------------------------------------------------------------------------- the result


class Located:
    """The loaded data plus where each node came from.

    ``data`` is plain Python (dict / list / str / int / float / bool / None).
    """

    __slots__ = ("_index", "_raw", "data", "filename")

    def __init__(
        self,
        data: Any,
        index: dict[Loc, tuple[Pos, Pos | None]],
        filename: str,
        raw: dict[Loc, str] | None = None,
    ):
        self.data: Any = data
        self.filename = filename
        # path -> (position of the node itself, position of its key when it is a mapping value)
        self._index = index
        # path -> the scalar as written, for plain scalars read as a number, boolean or null
        self._raw = raw or {}

    def source_text(self, loc: tuple[str | int, ...]) -> str | None:
        """The text of the plain scalar at ``loc`` as written in the file, when it was read as
        a number, boolean or null (``version: 1.10`` -> ``"1.10"`` although the data holds
        ``1.1``); ``None`` for text, collections and paths that do not exist."""
        return self._raw.get(tuple(loc))

    def position(self, loc: tuple[str | int, ...]) -> tuple[int, int] | None:
        """1-based ``(line, column)`` for a path such as ``("workloads", 1, "output_tokens")``
        (a pydantic error's ``loc``).

        * a mapping entry -> the position of its key (so an extra/unknown key points at
          itself, and a nested block points at its ``key:`` line, not the line below);
        * a list item -> the position of the item itself;
        * a path that does not exist (a missing key, or a pydantic-internal loc element) ->
          the position of the deepest existing parent, as above; ``()`` is the whole file.

        Returns ``None`` only when nothing at all is known (never for a loaded file).
        """
        path = tuple(loc)
        for n in range(len(path), -1, -1):
            prefix = path[:n]
            if any(isinstance(part, bool) for part in prefix):  # True == 1 would match index 1
                continue
            entry = self._index.get(prefix)
            if entry is not None:
                node_pos, key_pos = entry
                return key_pos if key_pos is not None else node_pos
        return None

    def __repr__(self) -> str:
        return f"Located({self.filename!r}, data={self.data!r})"


# --------------------------------------------------------------------------- loading


def load_file(path: pathlib.Path | str) -> Located:
    """Read ``path`` as bytes (refusing it before reading if it is over :data:`MAX_BYTES`)
    and load it with :func:`load_text`."""
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
            "file not found: check the path and the file name", file=filename
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
    return load_text(data, filename)


def load_text(text: str | bytes, filename: str) -> Located:
    """Load one requirement document from ``text`` (``bytes`` must be UTF-8)."""
    filename = printable(filename)
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

    loader = _StrictLoader(text, filename)
    try:
        try:
            root = loader.get_single_node()
        except MarkedYAMLError as exc:
            raise _yaml_error(exc, text, filename) from None
        except YAMLError as exc:  # pragma: no cover - the checks above pre-empt ReaderError
            raise InputError(f"not valid YAML: {exc}", file=filename) from None
        if root is None:
            raise InputError(
                f"file has no content (only comments): expected a mapping such as {_EXAMPLE} "
                "followed by the other requirements",
                file=filename,
            )
        if not isinstance(root, MappingNode):
            raise InputError(
                "the top level of the file must be a mapping of `key: value` lines (such as "
                f"{_EXAMPLE}), but it is {_describe(loader, root)}; "
                "put the requirements under named keys",
                file=filename,
                **_where(root.start_mark),
            )
        index: dict[Loc, tuple[Pos, Pos | None]] = {}
        raw: dict[Loc, str] = {}
        data = _build(loader, root, (), None, index, raw)
    finally:
        loader.dispose()
    return Located(data, index, filename, raw)


# --------------------------------------------------------------------------- helpers


def _build(
    loader: _StrictLoader,
    node: Node,
    path: Loc,
    key_pos: Pos | None,
    index: dict[Loc, tuple[Pos, Pos | None]],
    raw: dict[Loc, str],
) -> Any:
    """Plain data from a composed node, recording positions (and the text of non-text plain
    scalars). Recursion is bounded: the event vetting guarantees at most MAX_DEPTH nested
    collections."""
    index[path] = (_pos(node.start_mark), key_pos)
    if isinstance(node, ScalarNode):
        value = _scalar(loader, node)
        if not isinstance(value, str) and node.style is None:
            raw[path] = str(node.value)
        return value
    if isinstance(node, SequenceNode):
        return [
            _build(loader, item, (*path, i), None, index, raw) for i, item in enumerate(node.value)
        ]
    if isinstance(node, MappingNode):
        result: dict[str, Any] = {}
        first_seen: dict[str, Node] = {}
        for key_node, value_node in node.value:
            key = _key(loader, key_node)
            if key in first_seen:
                first_line = first_seen[key].start_mark.line + 1
                raise InputError(
                    f"duplicate key {key!r} (first on line {first_line}, again on line "
                    f"{key_node.start_mark.line + 1}); YAML would silently keep only the "
                    "last one: remove or rename one of them",
                    file=loader.filename,
                    **_where(key_node.start_mark),
                )
            first_seen[key] = key_node
            result[key] = _build(
                loader, value_node, (*path, key), _pos(key_node.start_mark), index, raw
            )
        return result
    raise AssertionError(f"unexpected YAML node {node!r}")  # pragma: no cover


def _key(loader: _StrictLoader, node: Node) -> str:
    if isinstance(node, ScalarNode) and node.tag == _STR_TAG:
        if node.value == "<<" and node.style is None:
            raise InputError(
                "merge keys (`<<:`) and anchors/aliases are not allowed in requirement files; "
                "write the keys out in full",
                file=loader.filename,
                **_where(node.start_mark),
            )
        return str(node.value)
    if isinstance(node, ScalarNode) and node.value == "":
        raise InputError(
            "a key is empty: every entry needs a name before its `:` (`name: value`)",
            file=loader.filename,
            **_where(node.start_mark),
        )
    if isinstance(node, ScalarNode):
        raise InputError(
            f"the key {node.value} is read as {_describe(loader, node)}, not as text; keys must "
            f'be names: put it in quotes ("{node.value}":) if it is meant as a name',
            file=loader.filename,
            **_where(node.start_mark),
        )
    raise InputError(
        f"a key must be a plain name, not {_describe(loader, node)}; "
        "use `name: value` lines (a `?` starts a complex key, which is not supported)",
        file=loader.filename,
        **_where(node.start_mark),
    )


def _scalar(loader: _StrictLoader, node: ScalarNode) -> Any:
    constructor = _CONSTRUCTORS.get(node.tag)
    if constructor is None:  # pragma: no cover - explicit tags are refused while parsing
        raise InputError(
            f"unsupported value type {node.tag}", file=loader.filename, **_where(node.start_mark)
        )
    return constructor(loader, node)


def _describe(loader: _StrictLoader, node: Node) -> str:
    if isinstance(node, SequenceNode):
        return "a list"
    if isinstance(node, MappingNode):
        return "a mapping"
    value = _scalar(loader, node) if isinstance(node, ScalarNode) else None
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"the boolean {node.value}"
    if isinstance(value, int | float):
        return f"the number {node.value}"
    text = str(value)
    return f"the text {text[:40]!r}" + ("…" if len(text) > 40 else "")


def _pos(mark: Mark | Any) -> Pos:
    return (int(mark.line) + 1, int(mark.column) + 1)


class _Where(TypedDict, total=False):
    line: int
    column: int


def _where(mark: Mark | Any) -> _Where:
    """``line=``/``column=`` keyword arguments for InputError from a 0-based PyYAML mark."""
    if mark is None:  # pragma: no cover - the pure-Python parser always sets marks
        return {}
    line, column = _pos(mark)
    return {"line": line, "column": column}


def _line_col(text: str, index: int) -> Pos:
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


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


_TAB_HINT = (
    "YAML does not allow tabs for indentation; use spaces (replace each tab with spaces so the "
    "key lines up with the keys it belongs with)"
)

_PROBLEM_HINTS: tuple[tuple[str, str], ...] = (
    (
        "mapping values are not allowed here",
        "a value contains `: ` or the line is indented too far: put the value in quotes, "
        "or line the key up with the keys above it",
    ),
    (
        "could not find expected ':'",
        "every line needs the form `key: value`: add the missing `:` or close the quote",
    ),
    (
        "found unexpected end of stream",
        "a quote or bracket opened here is never closed",
    ),
    (
        "expected <block end>",
        "check the indentation: entries at the same level must start in the same column",
    ),
    (
        "expected ',' or ']'",
        "a `[` list is not closed with `]`, or its items are not separated by commas",
    ),
    (
        "expected ',' or '}'",
        "a `{` mapping is not closed with `}`, or its entries are not separated by commas",
    ),
    (
        "did not find expected '-' indicator",
        "list items (`- `) at the same level must start in the same column",
    ),
    (
        "did not find expected key",
        "check the indentation: keys at the same level must start in the same column",
    ),
)

_TOKEN_NAMES = {
    "<block end>": "the end of the indented block",
    "<block mapping start>": "a more indented key",
    "<block sequence start>": "a more indented list",
    "<stream end>": "the end of the file",
    "<document start>": "`---`",
    "<document end>": "`...`",
    "<scalar>": "a value",
}


def _yaml_error(exc: MarkedYAMLError, text: str, filename: str) -> InputError:
    mark = exc.problem_mark or exc.context_mark
    problem = (exc.problem or exc.context or "unreadable YAML").strip()
    for token, name in _TOKEN_NAMES.items():
        problem = problem.replace(f"'{token}'", name).replace(token, name)
    problem = problem.replace("'\\t'", "'tab'")

    hint = "check this line for a typo in the indentation, quotes or brackets"
    if "\\t" in (exc.problem or "") or _tab_in_indentation(text, mark):
        hint = _TAB_HINT
    else:
        for fragment, candidate in _PROBLEM_HINTS:
            if fragment in (exc.problem or ""):
                hint = candidate
                break
        indent = (
            _indent_hint(text, mark)
            if any(fragment in (exc.problem or "") for fragment in _INDENT_PROBLEMS)
            else None
        )
        if indent is not None:
            where = _where(mark)
            if "mapping values" in (exc.problem or ""):
                indent += " (if the line is meant as one value containing `: `, put it in quotes)"
            return InputError(f"not valid YAML: inconsistent indentation: {indent}",
                              file=filename, **where)

    context = ""
    if (
        exc.context
        and exc.context_mark is not None
        and mark is not None
        and exc.context_mark.line != mark.line
    ):
        context = f" ({exc.context.strip()} that starts on line {exc.context_mark.line + 1})"
    return InputError(
        f"not valid YAML: {problem}{context}; {hint}",
        file=filename,
        **_where(mark),
    )


_INDENT_PROBLEMS = (
    "mapping values are not allowed here",
    "expected <block end>",
    "did not find expected key",
    "did not find expected '-' indicator",
)


def _indent_hint(text: str, mark: Mark | None) -> str | None:
    """When the problem line is indented differently from the line above it (and that line
    does not open a block), say so with both lines and their indentation in spaces."""
    if mark is None:
        return None
    lines = text.splitlines()
    n = mark.line
    # the problem may be reported at the start of the next line: use the last content line
    while n >= 0 and (n >= len(lines) or not lines[n].strip() or lines[n].lstrip().startswith("#")):
        n -= 1
    prev = n - 1
    while prev >= 0 and (not lines[prev].strip() or lines[prev].lstrip().startswith("#")):
        prev -= 1
    if n < 0 or prev < 0:
        return None
    here, above = lines[n], lines[prev]
    indent = len(here) - len(here.lstrip(" "))
    above_indent = len(above) - len(above.lstrip(" "))
    body = above.lstrip(" ")
    levels = {above_indent}
    while body.startswith("- "):  # list items: the item's keys start after the dash
        stripped = body[2:].lstrip(" ")
        above_indent += len(body) - len(stripped)
        levels.add(above_indent)
        body = stripped
    if indent in levels or body.split("#", 1)[0].rstrip().endswith(":"):
        return None
    return (
        f"line {n + 1} is indented {_spaces(indent)}, line {prev + 1} above it "
        f"{_spaces(max(levels))}; keys at the same level must start in the same column, so "
        f"indent line {n + 1} like the keys it belongs with (spaces only)"
    )


def _spaces(n: int) -> str:
    return f"{n} space" + ("" if n == 1 else "s")


def _tab_in_indentation(text: str, mark: Mark | None) -> bool:
    """True when the problem line (or the line before it) is indented with a tab."""
    if mark is None:
        return False
    lines = text.splitlines()
    for n in (mark.line, mark.line - 1):
        if 0 <= n < len(lines):
            line = lines[n]
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            if "\t" in indent:
                return True
    return False
