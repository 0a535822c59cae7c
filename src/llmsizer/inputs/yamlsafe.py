"""A strict, safe YAML loader for hand-written (and possibly hostile) requirement files.

    located = load_file("acme.yaml")        # or load_text(text_or_bytes, "acme.yaml")
    located.data                             # plain dict / list / str / int / float / bool / None
    located.position(("workloads", 1, "output_tokens"))   # -> (12, 5), 1-based line, column

Everything a user can get wrong raises :class:`~llmsizer.base.errors.InputError` with the file,
the 1-based line and column, and a one-line message that says how to fix it. The bytes are
checked first (:mod:`.yamlfile`: size, encoding, control characters); :mod:`.yamlpositions`
holds :class:`Located` and words what PyYAML cannot parse.

What is refused here, and why:

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
it; :meth:`~.yamlpositions.Located.position` maps a pydantic error ``loc`` back to a
line and column.
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable
from typing import Any, ClassVar, Final, NoReturn

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

from ..base.errors import InputError, combined
from ..base.textsafe import printable
from .yamlfile import _EXAMPLE, checked_text, read_file
from .yamlpositions import Loc, Located, Pos, _pos, _where, _yaml_error

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "MAX_NODES", "load_file", "load_text"]

MAX_DEPTH: Final = 40
"""Refuse nesting deeper than this many mappings/lists (the top-level mapping is level 1)."""

MAX_NODES: Final = 20_000
"""Refuse files with more values than this (keys, values and list items all count). A full
requirements file with 50 workloads has about 1,000; the cap stops a dense 1 MB file early,
which pure-Python PyYAML would otherwise take ~10 s to parse."""

MAX_INT_DIGITS: Final = 100
"""Refuse plain integers with more digits than this. Every numeric field's range ends far
below 10**100, so the schema would refuse them anyway, but only after Python has had to turn
them into floats (which overflows past 309 digits: issue 25, F3)."""

_STR_TAG: Final = "tag:yaml.org,2002:str"
_INT_TAG: Final = "tag:yaml.org,2002:int"
_FLOAT_TAG: Final = "tag:yaml.org,2002:float"
_BOOL_TAG: Final = "tag:yaml.org,2002:bool"
_NULL_TAG: Final = "tag:yaml.org,2002:null"

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
        if len(node.value.lstrip("+-")) > MAX_INT_DIGITS:
            raise ValueError  # bounded before conversion, like Python's own 4,300 digits
        return int(node.value)
    except ValueError:
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
        self.problems: list[InputError] = []  # the tree's problems, told at once (issue 25)

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


# --------------------------------------------------------------------------- loading


def load_file(path: pathlib.Path | str) -> Located:
    """Read ``path`` as bytes (refusing it before reading if it is over :data:`~.yamlfile.MAX_BYTES`)
    and load it with :func:`load_text`."""
    data, filename = read_file(path)
    return load_text(data, filename)


def load_text(text: str | bytes, filename: str) -> Located:
    """Load one requirement document from ``text`` (``bytes`` must be UTF-8)."""
    filename = printable(filename)
    text = checked_text(text, filename)

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
        if loader.problems:
            raise combined(loader.problems)
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
        try:
            value = _scalar(loader, node)
        except InputError as exc:
            loader.problems.append(exc)
            return None
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
        for i, (key_node, value_node) in enumerate(node.value):
            split = _split_number(node, i)
            if split is not None:
                loader.problems.append(InputError(split, file=loader.filename,
                                                  **_where(key_node.start_mark)))
                continue
            try:
                key = _key(loader, key_node)
            except InputError as exc:
                loader.problems.append(exc)
                continue
            if key in first_seen:
                first_line = first_seen[key].start_mark.line + 1
                loader.problems.append(InputError(
                    f"duplicate key {key!r} (first on line {first_line}, again on line "
                    f"{key_node.start_mark.line + 1}); YAML would silently keep only the "
                    "last one: remove or rename one of them",
                    file=loader.filename,
                    **_where(key_node.start_mark),
                ))
                continue
            first_seen[key] = key_node
            result[key] = _build(
                loader, value_node, (*path, key), _pos(key_node.start_mark), index, raw
            )
        return result
    raise AssertionError(f"unexpected YAML node {node!r}")  # pragma: no cover


def _split_number(node: MappingNode, i: int) -> str | None:
    """The message for `{h100-sxm: 27,000}`: inside braces the comma of a thousands
    separator ends the entry, leaving `h100-sxm: 27` and a key `000` without a value; None
    when the i-th key is no such fragment."""
    key, value = node.value[i]
    if not node.flow_style or i == 0 or not isinstance(key, ScalarNode) \
            or key.style is not None or not re.fullmatch(r"\d{3}(?:\.\d+)?", key.value) \
            or not isinstance(value, ScalarNode) or value.value != "":
        return None
    before_key, before = node.value[i - 1]
    if not isinstance(before, ScalarNode) or before.style is not None \
            or not re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})*", before.value) \
            or key.start_mark.index != before.end_mark.index + 1:  # `27,000`, not `27, 000`
        return None
    name = before_key.value if isinstance(before_key, ScalarNode) else "key"
    return (f"`{name}: {before.value},{key.value}` has a thousands separator: inside {{ }} a "
            f"comma separates entries, so it reads as `{name}: {before.value}` and a key "
            f"{key.value}; write `{name}: {before.value}{key.value}` without the comma")


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
