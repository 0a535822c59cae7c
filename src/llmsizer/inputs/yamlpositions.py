"""Where things are in a requirements file: :class:`Located` (the loaded data with the line
and column of every node), PyYAML's 0-based marks as 1-based positions, and PyYAML's syntax
errors worded as one message at their position, with a hint for the usual culprits (tabs,
inconsistent indentation, unclosed quotes and brackets).
"""

from __future__ import annotations

from typing import Any, TypedDict

from yaml.error import Mark, MarkedYAMLError

from ..base.errors import InputError

Loc = tuple[str | int, ...]
Pos = tuple[int, int]


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


_TAB_HINT = (
    "a tab indents this line, and YAML does not allow tabs for indentation; use spaces "
    "(replace each tab with spaces so the key lines up with the keys it belongs with)"
)

# The parser's context in words: "(the `[` list starts on line 29)", not "(while parsing a
# flow sequence that starts on line 29)" (session 23: a presales engineer reads no parser terms)
_CONTEXT_NAMES = {
    "while parsing a flow sequence": "the `[` list",
    "while parsing a flow mapping": "the `{` mapping",
    "while parsing a block mapping": "the block of keys",
    "while parsing a block collection": "the list",
    "while scanning a quoted scalar": "the quoted text",
    "while scanning a simple key": "the key",
    "while scanning a plain scalar": "the value",
}

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
        "a quote or bracket is opened and never closed",
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
    # a hint that says what is wrong in words replaces the parser's own text ("found character
    # '\t' that cannot start any token", "mapping values are not allowed here")
    worded = False
    if "\\t" in (exc.problem or "") or _tab_in_indentation(text, mark):
        hint, worded = _TAB_HINT, True
    else:
        for fragment, candidate in _PROBLEM_HINTS:
            if fragment in (exc.problem or ""):
                hint, worded = candidate, True
                break
        indent = (
            _indent_hint(text, mark)
            if any(fragment in (exc.problem or "") for fragment in _INDENT_PROBLEMS)
            else None
        )
        if indent is not None:
            where = _where(mark)
            if mark is not None and mark.line < len(lines := text.splitlines()):
                # at the line's first character, the one to move (PyYAML marks the `:`)
                where["column"] = len(lines[mark.line]) - len(lines[mark.line].lstrip(" ")) + 1
            if "mapping values" in (exc.problem or ""):
                indent += "; if the line is meant as one value containing `: `, put it in quotes"
            return InputError(f"not valid YAML: inconsistent indentation: {indent}",
                              file=filename, **where)

    context = ""
    if (
        exc.context
        and exc.context_mark is not None
        and mark is not None
        and exc.context_mark.line != mark.line
    ):
        named = _CONTEXT_NAMES.get(exc.context.strip())
        context = (f" ({named} starts on line {exc.context_mark.line + 1})" if named else
                   f" ({exc.context.strip()} that starts on line {exc.context_mark.line + 1})")
    said = f"{hint}{context}" if worded else f"{problem}{context}; {hint}"
    return InputError(
        f"not valid YAML: {said}",
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
