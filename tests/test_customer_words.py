"""Words that reach a customer: no internal references ("seed 000") in the PDF proposal or
the workbook of any shipped account; public sources are cited by their titles."""

from __future__ import annotations

import re
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ShippedOutputs

from llmsizer.inputs.loader import load
from llmsizer.runs.report import write_outputs
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]
INPUTS = sorted((ROOT / "inputs").glob("*.y*ml"))
# internal names: the seed articles' numbers, the calibration script and its data files
INTERNAL = re.compile(r"\bseeds?\b|calibrate\.py|docs/calibration\.md|calibration_points"
                      r"|measured_blackwell_moe"
                      r"|\b(?:prices|constants|gpus|models|platforms|precisions|coverage)\.yaml\b",
                      re.IGNORECASE)

# the catalog's own field names and reference files, said in a note's sentence ("node_power_kw
# is an ESTIMATE", "reference prices.csv"): the workbook's formulas may name the field, prose not
CATALOG_PROSE = re.compile(r"\b(?:node_power_kw|base_price_usd) (?:is|=)|\bmax TP\b"
                           r"|\breference (?:notes|prices\b|[a-z_]+\.(?:csv|md))")


def _hits(text: str) -> list[str]:
    return [text[max(0, m.start() - 50): m.end() + 30]
            for pattern in (INTERNAL, CATALOG_PROSE) for m in pattern.finditer(text)]


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_no_internal_references_reach_the_customer(
        path: Path, shipped_outputs: Callable[[Path], ShippedOutputs]) -> None:
    shipped = shipped_outputs(path)  # rendered once for three files (conftest)
    book, pdf = shipped.xlsx, shipped.pdf
    text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout
    assert not _hits(re.sub(r"\s+", " ", text)), _hits(text)
    # the catalog's "ESTIMATE" flag in the prose's words (presales review: the price list
    # shouted it; the proposal says "a flagged estimate", "an estimate" everywhere else)
    assert "ESTIMATE" not in text
    # formats by their usual names (FP8, MXFP4), never the catalog's lower-case ids
    assert not re.findall(r"\b(?:fp8|fp4|nvfp4|mxfp4|bf16|fp16|int8|int4) (?:weights|KV)", text)
    assert not re.findall(r"\b1 replicas\b", text)  # small-l4-l40s printed '1 replicas of'
    with zipfile.ZipFile(book) as archive:  # every string: cells, notes, prompts, charts
        for name in archive.namelist():
            if name.endswith(".xml"):
                xml = archive.read(name).decode("utf-8")
                assert not _hits(xml), (name, _hits(xml))


def test_the_cited_titles_are_the_articles_own() -> None:
    """The short titles cited instead of the internal names are headings the articles carry."""
    seeds = ROOT.parent / "shared" / "seeds"  # CI clones the repo beside shared/
    if not seeds.is_dir():
        pytest.skip("the source articles are not on this machine")
    cited = {"000": "From Users to GPUs", "001": "How fast does it serve?",
             "002": "The KV cache is your real budget",
             "003": "GPU Inference vs Training Requirements", "004": "GenAI Physics"}
    for number, title in cited.items():
        (article,) = seeds.glob(f"{number}_*.txt")
        assert title in article.read_text(encoding="utf-8"), (number, title)


# ---- issue 22, item 7: the words left over ---------------------------------------------------


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_cli_plan_lines_name_configurations_in_words(path: Path) -> None:
    """`llmsizer size` prints the plan as the PDF words it ("4 × NVIDIA H100 SXM 80GB, FP8
    weights, FP8 KV cache" on "Dell PowerEdge XE8640"), never an option, pool or catalog id."""
    from rich.console import Console

    from llmsizer.documents.textreport import print_result
    from llmsizer.model.catalog import load_catalog

    result = size(load(path))
    con = Console(record=True, width=400)
    print_result(result, con)
    plan = [line for line in con.export_text().splitlines()
            if line.startswith(("Plan:", "Plan, rented in the cloud:", "  Pool "))]
    assert plan, "the plan is printed"
    cat = load_catalog()
    ids = {o.id for w in result.workloads for o in w.options} | {
        p.id for p in result.plan.pools} | {g.platform for g in result.plan.node_groups}
    for line in plan:
        assert not [i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w/-])", line)], line
    rented = result.deployment.recommended == "cloud"
    for g in result.plan.node_groups:
        # a rented plan names its GPUs and cloud instances, not the servers it would buy
        # (d5c5d8a: "Plan, rented in the cloud: 3 × NVIDIA L40S in 3 cloud instances")
        name = (cat.gpus[g.gpu].name if rented else cat.platforms[g.platform].name.split(" (")[0])
        assert any(name in line for line in plan)


def test_the_break_even_chart_fits_every_line_it_draws() -> None:
    """Before: costs at 10-20 % load were cut flat at the top of the axis. Now the value axis
    fits the loads from 30 % up and the load axis starts where the costs fit under it."""
    from llmsizer.documents.charts import breakeven_window
    from llmsizer.sizing.sensitivity import by_load

    result = size(load(ROOT / "inputs" / "code-assistant-alternatives.yaml"))
    w = result.workloads[0]
    points = by_load(result.account_inputs, w, result.tables)
    keys = ["cost_per_million_total_tokens_onprem", "cost_per_million_total_tokens_cloud"]
    shown, top, low = breakeven_window(points, result.account_inputs["average_load"], keys)
    assert all(p[k] <= top for p in shown for k in keys)
    # 1.05 x the dearest cost from 30 % load up: the cloud at 30 % (one-year contract price)
    assert top == pytest.approx(1.05 * max(p[k] for p in points if p["load"] >= 0.3
                                           for k in keys))
    assert low == pytest.approx(0.3)  # 20 % costs USD 1.37 per million in the cloud: off the axis
    assert [p["load"] for p in shown] == [p["load"] for p in points if p["load"] >= low]


def test_the_proposal_names_the_engine_and_keeps_the_register_in_an_appendix(
        tmp_path: Path) -> None:
    """One paragraph on the constants and one on the serving engine in section 7; the register
    itself in appendix A (the detailed PDF, report --appendix); the confidence statement
    covers per-user speed and first token."""
    from llmsizer.model.catalog import load_catalog

    (pdf,) = write_outputs(size(load(ROOT / "inputs" / "code-assistant-alternatives.yaml")),
                           tmp_path, formats=("pdf",), appendix=True)
    text = re.sub(r"\s+", " ", subprocess.run(["pdftotext", str(pdf), "-"], check=True,
                                              capture_output=True, text=True).stdout)
    text = text.replace("\u00a0", " ")
    body, _, appendix = text.partition("Appendix: fitted constants")
    assert appendix, "the register has its appendix"
    assert "Bandwidth efficiency, weights:" in appendix
    assert "Bandwidth efficiency, weights:" not in body
    # the constants fitted on the same published results sit under that source, said once
    # (it was repeated on 16 rows and pushed two stray rows onto a last page), and every
    # constant is named in words, not from its id ("Mtp unstated draft tokens")
    # (one heading per fit: the constants refitted later on more rows, or on the TTFT rows,
    # carry their own date and row count)
    heads = re.findall(r"[Ff]itted \S+ on \d+ published benchmark results \(TensorRT-LLM",
                       appendix)
    assert heads and len(heads) == len(set(heads)), heads
    assert re.search(r"Compute efficiency, decode \(8-bit path\): [\d.]+ % — FP8-path rows",
                     appendix)
    assert "Model error, Hopper GPUs at FP8: 10th percentile" in appendix
    assert not re.search(r"\bMtp\b|Confidence hopper|Stack efficiency nvidia", appendix)
    # the engine's first-token constants are there too, in words (the round share was left out
    # of the assumptions, and its source named the other by its id)
    cat = load_catalog()
    assert "Serving-engine steps before the first token: " in appendix
    assert "Wait for other users' prompts, share of an engine step per user in flight: " in appendix
    assert "jointly with serving-engine steps before the first token" in appendix
    register = appendix.split("Appendix: formulas")[0]  # the formulas name their variables
    assert [n for n in cat.constants if n in register] == []
    assert "NVIDIA TensorRT-LLM (releases v0.14 to 1.2" in body and "SGLang" in body
    assert "Another engine or release" in body and "benchmark the chosen engine" in body
    for name in ("calibration_itl_median_error", "calibration_ttft_median_error"):
        assert f"by a median {cat.constant(name):.1%}".replace("%", " %") in body, name
    # 30.1 tok/s per user against a 30 tok/s target: inside the 9.7 % speed error
    assert "The per-user speed meets its target by less than that error" in body


def test_an_option_with_one_gpu_of_a_kind_says_it_in_the_singular() -> None:
    """A disaggregated option whose prefill replicas hold one GPU each read "prefill replicas
    of 1 GPUs" (the workbook's Summary chart labels, frontier-moe-rack's alternatives)."""
    from llmsizer.documents.proposal.format import option_label

    one = option_label("NVIDIA GB300", 16, "fp4", "fp8", {"disagg_prefill_gpus": 1, "ep": 16})
    assert one.endswith("prefill replicas of 1 GPU") and "16 GPUs" in one, one
    eight = option_label("NVIDIA GB300", 16, "fp4", "fp8", {"disagg_prefill_gpus": 8})
    assert eight.endswith("prefill replicas of 8 GPUs"), eight
