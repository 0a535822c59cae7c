"""What the calibration scripts share: the two measured files and where the fitted constants
and their docs live, each row's source (the unit of leave-one-source-out), the cases the
product predicts, and the writers of constants.yaml entries and docs/calibration.md sections.

Imported by benchmarks/calibrate.py, calibrate_round_share.py and the cross-validation
scripts beside them; it runs nothing on import."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from llmsizer.inputs.benchdata import BenchPoint, read_points  # noqa: E402
from llmsizer.model.catalog import Catalog  # noqa: E402
from llmsizer.sizing.fidelity import Case, prepare, quantile  # noqa: E402

DATA = ROOT / "tests" / "data" / "calibration_points.csv"
# Blackwell, AMD and MoE results (TensorRT-LLM perf overviews and blog, InferenceX); rows with
# disaggregated serving or speculative decoding (MTP) are not modelled and not fitted.
NEW_DATA = ROOT / "tests" / "data" / "measured_blackwell_moe.csv"
# a second published source for the engines of NEW_DATA's fixed-concurrency TTFT rows (dstack's
# DeepSeek-R1 runs, 2025-03): read only by the issue-21 cross-validation's ``--second-sources``
SECOND_DATA = ROOT / "tests" / "data" / "measured_second_sources.csv"
# ATOM's own recipes (ROCm/ATOM recipes/*.md "Performance baseline" tables): a second ATOM source
ATOM_RECIPES = ROOT / "tests" / "data" / "measured_atom_recipes.csv"
SECOND_FILES = (SECOND_DATA, ATOM_RECIPES)
CONSTANTS = ROOT / "src" / "llmsizer" / "model" / "catalogs" / "constants.yaml"
DOC = ROOT / "docs" / "calibration.md"
F_SCALE = 0.15
def _group_model(model: str | None) -> str:
    return "llama-3.1-70b" if model == "llama-3.3-70b" else str(model)


def source_of(point: BenchPoint) -> str:
    """The publication (and engine release) a row comes from: the unit of leave-one-source-out.
    InferenceX rows are split by serving framework (SGLang, TensorRT-LLM, ATOM, vLLM): each is
    a different engine measured by the same harness; so are dstack's (SECOND_DATA) and ATOM's
    own recipes (ATOM_RECIPES, one source: "ATOM recipes atom")."""
    text = point.source
    for needle, harness in (("InferenceX", "InferenceX"), ("dstack", "dstack"),
                            ("ROCm/ATOM recipe", "ATOM recipes")):  # split by engine
        if needle in text:
            found = re.search(r"framework=([\w-]+)", point.raw.get("notes", ""))
            return f"{harness} {found.group(1) if found else 'other'}"
    for needle, name in (("Online Serving", "TensorRT-LLM v0.14 online serving"),
                         ("Best_perf_practice", "TensorRT-LLM DeepSeek-R1 blog"),
                         ("developer-guide/perf-overview", "TensorRT-LLM 1.2 perf overview"),
                         ("dominicshanshan", "TensorRT-LLM v0.20 perf overview"),
                         ("@v0.19", "TensorRT-LLM v0.19 perf overview"),
                         ("v0.17", "TensorRT-LLM v0.17 perf overview"),
                         ("perf-overview", "TensorRT-LLM v0.17 perf overview")):
        if needle in text:
            return name
    low = text.lower()
    if "nim" in low:
        return "NVIDIA NIM"
    if "triton" in low or "online" in low or "v0.14" in low:
        return "TensorRT-LLM v0.14 online serving"
    return text.split(" ")[0][:60]


# rows of the second file (Blackwell/AMD/MoE) are weighted as a dataset of their own
NEW_SOURCES: set[str] = set()


def dataset_of(point: BenchPoint) -> str:
    return "new" if point.source in NEW_SOURCES else "old"

def with_constants(catalog: Catalog, values: dict[str, float]) -> Catalog:
    consts = dict(catalog.constants)
    for name, value in values.items():
        consts[name] = consts[name].model_copy(update={"value": value})
    return catalog.model_copy(update={"constants": consts})

def _stats(errors: Sequence[float]) -> tuple[int, float, float, float]:
    if not errors:
        return 0, math.nan, math.nan, math.nan
    absolute = [abs(e) for e in errors]
    return len(errors), quantile(absolute, 0.5), quantile(absolute, 0.9), quantile(errors, 0.5)

def _fmt(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"


def set_constant(text: str, name: str, value: float, source: str, unit: str) -> str:
    block = re.compile(rf"^  {re.escape(name)}:\n    value: [^\n]*\n    unit: [^\n]*\n"
                       rf"    source: [^\n]*\n", re.M)
    entry = (f"  {name}:\n    value: {_fmt(value)}\n    unit: {unit}\n"
             f"    source: \"{source}\"\n")
    if block.search(text):
        return block.sub(lambda _: entry, text, count=1)
    return text.rstrip("\n") + "\n" + entry


def replace_section(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- calibrate:{name} -->\n).*?(<!-- /calibrate:{name} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{DOC}: marker <!-- calibrate:{name} --> missing")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), text)


def load_cases(catalog: Catalog, second: bool = False, atom_recipes: bool = False
               ) -> tuple[list[Case], int, int]:
    """Cases of both files (the second's source texts recorded in NEW_SOURCES), the number of
    rows read and the number interpreted; ``second``: SECOND_FILES' too; ``atom_recipes``:
    ATOM_RECIPES' (ATOM's second source) alone."""
    cases: list[Case] = []
    n_rows = 0
    extra = SECOND_FILES if second else (ATOM_RECIPES,) if atom_recipes else ()
    for path in (DATA, NEW_DATA, *extra):
        points, unreadable = read_points(path, catalog)
        if path == NEW_DATA:
            NEW_SOURCES.update(p.source for p in points)
        got, _ = prepare(points, catalog)
        # disaggregated prefill/decode rows have their own factor (disagg_prefill_time_factor,
        # fitted on them alone): the shared constants stay fitted on aggregated serving
        cases += [c for c in got if not c.point.disaggregated]
        n_rows += len(points) + len(unreadable)
    return cases, n_rows, len(cases)
