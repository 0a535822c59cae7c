"""Review round 24 of the PDF proposal and the workbook, read as a customer and finance would:
one operating point per dot on the throughput chart, the plan table's spare cell in two
lines, the missing spare said once, and the cloud price per GPU-hour named for what it is
(the offer's listed size on the Inputs sheet, the size rented where the plan pays it).
Each test reads a shipped account (inputs/, tests/data/) and takes its figures from the
sizing result it must agree with."""

from __future__ import annotations

import base64
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from html import unescape
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from llmsizer.documents.proposal import render_html, render_pdf
from llmsizer.documents.proposal.format import Formatter
from llmsizer.documents.proposal.walkthrough import workload_view
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]
UNIVERSITY = "tests/data/gbp-university-r22.yaml"
INSURER = "tests/data/eur-insurer.yaml"
LEGAL = "inputs/legal-128k.yaml"
CLINIC = "inputs/small-l4-l40s.yaml"


@cache
def _sized(name: str) -> Result:
    return size(load(ROOT / name))


def _words(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("\xa0", " ").split())


def labels_of(ws: Any) -> dict[str, str]:
    return {str(r[0].value): str(r[1].value) for r in ws.iter_rows() if r[0].value and r[1].value}


@pytest.fixture
def plotted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[list[float], list[float],
                                                                     dict[str, Any]]]]:
    """Every single-point series the charts plot (the dots): its x, y and style."""
    from matplotlib.axes import Axes

    calls: list[tuple[list[float], list[float], dict[str, Any]]] = []
    plot = Axes.plot

    def record(self: Axes, *args: Any, **kwargs: Any) -> Any:
        if len(args) >= 2 and len(args[0]) == 1:
            calls.append((list(args[0]), list(args[1]), kwargs))
        return plot(self, *args, **kwargs)

    monkeypatch.setattr(Axes, "plot", record)
    yield calls


def test_each_dot_of_the_throughput_chart_is_the_operating_point_its_figure_is_read_at(
        plotted: list[tuple[list[float], list[float], dict[str, Any]]]) -> None:
    """The university's stream job: a replica may hold 65 sequences (its batch limit; 67
    before session 25), the
    stated load keeps it at 9.71; the walk-through reads the replica's output at the limit
    and each user's speed at 9.71. The chart put both dots at batch 67, the per-user one at
    the speed read at 9.71 (23.4 tok/s, high above the curve's 7.7 there), and its key said
    "Batch limit 67: 23.4 tok/s per user, 513 tok/s per replica"."""
    result = _sized(UNIVERSITY)
    fmt = Formatter(result.account.currency)
    view = workload_view(result, 0, load_catalog(), fmt, chart=True)
    assert view.best is not None and view.throughput_chart is not None
    v = view.best.v
    limit, served = float(v["batch_per_replica"]), float(v["batch_served"])
    user, replica = float(v["tokens_per_s_per_user"]), float(v["replica_output_tokens_per_s"])
    assert (limit, round(served, 2)) == (65, 9.71)
    assert (fmt.tok_s(user), fmt.tok_s(replica)) == ("23.4\xa0tok/s", "510\xa0tok/s")
    # the dots: the replica's output at the limit, the per-user speed at the batch at peak
    dots = [(x[0], y[0]) for x, y, _style in plotted]
    assert dots == [(limit, replica), (served, user)]
    # the key names each point, as the walk-through's step 6 states them
    encoded = re.search(r"base64,([^\"]+)", str(view.throughput_chart))
    assert encoded is not None
    svg = unescape(base64.b64decode(encoded.group(1)).decode()).replace("\xa0", " ")
    assert "Batch limit 65: 510 tok/s per replica" in svg
    assert "At peak, batch 9.71: 23.4 tok/s per user" in svg
    assert "23.4 tok/s per user, 510" not in svg
    # the per-user dot lies on the per-user curve: the whole batches either side of 9.71
    # bracket its speed (the engine's curve, drawn through them)
    from llmsizer.documents.proposal.walkthrough import _curve_points

    by_batch = {p["batch"]: p["tokens_per_s_per_user"]
                for p in _curve_points(result, 0, view.best)}
    assert by_batch[10.0] <= user <= by_batch[9.0]
    # the caption says which point is which
    from llmsizer.documents.proposal.context import build_context
    from llmsizer.documents.proposal.render import _render_template, _roots

    html = _render_template(_roots(None), {**build_context(result, detail=True),
                                           "appendix": True})
    text = _words(html)
    assert ("the orange dot is the replica's output at its batch limit of 65, the most a replica "
            "may hold at once; the diamond is each user's speed at the 9.71 sequences the "
            "stated load keeps it at") in text


def _layout(result: Result, pdf: Path) -> str:
    """The rendered PDF's text as laid out (pdftotext -layout), no-break spaces as spaces."""
    render_pdf(result, pdf)
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout.replace("\xa0", " ")


def _spare_cell(layout: str, pool: str) -> list[str]:
    """The plan table's "Replicas (spare)" cell under the replica count of ``pool``: the
    lines of text standing in the column's width under "(spare)"."""
    lines = layout.splitlines()
    head = next(i for i, t in enumerate(lines) if re.search(r"Runs on +Serves +\(spare\)", t))
    column = lines[head].index("(spare)")
    first = next(i for i in range(head, len(lines)) if pool in lines[i])
    block = lines[first:next(i for i in range(first, len(lines)) if not lines[i].strip())]
    return [c for c in (t[column - 4:column + 10].strip() for t in block[1:]) if c]


def test_the_plan_tables_spare_cell_reads_in_two_lines(tmp_path: Path) -> None:
    """The insurer rents its two pools with one spare instance for both: the PDF plan
    table's "Replicas (spare)" cell read "group's / spare / instance" in three lines under
    each pool's replica count. It reads "shared standby" in two, and the table's note and
    the glossary say what that is."""
    result = _sized(INSURER)
    group = result.plan.node_groups[0]
    assert group.values["group_cloud_spare_instances"] == 1 and len(group.pools) == 2
    layout = _layout(result, tmp_path / "insurer.pdf")
    for pool in ("Pool 1: Qwen3 14B", "Pool 2: Llama 3.3 70B"):
        assert _spare_cell(layout, pool) == ["shared", "standby"]
    # Adventure Works buys its pools one node group with 8 GPUs on standby: "group's 8 /
    # standby / GPUs" in three lines; now "standby:" over "8 GPUs"
    works = _sized("inputs/enterprise-multi.yaml")
    assert works.plan.node_groups[0].values["group_standby_gpus"] == 8
    other = _layout(works, tmp_path / "works.pdf")
    for pool in ("Pool 1: Llama 3.1 8B", "Pool 2: Llama 3.1 70B", "Pool 3: gpt-oss-120b"):
        assert _spare_cell(other, pool) == ["standby:", "8 GPUs"]
    text = " ".join(layout.split())
    assert ("(shared standby: one spare instance for the pools of a group, running nothing "
            "until it takes over a lost replica of any of them)") in text
    assert "Shared standby One spare cloud instance rented for the pools of a group" in text
    assert "group's spare instance" not in text


def test_a_missing_spare_is_said_once() -> None:
    """The clinic network asked for no N+1 and runs each pool on one node: the plan line read
    "spare: no spare (surviving a node loss was not asked); headroom 30%, the service stops
    while its one node is down" — three ways of saying there is no spare."""
    result = _sized(CLINIC)
    assert result.account_inputs["survive_node_loss"] == 0
    import os
    import sys

    out = subprocess.run([sys.executable, "-m", "llmsizer.cli", "size", str(ROOT / CLINIC)],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "200"}).stdout
    text = " ".join(out.split())  # the terminal's plan (`llmsizer size`)
    assert "spare: none asked for; headroom 30%, the service stops while its one node is down" \
        in text
    assert "was not asked" not in text and "spare: no spare" not in text


def test_the_cloud_price_is_named_for_the_size_it_is_for(tmp_path: Path) -> None:
    """Fabrikam Legal rents B200s in 2-GPU instances at USD 4.58 a GPU-hour (the TCO sheet's
    "Cloud price per GPU-hour paid"); the Inputs sheet listed "Cloud price per GPU-hour:
    NVIDIA B200 (HGX)" at 4.44, the offer's 8-GPU instance's price, with no word of the size.
    It is named as the listed price of the 8-GPU instance, and the PDF's costs table says
    its price is the one paid for the size rented."""
    result = _sized(LEGAL)
    (g,) = result.plan.node_groups
    paid = float(g.values["cloud_instance_gpu_hour"])
    listed = float(result.tables["gpus"]["b200"]["cloud_gpu_hour"])
    assert (round(paid, 2), round(listed, 2), g.values["cloud_instance_gpus"]) == (4.58, 4.44, 2)
    assert result.tables["gpus"]["b200"]["cloud_gpus_per_instance"] == 8
    path = tmp_path / "legal.xlsx"
    write_workbook(result, path)
    book = openpyxl.load_workbook(path)
    rows = {str(r[0].value): r[2].value for r in book["Inputs"].iter_rows() if r[0].value}
    label = "Cloud price per GPU-hour as listed, 8-GPU instance: NVIDIA B200 (HGX)"
    assert round(float(rows[label]), 2) == 4.44
    assert "Cloud price per GPU-hour: NVIDIA B200 (HGX)" not in rows
    # the TCO and Plan sheets: both prices side by side, each named for its size
    for sheet in ("TCO", "Plan"):
        labels = {str(r[0].value): str(r[1].value) for r in book[sheet].iter_rows()
                  if r[0].value and r[1].value}
        assert labels["cloud_instance_gpu_hour"] == \
            "Cloud price per GPU-hour paid, for the instance size rented", sheet
    assert labels_of(book["TCO"])["cloud_gpu_hour"] == \
        "Cloud price per GPU-hour as listed, the offer's own size"
    text = _words(render_html(result))
    assert "Cloud price per GPU-hour paid, for the size rented USD 4.58 derived" in text
    assert "NVIDIA B200 (HGX): cloud price per GPU-hour paid: USD 4.58" in text
    assert "USD 4.44" not in text
