"""Review round 25 of the PDF proposal and the workbook, read as a customer and finance would
(the 13 shipped accounts of inputs/, each page looked at). Each test reads a shipped account,
takes its figures from the sizing result they must agree with, and reads the rendered PDF's
text (pdftotext) where the finding was on paper."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

from llmsizer.documents.proposal import render_pdf
from llmsizer.documents.proposal.format import Formatter
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]
WORKS = "inputs/enterprise-multi.yaml"  # Adventure Works Group: three pools, one node group
ACME = "inputs/example.yaml"  # Acme Corp: two workloads in one pool
IMPORTERS = "inputs/rag-knowledge-base.yaml"  # Wide World Importers: retrieval servers


@cache
def _sized(name: str) -> Result:
    return size(load(ROOT / name))


@cache
def _pdf_text(name: str) -> str:
    """The rendered proposal's text (pdftotext), whitespace and no-break spaces as one space."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        pdf = Path(d) / "proposal.pdf"
        render_pdf(_sized(name), pdf)
        text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True,
                              text=True).stdout
    return " ".join(text.replace("\xa0", " ").split())


def test_the_burst_risk_says_what_peak_needs_in_replicas() -> None:
    """Section 8's burst risk read "its 6 replicas hold 28 % headroom above the 4.69 that peak
    needs": a bare 4.69 of nothing. It is 4.69 replicas (the pool's demand_replicas row)."""
    result = _sized(WORKS)
    chat = result.plan.pools[0]
    assert (chat.replicas, f"{chat.demand_replicas:.3g}") == (6, "4.69")
    text = _pdf_text(WORKS)
    burst = text.split("Burst above peak", 1)[1].split("Model or engine change", 1)[0]
    assert ("its 6 replicas hold 28 % headroom above the 4.69 replicas that peak needs."
            in burst)
    assert "above the 0.312 replicas that peak needs" in burst  # the agent platform's pool
    assert not re.search(r"above the [\d.,]+ that peak", burst)
    acme = _pdf_text(ACME)
    assert "hold 85 % headroom above the 2.7 replicas that peak needs." in acme


def test_the_retrieval_table_gives_tokens_per_gpu_to_three_figures() -> None:
    """Wide World Importers' retrieval table read "Tokens/s per GPU 102,392" and "140,124"
    beside figures rounded to three (latency 100 ms, USD 35.9 k): six digits of a modelled
    estimate. Three significant figures, as every other modelled quantity."""
    result = _sized(IMPORTERS)
    per_gpu = {w.name: float(w.best.values["replica_tokens_per_s"])
               for w in result.retrieval if w.best is not None}
    fmt = Formatter(result.account.currency)
    shown = {w: fmt.approx(x) for w, x in per_gpu.items()}
    assert sorted(shown.values()) == ["102,000", "140,000"]
    text = _pdf_text(IMPORTERS)
    for whole in per_gpu.values():
        assert f"{whole:,.0f}" not in text
    for figure in shown.values():
        assert figure in text


def test_an_alternative_no_cloud_instance_can_hold_has_no_cloud_price() -> None:
    """Wide World Importers' alternatives: 2 × NVIDIA H100 PCIe on the Dell PowerEdge R760xa
    read "USD 0 / derived price" under "Cloud per year". The offer rents H100 PCIe by the GPU
    in 1-GPU instances only, which cannot hold a 2-GPU replica (cloud_holds_replica = 0), so
    the calculation list gives it no cloud price (cloud_price_known = 0, annual_cost_cloud 0)
    although the GPU has a price per GPU-hour. It reads "no price", as the other unpriced rows."""
    result = _sized(IMPORTERS)
    chat = result.workloads[0]
    shown = [o for o in chat.options if o.id == "h100-pcie/fp8/kv-fp8/tp2"
             and o.platform == "dell-r760xa"]
    assert len(shown) == 1
    v = shown[0].values
    assert (v["cloud_gpu_hour"] > 0, v["cloud_holds_replica"], v["cloud_price_known"],
            v["annual_cost_cloud"]) == (True, 0.0, 0.0, 0.0)
    text = _pdf_text(IMPORTERS)
    section = text.split("4.1 Knowledge assistant", 1)[1].split("5 Headroom and resilience", 1)[0]
    row = section.split("2 × NVIDIA H100 PCIe", 1)[1].split(" × ", 1)[0]
    assert row.endswith("Dell PowerEdge R760xa 27 20.3 tok/s 974 ms 6 2 62 % USD 113 k no price 1"), row
    assert "USD 0 " not in section and not section.count("USD 0 derived")


def test_the_cloud_instances_row_reads_one_way_across_its_columns() -> None:
    """Wide World Importers' cost table, row "Cloud instances (GPUs rented)": the language
    model's column read "1 × 8" (fixed instance sizes) beside the embedder's "4 (4 GPUs)"
    (sold by the GPU). Under that label every column reads instances (GPUs rented)."""
    result = _sized(IMPORTERS)
    llm = result.workloads[0].best
    assert llm is not None
    v = llm.values
    assert (v["cloud_sold_by_gpu"], v["cloud_instances"], v["cloud_gpus_rented"]) == (0, 1, 8)
    text = _pdf_text(IMPORTERS)
    assert "Cloud instances (GPUs rented) 1 (8 GPUs) 4 (4 GPUs) 8 (8 GPUs)" in text
    assert "1 × 8" not in text


def test_a_plan_of_one_pool_says_the_pool() -> None:
    """Contoso Developer Tools sizes one workload in one pool, with 4 spare replicas running
    for N+1; the plan's note read "One node's worth of spare GPUs per platform lets every pool
    meet its peak with any one node down": a platform and pools the plan does not have. It says
    "the pool"; Woodgrove's two pools on one node group keep "every pool"."""
    one = _sized("inputs/code-assistant-alternatives.yaml")
    assert [(p.replicas, p.spare_replicas) for p in one.plan.pools] == [(9, 4)]
    text = _pdf_text("inputs/code-assistant-alternatives.yaml")
    assert ("One node's worth of spare capacity lets the pool meet its peak with any one node "
            "down. Policy headroom: 25 %.") in text
    assert "every pool" not in text and "per platform" not in text
    two = _sized("inputs/code-assistant.yaml")
    assert len(two.plan.pools) == 2 and len(two.plan.node_groups) == 1
    assert ("One node's worth of spare GPUs per platform lets every pool meet its peak with any "
            "one node down") in _pdf_text("inputs/code-assistant.yaml")


def test_the_standby_gpus_each_pool_row_names_are_said_to_be_one_shared_set() -> None:
    """Adventure Works buys one node group of 3 servers for its three pools, with 8 GPUs on
    standby for N+1 (group_standby_gpus). The summary's plan table gives each pool's spare as
    "standby: 8 GPUs", three times, beside a headline of 24 GPUs of which 8 are on standby: read
    down the column, 24 GPUs on standby. The table's note says the 8 are one set, shared."""
    result = _sized(WORKS)
    (group,) = result.plan.node_groups
    assert (len(group.pools), group.values["group_standby_gpus"]) == (3, 8)
    text = _pdf_text(WORKS)
    summary = text.split("Executive summary", 1)[1].split("Range:", 1)[0]
    assert summary.count("standby: 8 GPUs") == 3
    assert ("24 GPUs: 15 serving, 8 on standby, 1 idle" in summary)
    assert ("lets every pool meet its peak with any one node down (standby: the node group's GPUs "
            "on standby, one set shared by all its pools, running nothing until they take over "
            "a lost replica of any of them).") in summary
    # one pool of its own spare replicas (Acme Corp): no such note
    assert "one set shared by all its pools" not in _pdf_text(ACME)


def test_a_flop_row_at_zero_reads_0_flop_on_the_throughput_sheet(tmp_path: Path) -> None:
    """Acme Corp's Throughput sheet (a dense model: no expert overhead) printed "Expert
    overhead per token 0.00E+00 FLOP" in every option's column. Zero reads "0 FLOP"; the
    others keep their powers of ten ("3.28E+04 FLOP")."""
    import openpyxl

    from llmsizer.documents.workbook import write_workbook

    result = _sized(ACME)
    best = result.workloads[0].best
    assert best is not None and best.values["expert_slot_flops"] == 0
    path = tmp_path / "acme.xlsx"
    write_workbook(result, path)
    ws = openpyxl.load_workbook(path)["Throughput"]
    # columns: the calculation's name, its label, its unit, then one per option
    formats = {str(r[1].value): r[3].number_format for r in ws.iter_rows()
               if len(r) > 3 and r[1].value and r[2].value == "FLOP"}
    assert len(formats) >= 2 and all(f.startswith('0.00E+00" FLOP"') for f in formats.values())
    assert formats["Expert overhead per token"].split(";") == [
        '0.00E+00" FLOP"', '-0.00E+00" FLOP"', '0" FLOP"']
