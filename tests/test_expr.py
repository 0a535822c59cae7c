"""The closed function table: each function evaluated both ways (Python and a real
spreadsheet engine) on one example, and the traps in expr.py's docstring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import xlsxwriter
from support.libreoffice import recalculated_values

from llmsizer.model.calculations import CALCULATIONS, INPUT_NAMES
from llmsizer.model.expr import (
    AND,
    FUNCTIONS,
    IF,
    LOG,
    MAX,
    MIN,
    OR,
    POWER,
    ROUNDDOWN,
    ROUNDUP,
    SUM,
    Expr,
    compile_expr,
    compile_program,
    eq,
    evaluate,
    functions_used,
    gt,
    lookup,
    ref,
    references,
    render,
    to_text,
)

ENV = {"a": 7.0, "b": 2.0, "c": 0.1, "z": 0.0, "name": "fp8"}
EXAMPLES: dict[str, tuple[Expr, float]] = {
    "ROUNDUP": (ROUNDUP(ref("a") / ref("b"), 0), 4.0),
    "ROUNDDOWN": (ROUNDDOWN(ref("a") / ref("b"), 0), 3.0),
    "MAX": (MAX(ref("a"), ref("b"), 5), 7.0),
    "MIN": (MIN(ref("a"), ref("b"), 5), 2.0),
    "SUM": (SUM(ref("a"), ref("b"), 1), 10.0),
    "IF": (IF(gt(ref("z"), 0), ref("a") / ref("z"), 9), 9.0),  # lazy: no #DIV/0!
    "AND": (AND(gt(ref("a"), 1), gt(ref("b"), 1)), 1.0),
    "OR": (OR(gt(ref("a"), 100), gt(ref("b"), 1)), 1.0),
    "LOG": (LOG(ref("a") * 0 + 1000, 10), 3.0),
    "POWER": (POWER(ref("b"), 10), 1024.0),
}


def test_every_function_has_an_example() -> None:
    assert set(EXAMPLES) == set(FUNCTIONS)


@pytest.mark.parametrize("fn", sorted(EXAMPLES))
def test_python_evaluation_and_compiled_program_agree(fn: str) -> None:
    expr, expected = EXAMPLES[fn]
    assert evaluate(expr, ENV) == pytest.approx(expected, rel=1e-12)
    env = dict(ENV)
    compile_program([("out", expr)])(env, {})
    assert env["out"] == pytest.approx(expected, rel=1e-12)
    assert compile_expr(expr)(ENV, {}) == env["out"]  # one formula compiled alone (plan stages)


def test_each_function_evaluates_the_same_in_libreoffice(tmp_path: Path) -> None:
    """One example per function, rendered as a formula and recalculated by LibreOffice."""
    path = tmp_path / "fns.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("S")
    for col, (k, v) in enumerate(sorted((k, v) for k, v in ENV.items())):
        ws.write(0, col, v)
        wb.define_name(f"in_{k}", f"=S!${chr(65 + col)}$1")
    for row, fn in enumerate(sorted(EXAMPLES), start=2):
        expr, _ = EXAMPLES[fn]
        ws.write_formula(row, 0, "=" + render(expr, lambda n: f"in_{n}"), None, -1)
    wb.close()
    got = recalculated_values(path, tmp_path / "lo")["S"]
    for row, fn in enumerate(sorted(EXAMPLES), start=3):
        assert float(got[f"A{row}"]) == pytest.approx(EXAMPLES[fn][1], rel=1e-12), fn


def test_roundup_follows_the_spreadsheet_not_math_ceil() -> None:
    """0.1*3/0.1 is 3.0000000000000004 in binary; spreadsheets round 15 significant digits
    first, so ROUNDUP gives 3 (math.ceil would give 4). docs/libreoffice-findings.md."""
    assert evaluate(ROUNDUP(ref("c") * 3 / ref("c"), 0), ENV) == 3.0
    assert evaluate(ROUNDDOWN(ref("c") * 3 / ref("c") - 1e-16, 0), ENV) == 3.0


def test_rendering_brackets_and_negative_numbers() -> None:
    e = ref("a") - (ref("b") - ref("c"))
    assert render(e, str) == "a-(b-c)"
    assert render(ref("a") / (ref("b") * ref("c")), str) == "a/(b*c)"
    assert render(ref("a") * -2, str) == "a*(-2)"  # Excel: -2^2 = 4, so negatives get brackets
    assert render(lookup("gpus", "gpu", "memory_gb") * 1, str, lambda lk, k: f"T({k})") == "T(gpu)*1"


def test_text_comparison_is_case_insensitive_like_spreadsheets() -> None:
    assert evaluate(eq(ref("name"), "FP8"), ENV) == 1.0


def test_calculation_list_is_well_formed() -> None:
    """Names are unique, never shadow an input, only read names defined before them, and
    use only the allowed functions (DESIGN §2)."""
    known = set(INPUT_NAMES)
    for c in CALCULATIONS:
        assert c.name not in known, c.name
        assert references(c.expr) <= known, (c.name, references(c.expr) - known)
        known.add(c.name)
        assert c.note and c.unit and c.label
    assert functions_used([c.expr for c in CALCULATIONS]) <= set(FUNCTIONS)


def test_readable_formula_text() -> None:
    weights = next(c for c in CALCULATIONS if c.name == "context_tokens")
    assert to_text(weights.expr) == ("IF(max_context_tokens>0,max_context_tokens,"
                                     "prompt_tokens+kv_output_occupancy*output_tokens)")


def test_expr_module_has_no_unsafe_eval_of_user_data() -> None:
    """compile_program only ever compiles code generated from the calculation trees: the
    only names it emits are repr()-quoted."""
    src = Path(__file__).resolve().parents[1] / "src" / "llmsizer" / "model" / "expr.py"
    tree = ast.parse(src.read_text())
    calls = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in ("eval", "exec")]
    assert calls == ["exec"]


def test_whole_number_rounding_shortcut_equals_the_long_way() -> None:
    """ROUNDUP/ROUNDDOWN to 0 digits skip the decimal round trips when a value is clear of
    both neighbouring integers (expr._directed); on values near integers, at the 12-digit
    boundary, tiny, huge, negative and random, the answer is the long way's, bit for bit."""
    import math
    import random

    from llmsizer.model.expr import _directed, _directed_exact

    rng = random.Random(25)
    values = [0.0, -0.0, 1e-320, 5e-324, 1e-300, 0.1 * 3 / 0.1, 2.9999999999996, 3.0000000000004,
              2.999999999999, 1e15 - 0.5, 1e15, 1e15 + 2, 2.0**53 + 2, 1e300, math.inf,
              -math.inf]
    for _ in range(20_000):
        n = rng.choice([rng.randint(0, 10), rng.randint(0, 10**6), rng.randint(0, 10**14)])
        eps = rng.choice([1e-18, 1e-16, 1e-13, 5e-12, 1e-11, 2e-11, 1e-9, 1e-3, 0.5])
        values += [n * (1 + eps), n * (1 - eps), n + eps, n - eps, n + rng.random(),
                   rng.random() * 10.0 ** rng.randint(-30, 16)]
    shortcut = 0
    for x in values + [-x for x in values]:
        for up in (True, False):
            try:
                want: float | str = _directed_exact(x, 0, up)
            except (OverflowError, ValueError) as e:
                want = type(e).__name__
            try:
                got: float | str = _directed(x, 0, up)
            except (OverflowError, ValueError) as e:
                got = type(e).__name__
            assert repr(got) == repr(want), (x, up)  # repr: -0.0 and 0.0 differ
            a = abs(x)
            shortcut += 1e-300 < a < 1e15 and not (
                min(a - math.floor(a), math.floor(a) + 1 - a) <= 1e-11 * a)
    assert shortcut > len(values)  # most values took the shortcut
