"""Session 24, brief J: price and batch words a finance reader trips on. No figure moves: each
test reads the words beside figures the sizing already gives.

1. calculations ``cloud_size_picked`` printed "2 size no.": now a code (0 = the offer's own
   size, 1 or 2 = its other listed sizes), shown as the bare number.
2. Fabrikam Legal (inputs/legal-128k.yaml): the Inputs cell of the B200's listed price (USD 4.44,
   Lambda's 8-GPU instance: 6.69 x 0.6642) read the source of the 2-GPU size rented ("6 × Lambda
   2x B200 (13.78 USD/h)", USD 4.58 paid).
3. A shared plan's PDF costs column: the node group's price paid, not the catalog's listed price
   (the insurer on B200 rents 2-GPU Lambda instances: EUR 2.34 paid, EUR 2.27 listed).
4. Acme (inputs/example.yaml): the walk-through's heading named the pool's batch at peak (111)
   beside step 6's limit (158) without saying which.
5. A replica wider than a node, rented by the GPU, serves on several instances: "2 serving"
   (checked, the words were right).
"""

from __future__ import annotations

import re
import tempfile
from html import unescape
from pathlib import Path

import openpyxl
import pytest
import yaml

from llmsizer.documents.proposal import render_html
from llmsizer.documents.proposal.plan import instances_split
from llmsizer.documents.workbook import write_workbook
from llmsizer.documents.workbook.formats import number_format
from llmsizer.inputs.loader import load
from llmsizer.model.calculations import CALCULATIONS
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

ROOT = Path(__file__).resolve().parents[1]


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("\u00a0", " ")
                    .replace("\u202f", " ").split())


def _insurer_on(hardware: dict[str, object], tmp: Path, **changes: object) -> Result:
    src = yaml.safe_load((ROOT / "tests" / "data" / "eur-insurer.yaml").read_text())
    src["hardware"] = hardware
    src.update(changes)
    path = tmp / "insurer.yaml"
    path.write_text(yaml.safe_dump(src, allow_unicode=True))
    return size(load(path))


def test_size_picked_is_a_code_not_a_size_number() -> None:
    row = next(c for c in CALCULATIONS if c.name == "cloud_size_picked")
    assert row.unit == "code"  # was "size no.": the workbook printed "2 size no."
    assert row.label == ("Cloud instance size rented (0 = the offer's own, 1 or 2 = its other "
                         "listed sizes)")
    assert "size no" not in number_format(row.unit, [2.0], "USD")


def test_legal_listed_price_cell_names_the_listed_offer(tmp_path: Path) -> None:
    result = size(load(ROOT / "inputs" / "legal-128k.yaml"))
    book = tmp_path / "legal.xlsx"
    write_workbook(result, book)
    ws = openpyxl.load_workbook(book)["Inputs"]
    row = next(r for r in ws.iter_rows(values_only=True)
               if r[0] == "Cloud price per GPU-hour as listed, 8-GPU instance: NVIDIA B200 (HGX)")
    assert row[2] == pytest.approx(4.443498)  # 6.69 x 0.6642, Lambda's 8-GPU instance
    note = str(row[3])
    cell_offer = note.split("This cell's offer: ")[1]
    # the cell's own price: Lambda's 8-GPU instance at 6.69 a GPU-hour, derived x 0.6642
    assert cell_offer.startswith("Lambda gpu_8x_b200_sxm6 (53.52 USD/h); sold as whole 8-GPU")
    assert "GPU cloud on-demand price (USD 6.69 per GPU-hour) × 0.6642" in cell_offer
    assert "2x B200" not in cell_offer and "6.89" not in cell_offer
    # the size rented, named beside the price paid
    assert ("the plan rents another size at USD 4.58 per GPU-hour, the price used (Catalog "
            "sheet, its other sizes; rented: 6 × Lambda 2x B200 (13.78 USD/h))") in note
    paid = next(p for p in result.prices if p.item == "cloud:b200")
    assert paid.source.startswith("6 × Lambda 2x B200 (13.78 USD/h)")  # the price list's


def test_shared_plan_costs_column_shows_the_groups_price_paid() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = _insurer_on({"gpus": ["b200"]}, Path(tmp))
    group = result.plan.node_groups[0]
    assert len(result.plan.pools) == 2 and group.values["cloud_size_picked"] == 2
    paid = group.values["cloud_instance_gpu_hour"]
    listed = float(result.tables["gpus"]["b200"]["cloud_gpu_hour"])
    assert (round(paid, 2), round(listed, 2)) == (2.34, 2.27)  # 2-GPU size vs 8-GPU offer
    text = _text(render_html(result))
    row = text.split("Cloud price per GPU-hour paid, for the size rented (its node group's)")[1]
    assert row.split("Cloud per year")[0].split() == [
        "EUR", "2.34", "derived", "EUR", "2.34", "derived", "—"]
    assert "Cloud price per GPU-hour as listed" not in text


def test_insurer_shared_costs_row_reads_paid() -> None:
    result = size(load(ROOT / "tests" / "data" / "eur-insurer.yaml"))
    text = _text(render_html(result))
    row = text.split("Cloud price per GPU-hour paid, for the size rented (its node group's)")[1]
    assert row.split("Cloud per year")[0].split() == [
        "EUR", "1.56", "derived", "EUR", "1.56", "derived", "—"]


def test_acme_heading_names_both_batches() -> None:
    result = size(load(ROOT / "inputs" / "example.yaml"))
    text = _text(render_html(result))
    assert ("20 GPUs = 5 replicas × TP4 in Pool 1, shared; 158 sequences per replica (its "
            "limit alone); 111 at peak in its pool; 163,840 bytes of KV per token") in text
    # Contract RAG's own limit is 83 (8,192-token requests); mixed with the assistant's short
    # ones the pool runs 111: "alone" says why the pool's batch may exceed it
    assert ("shared; 83 sequences per replica (its limit alone); 111 at peak in its pool"
            in text)
    assert "sets 158 sequences per replica" in text  # step 6, the limit the heading names
    assert "shared; 111 sequences per replica" not in text


def test_replica_wider_than_an_instance_serves_on_two() -> None:
    """DeepSeek-V3 in BF16 on H200 at TP16: one replica over two 8-GPU instances sold by the
    GPU, and the spare instance: 3 instances, 2 of them serving (no miscount to fix)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = yaml.safe_load((ROOT / "tests" / "data" / "eur-insurer.yaml").read_text())
        work = {**src["workloads"][1], "model": "deepseek-v3", "named_users": 100}
        result = _insurer_on({"gpus": ["h200-sxm"], "weight_precisions": ["bf16"],
                              "tensor_parallel": [16]}, Path(tmp), workloads=[work])
    (group,) = result.plan.node_groups
    pool = result.plan.pools[0]
    assert (pool.tp, pool.replicas, group.values["cloud_instance_gpus"]) == (16, 1, 8)
    assert group.values["cloud_instances"] == 3
    assert instances_split(group) == "2 serving, 1 spare on standby"
