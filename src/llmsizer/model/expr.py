"""A tiny expression language: each sizing formula is written once, evaluated in
Python by the engine and printed as an Excel formula by the workbook writer.

Nodes: numbers, strings, named references, binary operators (+ - * / and the
comparisons < <= > >= = <>), calls to a closed table of functions, and catalog
lookups. Build them with ordinary Python operators: ``ref("a") * 2 + ref("b")``.

Traps, written down so nobody rediscovers them:

* ``ROUNDUP``/``ROUNDDOWN`` first reduce a non-integer to 12 significant digits in
  LibreOffice 7.4 (measured: docs/libreoffice-findings.md); ``_directed`` does the same, so
  ``0.1*3/0.1`` rounds up to 3, not 4 as ``math.ceil`` would give. Keep their arguments
  below ~1e11, where Excel (15 digits) and LibreOffice (12) would disagree.
* Python ``round`` is banker's rounding; Excel ``ROUND`` rounds halves away from zero.
  ``ROUND`` is therefore not in the table: use ROUNDUP/ROUNDDOWN.
* ``LOG(x)`` in Excel is base 10 and ``LN`` natural; our LOG always takes the base.
* ``-2^2`` is 4 in Excel (unary minus binds first). Negative numbers are printed in
  parentheses and there is no unary minus node.
* Defined names that look like cells (``H100``, ``TP8``) are cell references: the
  workbook writer prefixes every name (``in_``, ``c_``).
* Excel's ``IF`` is lazy; so is ours, which is what makes ``IF(x>0, a/x, 0)`` safe.
* String comparison ``"FP8"="fp8"`` is case-insensitive in spreadsheets; ids here are
  lower-case, and the Python side compares case-insensitively too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

Value: TypeAlias = float | str
Operand: TypeAlias = "Expr | float | int | str"


class Expr:
    """Base node. Arithmetic operators build new nodes."""

    def __add__(self, other: Operand) -> Expr:
        return Bin("+", self, lift(other))

    def __radd__(self, other: Operand) -> Expr:
        return Bin("+", lift(other), self)

    def __sub__(self, other: Operand) -> Expr:
        return Bin("-", self, lift(other))

    def __rsub__(self, other: Operand) -> Expr:
        return Bin("-", lift(other), self)

    def __mul__(self, other: Operand) -> Expr:
        return Bin("*", self, lift(other))

    def __rmul__(self, other: Operand) -> Expr:
        return Bin("*", lift(other), self)

    def __truediv__(self, other: Operand) -> Expr:
        return Bin("/", self, lift(other))

    def __rtruediv__(self, other: Operand) -> Expr:
        return Bin("/", lift(other), self)


@dataclass(frozen=True, eq=False)
class Num(Expr):
    value: float


@dataclass(frozen=True, eq=False)
class Text(Expr):
    value: str


@dataclass(frozen=True, eq=False)
class Ref(Expr):
    name: str


@dataclass(frozen=True, eq=False)
class Bin(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, eq=False)
class Call(Expr):
    fn: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Lookup(Expr):
    """``table[key][column]``: a catalog value chosen by an input (GPU, precision).

    In a spreadsheet it becomes :func:`.sheetlookup.lookup_formula`: ``VLOOKUP`` of the key in the
    table's ids, exact match, so an id that is not in the table is ``#N/A`` there, as it is
    :class:`EvalError` here (never another row's value)."""

    table: str
    key: Ref
    column: str


def lift(x: Operand) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, str):
        return Text(x)
    return Num(float(x))


def ref(name: str) -> Ref:
    return Ref(name)


def lookup(table: str, key: str, column: str) -> Lookup:
    return Lookup(table, Ref(key), column)


def _cmp(op: str) -> Callable[[Operand, Operand], Expr]:
    def build(a: Operand, b: Operand) -> Expr:
        return Bin(op, lift(a), lift(b))

    return build


lt, le, gt, ge, eq, ne = (_cmp(o) for o in ("<", "<=", ">", ">=", "=", "<>"))


def _call(fn: str) -> Callable[..., Expr]:
    def build(*args: Operand) -> Expr:
        spec = FUNCTIONS[fn]
        if not spec.min_args <= len(args) <= spec.max_args:
            raise TypeError(f"{fn} takes {spec.min_args}..{spec.max_args} arguments")
        return Call(fn, tuple(lift(a) for a in args))

    return build


# --- the closed function table -------------------------------------------------------


def _snap(x: float, digits: int) -> float:
    """|x| rounded to ``digits`` significant digits (0 and non-finite unchanged)."""
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def _directed(x: float, digits: float, up: bool) -> float:
    """ROUNDUP (away from zero) / ROUNDDOWN (towards zero) as LibreOffice 7.4 computes
    them (measured, docs/libreoffice-findings.md): a non-integer is first rounded to 12
    significant digits, the scaled value to 15, then ceil/floor.

    Whole-number rounding (every ROUNDUP/ROUNDDOWN of the list) skips the two decimal
    round trips where they cannot change the answer, with the same result
    (tests/test_expr.py checks it against :func:`_directed_exact`): an integer below 1e15
    is itself; a non-integer further than 1e-11 of itself from both neighbouring integers
    stays strictly between them after rounding to 12 digits (which moves it at most
    0.5e-11 of itself), and a 12-digit decimal survives the 15-digit round trip."""
    a = abs(x)
    if digits == 0 and a < 1e15:
        if a.is_integer():
            r = a
        elif a > 1e-300:
            f = math.floor(a)
            margin = 1e-11 * a
            if a - f <= margin or f + 1 - a <= margin:
                return _directed_exact(x, digits, up)
            r = float(f + 1 if up else f)
        else:
            return _directed_exact(x, digits, up)
        return math.copysign(r, x) if r else 0.0
    return _directed_exact(x, digits, up)


def _directed_exact(x: float, digits: float, up: bool) -> float:
    """:func:`_directed` the long way, for every case (the reference it is tested against)."""
    d = int(digits)
    a = abs(x)
    if d < 12 and not a.is_integer():
        a = _snap(a, 12)
    scale = 10.0**d
    v = _snap(a * scale, 15)
    r = (math.ceil(v) if up else math.floor(v)) / scale
    return math.copysign(r, x) if r else 0.0


def _roundup(x: float, digits: float) -> float:
    return _directed(x, digits, up=True)


def _rounddown(x: float, digits: float) -> float:
    return _directed(x, digits, up=False)


@dataclass(frozen=True)
class Function:
    excel: str
    min_args: int
    max_args: int
    python: Callable[..., float] | None  # None: evaluated lazily by the evaluator (IF)


FUNCTIONS: dict[str, Function] = {
    "ROUNDUP": Function("ROUNDUP", 2, 2, _roundup),
    "ROUNDDOWN": Function("ROUNDDOWN", 2, 2, _rounddown),
    "MAX": Function("MAX", 1, 30, lambda *a: float(max(a))),
    "MIN": Function("MIN", 1, 30, lambda *a: float(min(a))),
    "SUM": Function("SUM", 1, 30, lambda *a: float(sum(a))),
    "IF": Function("IF", 3, 3, None),
    "AND": Function("AND", 1, 30, lambda *a: float(all(a))),
    "OR": Function("OR", 1, 30, lambda *a: float(any(a))),
    "LOG": Function("LOG", 2, 2, lambda x, b: math.log(x) / math.log(b)),
    "POWER": Function("POWER", 2, 2, lambda x, y: float(x**y)),
}

ROUNDUP = _call("ROUNDUP")
ROUNDDOWN = _call("ROUNDDOWN")
MAX = _call("MAX")
MIN = _call("MIN")
SUM = _call("SUM")
IF = _call("IF")
AND = _call("AND")
OR = _call("OR")
LOG = _call("LOG")
POWER = _call("POWER")

# --- evaluation ----------------------------------------------------------------------

Tables = Mapping[str, Mapping[str, Mapping[str, float]]]


class EvalError(Exception):
    """A formula could not be evaluated (a bug in the calculation list or its inputs)."""


def _num(v: Value, where: Expr) -> float:
    if isinstance(v, str):
        raise EvalError(f"text {v!r} used as a number in {where}")
    return v


def evaluate(expr: Expr, env: Mapping[str, Value], tables: Tables | None = None) -> Value:
    """Evaluate ``expr`` with ``env`` (name → value) and lookup ``tables``."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Text):
        return expr.value
    if isinstance(expr, Ref):
        try:
            return env[expr.name]
        except KeyError:
            raise EvalError(f"unknown name {expr.name!r}") from None
    if isinstance(expr, Lookup):
        key = evaluate(expr.key, env, tables)
        try:
            return (tables or {})[expr.table][str(key).lower()][expr.column]
        except KeyError:
            raise EvalError(f"no {expr.table}[{key!r}].{expr.column}") from None
    if isinstance(expr, Bin):
        a = evaluate(expr.left, env, tables)
        b = evaluate(expr.right, env, tables)
        if expr.op in ("=", "<>"):
            same = (a.lower() == b.lower()) if isinstance(a, str) and isinstance(b, str) else a == b
            return float(same if expr.op == "=" else not same)
        x, y = _num(a, expr), _num(b, expr)
        if expr.op == "+":
            return x + y
        if expr.op == "-":
            return x - y
        if expr.op == "*":
            return x * y
        if expr.op == "/":
            if y == 0:
                raise EvalError(f"division by zero in {to_text(expr)}")
            return x / y
        return float(
            {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[expr.op]
        )
    if isinstance(expr, Call):
        if expr.fn == "IF":
            cond = _num(evaluate(expr.args[0], env, tables), expr)
            return evaluate(expr.args[1] if cond else expr.args[2], env, tables)
        fn = FUNCTIONS[expr.fn].python
        assert fn is not None
        return fn(*(_num(evaluate(a, env, tables), expr) for a in expr.args))
    raise EvalError(f"unknown node {expr!r}")


# --- rendering -----------------------------------------------------------------------

_PREC = {"=": 1, "<>": 1, "<": 1, "<=": 1, ">": 1, ">=": 1, "+": 2, "-": 2, "*": 3, "/": 3}


def _number(v: float) -> str:
    if v.is_integer() and abs(v) < 1e15:
        s = str(int(v))
    else:
        s = repr(v).upper().replace("E-0", "E-").replace("E+0", "E+")
        if "E" in s and "E-" not in s and "E+" not in s:
            s = s.replace("E", "E+")
    return f"({s})" if v < 0 else s


def _text(v: str) -> str:
    return '"' + v.replace('"', '""') + '"'


def render(
    expr: Expr,
    name: Callable[[str], str],
    table: Callable[[Lookup, str], str] | None = None,
) -> str:
    """Print ``expr`` in spreadsheet syntax (without the leading ``=``).

    ``name`` maps a reference to a cell or defined name; ``table`` renders a lookup
    given the already-rendered key. Both are called in the order the references appear.
    """
    parts, text, refs = _template(expr)
    if text is not None:  # no lookup: the names placed into the text in one operation
        return text % tuple([name(r) for r in refs])
    return _fill(parts, name, table)


def _fill(parts: tuple[_Part, ...], name: Callable[[str], str],
          table: Callable[[Lookup, str], str] | None) -> str:
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, Ref):
            out.append(name(part.name))
        else:
            lookup, key = part
            if table is None:
                raise EvalError("lookup without a table renderer")
            out.append(table(lookup, _fill(key, name, table)))
    return "".join(out)


# A rendered formula with its references left open: text, a reference, or a lookup with its
# key's parts. The brackets and numbers depend only on the tree, so a workbook's ~40,000
# formulas (a few hundred distinct trees, each written for many columns) walk each tree once.
# Without a lookup it is also kept as %-format text and the names in order (the workbook's
# ~16,000 renders took ~40 ms through _fill's loop).
_Part: TypeAlias = str | Ref | tuple[Lookup, tuple[Any, ...]]
_Template: TypeAlias = tuple[tuple[_Part, ...], str | None, tuple[str, ...]]
_TEMPLATES: dict[int, tuple[Expr, _Template]] = {}
_TEMPLATES_MAX = 4096


def _template(expr: Expr) -> _Template:
    hit = _TEMPLATES.get(id(expr))
    if hit is not None and hit[0] is expr:
        return hit[1]
    parts: list[_Part] = []
    _parts(expr, 0, False, parts)
    merged: list[_Part] = []
    for part in parts:  # adjacent texts joined: fewer pieces to fill
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    text: str | None = None
    refs: tuple[str, ...] = ()
    if all(isinstance(part, str | Ref) for part in merged):
        text = "".join(part.replace("%", "%%") if isinstance(part, str) else "%s"
                       for part in merged)
        refs = tuple(part.name for part in merged if isinstance(part, Ref))
    if len(_TEMPLATES) >= _TEMPLATES_MAX:  # trees built on the fly must not pile up
        _TEMPLATES.clear()
    template = (tuple(merged), text, refs)
    _TEMPLATES[id(expr)] = (expr, template)  # the tree is kept: its id stays its own
    return template


def _parts(e: Expr, parent: int, right: bool, out: list[_Part]) -> None:
    if isinstance(e, Num):
        out.append(_number(e.value))
    elif isinstance(e, Text):
        out.append(_text(e.value))
    elif isinstance(e, Ref):
        out.append(e)
    elif isinstance(e, Lookup):
        key: list[_Part] = []
        _parts(e.key, 0, False, key)
        out.append((e, tuple(key)))
    elif isinstance(e, Bin):
        p = _PREC[e.op]
        # same precedence on the right of - and / needs brackets: a-(b-c), a/(b*c)
        bracket = p < parent or (right and p == parent)
        if bracket:
            out.append("(")
        _parts(e.left, p, False, out)
        out.append(e.op)
        _parts(e.right, p, True, out)
        if bracket:
            out.append(")")
    elif isinstance(e, Call):
        out.append(f"{FUNCTIONS[e.fn].excel}(")
        for i, a in enumerate(e.args):
            if i:
                out.append(",")
            _parts(a, 0, False, out)
        out.append(")")
    else:
        raise EvalError(f"unknown node {e!r}")


def to_text(expr: Expr) -> str:
    """Human-readable form with bare names (docs, proposal appendix)."""
    return render(expr, lambda n: n, lambda lk, key: f"{lk.table}[{key}].{lk.column}")


def references(expr: Expr) -> set[str]:
    """Every name ``expr`` reads (lookup keys included)."""
    if isinstance(expr, Ref):
        return {expr.name}
    if isinstance(expr, Lookup):
        return {expr.key.name}
    if isinstance(expr, Bin):
        return references(expr.left) | references(expr.right)
    if isinstance(expr, Call):
        out: set[str] = set()
        for a in expr.args:
            out |= references(a)
        return out
    return set()


def functions_used(exprs: Sequence[Expr]) -> set[str]:
    out: set[str] = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if isinstance(e, Call):
            out.add(e.fn)
            stack.extend(e.args)
        elif isinstance(e, Bin):
            stack.extend((e.left, e.right))
    return out


# --- compiled Python rendering ---------------------------------------------------------


def _py(e: Expr, local: Mapping[str, str] | None = None) -> str:
    """``e`` as Python source; a name in ``local`` is read from that local variable, any
    other from the values dict ``v``."""
    if isinstance(e, Num):
        return repr(e.value)
    if isinstance(e, Text):
        return repr(e.value)
    if isinstance(e, Ref):
        return local[e.name] if local and e.name in local else f"v[{e.name!r}]"
    if isinstance(e, Lookup):
        row = local and local.get(f"{e.table}[{_py(e.key, local)}]")  # fetched at the start
        if row:
            return f"{row}[{e.column!r}]"
        return f"t[{e.table!r}][str({_py(e.key, local)}).lower()][{e.column!r}]"
    if isinstance(e, Bin):
        a, b = _py(e.left, local), _py(e.right, local)
        if e.op in ("+", "-", "*", "/"):
            return f"({a} {e.op} {b})"
        if e.op in ("=", "<>"):
            if local is not None and (isinstance(e.left, Num) or isinstance(e.right, Num)):
                # against a number _eq is plain ==: no call
                return f"float({'' if e.op == '=' else 'not '}({a}) == ({b}))"
            return f"_eq({a}, {b}, {e.op == '='})"
        return f"float({a} {e.op} {b})"
    if isinstance(e, Call):
        if e.fn == "IF":
            c, x, y = (_py(a, local) for a in e.args)
            return f"({x} if {c} else {y})"
        args = ", ".join(_py(a, local) for a in e.args)
        if e.fn in _INLINE:  # the table's lambda, without its call: same builtin, same tuple
            return f"float({_INLINE[e.fn]}(({args},)))"
        if e.fn in ("ROUNDUP", "ROUNDDOWN"):
            return f"_directed({args}, {e.fn == 'ROUNDUP'})"
        if e.fn == "POWER":  # the table's lambda: float(x**y)
            x, y = (_py(a, local) for a in e.args)
            return f"float(({x}) ** ({y}))"
        return f"_F[{e.fn!r}]({args})"
    raise EvalError(f"unknown node {e!r}")


# FUNCTIONS' lambdas that are float(builtin(arguments)): compiled code calls the builtin on
# the arguments' tuple itself (a Python call each saved: ~80 per run of the list)
_INLINE = {"MAX": "max", "MIN": "min", "SUM": "sum", "AND": "all", "OR": "any"}


def _always_read(e: Expr, out: set[str], rows: set[tuple[str, str]] | None = None) -> None:
    """The names ``e`` reads whatever its IFs decide (an IF's branches are lazy), and into
    ``rows`` the (table, key name) of the lookups it always makes."""
    if isinstance(e, Ref):
        out.add(e.name)
    elif isinstance(e, Lookup):
        _always_read(e.key, out)
        if rows is not None:
            rows.add((e.table, e.key.name))
    elif isinstance(e, Bin):
        _always_read(e.left, out, rows)
        _always_read(e.right, out, rows)
    elif isinstance(e, Call):
        for a in e.args[:1] if e.fn == "IF" else e.args:
            _always_read(a, out, rows)


def _eq(a: Value, b: Value, want: bool) -> float:
    same = a.lower() == b.lower() if isinstance(a, str) and isinstance(b, str) else a == b
    return float(same == want)


Program = Callable[[dict[str, Value], Tables], None]


Formula = Callable[[Mapping[str, Value], Tables | None], Value]


def compile_expr(expr: Expr) -> Formula:
    """``expr`` as a Python function of (values, tables), rendered as :func:`compile_program`
    renders each line: the same result as :func:`evaluate` (tests check both agree), without
    walking the tree at every call."""
    fn = _compiled(["def formula(v, t):", f"    return {_py(expr)}"])["formula"]
    return fn  # type: ignore[return-value]


def _compiled(lines: list[str]) -> dict[str, object]:
    """Run generated source (only ever rendered from calculation trees: names repr()-quoted)
    and return its namespace."""
    scope: dict[str, object] = {
        "_F": {k: f.python for k, f in FUNCTIONS.items()},
        "_eq": _eq,
        "_directed": _directed,
    }
    exec(compile("\n".join(lines), "<calculations>", "exec"), scope)
    return scope


def compile_program(named: Sequence[tuple[str, Expr]]) -> Program:
    """Render ``(name, expr)`` pairs as one Python function that evaluates them in order,
    storing each result into the env dict it is given. Same semantics as :func:`evaluate`
    (tests check both agree), about 30x faster.

    Inside the function each result is a local variable (``_c<n>``: the names never become
    identifiers), and so is every other name some line reads whatever its IFs decide, read
    once at the start; the results are stored into the env in one update at the end, in
    list order. A local is read several times faster than a dict entry (issue #25 item 3:
    the list runs ~35,000 times for a 50-workload account). The arithmetic is the same
    expressions in the same order, so the same floats."""
    outer: list[str] = []  # read before any line assigns them: the env's values
    assigned: set[str] = set()
    rows: set[tuple[str, str]] = set()  # catalog rows always looked up by such a name
    for name, e in named:
        refs: set[str] = set()
        looked: set[tuple[str, str]] = set()
        _always_read(e, refs, looked)
        outer.extend(sorted(refs - assigned - set(outer)))
        rows |= {(table, key) for table, key in looked if key not in assigned}
        assigned.add(name)
    local: dict[str, str] = {n: f"_i{k}" for k, n in enumerate(outer)}
    lines = ["def program(v, t):"]
    lines += [f"    {ident} = v[{n!r}]" for n, ident in local.items()]
    for k, (table, key) in enumerate(sorted(rows)):  # each row found once, not per column
        lines.append(f"    _r{k} = t[{table!r}][str({local[key]}).lower()]")
        local[f"{table}[{local[key]}]"] = f"_r{k}"
    stored: list[tuple[str, str]] = []
    for k, (name, e) in enumerate(named):
        lines.append(f"    _c{k} = {_py(e, local)}")
        local[name] = f"_c{k}"
        stored.append((name, f"_c{k}"))
    lines.append("    v.update({" + ", ".join(f"{n!r}: {ident}" for n, ident in stored) + "})")
    lines.append("    return None")
    fn = _compiled(lines)["program"]
    return fn  # type: ignore[return-value]
