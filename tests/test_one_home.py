"""One home for the math: sizing arithmetic may appear only in the calculations package
(src/llmsizer/model/calculations/, every module under it).

The scan flags any arithmetic operator whose operands mention a sizing quantity. A
negative fixture proves the scan can fail (aiconfigurator keeps a similar guard)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "llmsizer"
HOME = "model/calculations/"  # the calculations package: every file under it
# Files allowed arithmetic, and why:
ALLOWED = {
    "model/expr.py": "the evaluator itself (implements + - * / and ROUNDUP...)",
    "inputs/modelconfig.py": "counts a model's parameters from its config.json (model metadata)",
    "inputs/benchdata.py": ("unit conversion of benchmark files (s -> ms, per GPU -> the row's "
                     "GPUs, random lengths -> their mean, p90/p99 TPOT -> mean by the "
                     "catalog's ratio)"),
    "inputs/yamlsafe.py": "line/column arithmetic for error positions",
    "documents/proposal/models.py": ("the models-compared sentence words the engine's figures "
                                     "(a size ratio, a cost and a GPU difference)"),
    "documents/workbook/models_sheet.py": ("the Models sheet shows the engine's cached figures, "
                                           "parameters in billions"),
    "sizing/fidelity_embed.py": ("unit conversion of published embedding rows (a batch's "
                                 "latency or requests/s -> tokens/s, as benchdata.py does)"),
    "sizing/retrieval.py": ("the plan's bookkeeping of idle GPUs a retrieval workload may take "
                            "(bought - used, less the replicas placed) and the LLM's first token "
                            "in seconds for the RAG formula's input"),
    "sizing/fidelity_checks.py": ("a measured run checked against itself before it is predicted "
                                  "(Little's law on its own throughput, TPOT and TTFT); no "
                                  "model figure"),
    "sizing/fidelity_inferencex.py": ("a measured run's launch setting as its script computes it "
                                      "(TensorRT-LLM's --max_num_tokens = round_up_64(CONC + ISL "
                                      "+ 127); SGLang's stated memory fraction in the "
                                      "driver's bytes, x driver_memory_ratio): the "
                                      "benchmark's arithmetic, not the sizing's"),
    "inputs/schema_workload.py": ("cross-field input checks (max_context_tokens >= prompt + "
                                  "output; acceptance length <= drafted tokens + 1)"),
    "inputs/doubts.py": ("plausibility warnings on stated targets (a first-token time beyond "
                         "20 s + the prompt at 2,000 tokens/s; the value in the other unit, "
                         "/ 1000): a check of the input, no sizing figure"),
}
SIZING_WORDS = (
    "bandwidth", "tflops", "flops", "kv", "weight", "param", "gpus", "node", "replica",
    "token", "tpot", "ttft", "capex", "cost", "price", "headroom", "batch", "memory", "users",
    "power", "pue", "throughput",
)


def _names(node: ast.AST) -> str:
    parts = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            parts.append(n.id)
        elif isinstance(n, ast.Attribute):
            parts.append(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            parts.append(n.value)
    return " ".join(parts).lower()


def _is_text(node: ast.AST) -> bool:
    """A chain of + whose leaves include text (string building)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_text(node.left) or _is_text(node.right)
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant)
                                               and isinstance(node.value, str))


def sizing_arithmetic(source: str) -> list[int]:
    """Line numbers of arithmetic on sizing quantities."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp) and isinstance(
                node.op, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.Pow | ast.FloorDiv):
            if any(isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant)
                                                    and isinstance(n.value, str))
                   for n in (node.left, node.right)) or _is_text(node):
                continue  # building a message, not a number
            text = _names(node)
            if any(w in text for w in SIZING_WORDS):
                hits.append(node.lineno)
        if (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add | ast.Mult | ast.Div)
                and any(w in _names(node.target) for w in SIZING_WORDS)):
            hits.append(node.lineno)
    return sorted(set(hits))


def test_negative_fixture_is_caught() -> None:
    bad = "def f(params_total, bytes_per_param):\n    return params_total * bytes_per_param / 1e9\n"
    assert sizing_arithmetic(bad) == [2]
    ok = "def f(a, b):\n    return a * b\n"
    assert sizing_arithmetic(ok) == []


def test_no_sizing_arithmetic_outside_calculations() -> None:
    offenders = {}
    scanned_package = False
    home, scanned = [], []
    for path in sorted(SRC.rglob("*.py")):  # packages too (llmsizer.documents.workbook)
        name = path.relative_to(SRC).as_posix()
        if name.startswith(HOME):
            home.append(name)
            continue
        if name in ALLOWED:
            continue
        scanned_package |= "/" in name
        scanned.append(name)
        hits = sizing_arithmetic(path.read_text())
        if hits:
            offenders[name] = hits
    assert offenders == {}, f"sizing arithmetic outside the calculations package: {offenders}"
    assert scanned_package, "the scan must reach subpackages"
    assert f"{HOME}__init__.py" in home, f"{HOME} is not the calculations package"
    # the package's neighbours in its own layer are still scanned (HOME is the package only)
    assert "model/catalog.py" in scanned, "the scan must reach the rest of llmsizer.model"
