"""Six small things a user trips over (round 13): a re-read workbook's speculative-decoding
and hosted-API price cells, the address `serve` prints for 0.0.0.0, the unread-row heading of
`fidelity --summary`, the Summary's cloud row under shared retrieval, what-if rows that an
account's own cloud price makes repeat, and the exit code of a batch stopped by SIGTERM."""

from __future__ import annotations

import importlib
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import DATA, ROOT
from support.named_cells import named_cell
from test_workbook import write_yaml

from llmsizer.base.errors import InputError
from llmsizer.documents.reread import read_workbook
from llmsizer.documents.workbook import write_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")
# DeepSeek-R1 with MTP (3 drafted tokens, the model's published acceptance); the catalog lists
# a hosted API price for it (catalogs/prices.yaml api: deepseek-r1)
MTP = DATA / "frontier-mtp-p95.yaml"


# --- 1. re-reading speculative-decoding and hosted-API price cells ----------------------------


@pytest.fixture(scope="module")
def mtp_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    book = tmp_path_factory.mktemp("mtp") / "book.xlsx"
    write_workbook(size(load(MTP)), book)
    return book


def _edited(book: Path, out: Path, edits: dict[str, float]) -> Path:
    wb = openpyxl.load_workbook(book)
    for name, value in edits.items():
        named_cell(wb, name).value = value
    wb.save(out)
    wb.close()
    return out




def test_edited_api_prices_and_acceptance_read_back_like_the_equally_edited_yaml(
        mtp_book: Path, tmp_path: Path) -> None:
    """Old code refused all three with 'it describes the model (deepseek-r1)'."""
    edited = _edited(mtp_book, tmp_path / "edited.xlsx", {
        "in_w1_api_input_per_million": 2.0, "in_w1_api_output_per_million": 8.0,
        "in_w1_spec_acceptance_length": 2.4, "in_w1_spec_draft_tokens": 2})
    back = read_workbook(edited)
    assert sorted(c.field for c in back.changes) == [
        "costs.api_input_per_million.deepseek-r1", "costs.api_output_per_million.deepseek-r1",
        "workloads[0].speculative.acceptance_length", "workloads[0].speculative.draft_tokens"]
    data = yaml.safe_load(MTP.read_text())
    data["costs"] = {"api_input_per_million": {"deepseek-r1": 2.0},
                     "api_output_per_million": {"deepseek-r1": 8.0}}
    data["workloads"][0]["speculative"] = {"method": "mtp", "draft_tokens": 2,
                                           "acceptance_length": 2.4}
    fresh = size(load(write_yaml(data, tmp_path / "edited.yaml")))
    again = size(back.loaded)
    assert again.to_json() == fresh.to_json()
    w = again.workloads[0].inputs
    assert (w["api_input_per_million"], w["api_output_per_million"]) == (2.0, 8.0)
    assert (w["spec_draft_tokens"], w["spec_acceptance_length"]) == (2.0, 2.4)
    # the account's API price is listed as such among the prices used
    api = [p for p in again.prices if p.item.startswith("api:deepseek-r1")]
    assert [(p.value, p.source) for p in api] == [
        (2.0, "account override (costs.api_input_per_million)"),
        (8.0, "account override (costs.api_output_per_million)")]


def test_draft_tokens_zero_turns_speculative_decoding_off(mtp_book: Path, tmp_path: Path
                                                         ) -> None:
    back = read_workbook(_edited(mtp_book, tmp_path / "off.xlsx", {"in_w1_spec_draft_tokens": 0}))
    assert size(back.loaded).workloads[0].inputs["spec_draft_tokens"] == 0.0
    assert back.loaded.req.workloads[0].speculative is None


@pytest.mark.parametrize(("name", "reason"), [
    ("in_w1_spec_draft_layers", "it follows from the draft method"),
    ("in_w1_spec_draft_cost", "a stated draft_cost replaces that layer"),
])
def test_speculative_cells_not_read_back_are_locked_and_refused_with_their_reason(
        mtp_book: Path, tmp_path: Path, name: str, reason: str) -> None:
    wb = openpyxl.load_workbook(mtp_book)
    cell = named_cell(wb, name)
    assert cell.protection.locked is not False  # not shown as an input
    wb.close()
    with pytest.raises(InputError) as exc:
        read_workbook(_edited(mtp_book, tmp_path / "x.xlsx", {name: 3}))
    assert reason in str(exc.value) and "describes the model" not in str(exc.value)
    # the cells that are read back stay inputs
    wb = openpyxl.load_workbook(mtp_book)
    for ok in ("in_w1_spec_draft_tokens", "in_w1_spec_acceptance_length",
               "in_w1_api_input_per_million"):
        assert named_cell(wb, ok).protection.locked is False, ok
    wb.close()


def test_speculative_cells_of_a_workload_without_it_are_locked_and_refused(tmp_path: Path
                                                                          ) -> None:
    book = tmp_path / "plain.xlsx"
    write_workbook(size(load(ROOT / "inputs" / "example.yaml")), book)
    wb = openpyxl.load_workbook(book)
    assert named_cell(wb, "in_w1_spec_draft_tokens").protection.locked is not False
    wb.close()
    with pytest.raises(InputError) as exc:
        read_workbook(_edited(book, tmp_path / "x.xlsx", {"in_w1_spec_draft_tokens": 2}))
    assert "speculative decoding is off for this workload" in str(exc.value)


def test_an_edited_embedding_api_price_reads_back_as_the_accounts(tmp_path: Path) -> None:
    """inputs/rag-knowledge-base.yaml: the Inputs sheet's hosted embedding API price (the
    catalog's USD 0.02 per million tokens) edited to 0.05; the old code refused it with 'it is
    not a requirements field; set it in the requirements', which had no field for it."""
    shipped = ROOT / "inputs" / "rag-knowledge-base.yaml"
    base = size(load(shipped))
    book = tmp_path / "rag.xlsx"
    write_workbook(base, book)
    embed = next(w for w in base.retrieval if w.kind == "embed" and w.best is not None)
    assert embed.best is not None and embed.best.values["api_per_million_tokens"] == 0.02
    back = read_workbook(_edited(book, tmp_path / "edited.xlsx", {"in_api_embed": 0.05}))
    assert [c.field for c in back.changes] == ["costs.retrieval_api_per_million.embed"]
    data = yaml.safe_load(shipped.read_text())
    data.setdefault("costs", {})["retrieval_api_per_million"] = {"embed": 0.05}
    fresh = size(load(write_yaml(data, tmp_path / "edited.yaml")))
    again = size(back.loaded)
    assert again.to_json() == fresh.to_json()
    moved = next(w for w in again.retrieval if w.name == embed.name)
    assert moved.best is not None and moved.best.values["api_per_million_tokens"] == 0.05


def test_the_embedding_api_price_is_in_the_accounts_currency(tmp_path: Path) -> None:
    """The catalog's USD 0.02 per million tokens in a EUR account at 0.92 EUR per USD is
    EUR 0.0184, as the language models' API prices are converted (the old code used 0.02)."""
    data = yaml.safe_load((ROOT / "inputs" / "rag-knowledge-base.yaml").read_text())
    data["account"]["currency"] = "EUR"
    data.setdefault("costs", {})["usd_exchange_rate"] = 0.92
    r = size(load(write_yaml(data, tmp_path / "eur.yaml")))
    embed = next(w for w in r.retrieval if w.kind == "embed" and w.best is not None)
    assert embed.best is not None
    assert embed.best.values["api_per_million_tokens"] == pytest.approx(0.02 * 0.92)


# --- 2. the address `serve` prints for a wildcard bind ----------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_serve_on_every_network_prints_addresses_one_can_open(
        host: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Old code printed http://0.0.0.0:PORT/ (or http://[::]:PORT/), which no browser opens."""
    import socket

    import uvicorn

    from llmsizer.web import server

    if host == "::" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    with socket.socket() as s:  # a free port: serve binds it once before printing
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ran: list[tuple[str, int]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **_: ran.append((host, port)))
    token = "T" * 20
    try:
        server.serve(host, port, token)
    except Exception as exc:  # an IPv6-less container cannot bind '::'
        pytest.skip(f"cannot bind {host}: {exc}")
    lines = capsys.readouterr().out.splitlines()
    loop = "[::1]" if host == "::" else "127.0.0.1"
    assert lines == [
        f"llmsizer serve: open http://{socket.gethostname()}:{port}/?token={token} from other "
        "machines  (every request must carry the token)",
        f"llmsizer serve: open http://{loop}:{port}/?token={token} on this machine"]
    assert ran == [(host, port)]  # uvicorn still listens on the address asked for
    assert not any("0.0.0.0" in ln or "[::]" in ln for ln in lines)


def test_serve_on_one_address_prints_it() -> None:
    from llmsizer.web.server import open_lines

    assert open_lines("127.0.0.1", 8000, None) == [
        "llmsizer serve: open http://127.0.0.1:8000/  (this machine only)"]
    assert open_lines("10.1.2.3", 8080, "t" * 16) == [
        f"llmsizer serve: open http://10.1.2.3:8080/?token={'t' * 16}  (every request must "
        "carry the token)"]


# --- 3. fidelity --summary: reasons per unread row --------------------------------------------


def test_fidelity_summary_says_a_row_counts_under_each_of_its_reasons() -> None:
    """measured_blackwell_moe.csv: 40 rows not interpreted, 58 reasons among them (old code
    headed the reasons as 'rows per reason' under 'not interpreted'; 44 / 62 before session
    24 read the GB200 FP4 8k/1k low-latency pair from its launch script)."""
    from click.testing import CliRunner

    from llmsizer.cli import main

    out = CliRunner().invoke(main, ["fidelity", str(DATA / "measured_blackwell_moe.csv"),
                                    "--summary"]).output.splitlines()
    head = next(i for i, ln in enumerate(out) if "rows predicted;" in ln)
    counts = [int(ln[:5]) for ln in out[head + 1:] if ln[:5].strip().isdigit()]
    unread = int(out[head].split("; ")[1].split()[0])
    assert (unread, sum(counts)) == (40, 58)
    assert out[head].endswith(f"{unread} not interpreted.")
    assert out[head + 1] == ("rows per reason (a row with several reasons counts under each: "
                             f"{sum(counts)} in all):")


# --- 6. SIGTERM ends a batch with 143 ---------------------------------------------------------


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32",
                    reason="POSIX signals")
def test_sigterm_during_a_batch_of_the_shipped_inputs_exits_143(tmp_path: Path) -> None:
    """`timeout`, a CI runner or a scheduler stops a batch with SIGTERM: exit 128 + 15 = 143
    (the old code exited 130, Ctrl-C's code), the finished accounts kept."""
    shipped = sorted((ROOT / "inputs").glob("*.yaml"))
    assert len(shipped) >= 10
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "llmsizer.cli", "report", str(ROOT / "inputs"),
                             "--out", str(out), "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None and not list(out.glob("*.pdf")):
            time.sleep(0.05)
        assert proc.poll() is None, "the batch ended before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert "terminated: finished accounts are kept; run again to complete the rest" in err
    assert "Traceback" not in err
    assert len(list(out.glob("*.pdf"))) < len(shipped)  # it did stop mid-batch


# --- 4. the Summary's cloud row under shared retrieval, after LibreOffice ---------------------


@pytest.mark.parametrize("name", ["rag-shared-cloud.yaml", "rag-shared-single-gpu-cloud.yaml"])
def test_summary_cloud_row_after_recalculation_is_the_jsons(name: str, tmp_path: Path) -> None:
    """An embedder on a chat group's idle GPUs rents only what that group's instances do not
    carry (retrieval_cloud_gpus): 0 GPUs in 8-GPU instances (rag-shared-cloud: the reranker
    rents its own 4 GPUs' whole 8-GPU instance), 1 GPU where the cloud sells single GPUs. The
    recalculated Retrieval row of the GPUs rented (cloud_gpus_rented, whole instances: review
    round 22, its group's cloud_gpus; before, retrieval_cloud_gpus and the reranker's 4), the
    Summary's cloud cost per group and its total are the JSON's."""
    from support.libreoffice import read_values, recalculate

    from llmsizer.documents.workbook.retrieval_sheet import retrieval_cell

    r = size(load(DATA / name))
    book = tmp_path / "book.xlsx"
    write_workbook(r, book)
    wb = openpyxl.load_workbook(book)
    summary = wb["Summary"]
    (row,) = [c.row for c in summary["A"]
              if c.value == "Cloud cost per year (its share, rented at the cloud tier)"]
    cells = {c.value: c.coordinate for c in summary[row] if isinstance(c.value, str)}
    (total_col,) = [c.column for r_ in summary.iter_rows(max_row=8) for c in r_
                    if c.value == "Total (account plan)"]
    wb.close()
    lo = read_values(recalculate([book], tmp_path / "out", timeout=300)[book])
    groups = r.plan.retrieval_groups
    assert groups
    for j, g in enumerate(groups):
        gpus = retrieval_cell(j, "cloud_gpus_rented").split("!")[1]
        assert lo["Retrieval"][gpus] == g.cloud_gpus, g.workload
        # session 25: the Summary reads the cost as rented (a guest may rent alone)
        ref = cells[f"={retrieval_cell(j, 'retrieval_cloud_cost')}"]
        assert lo["Summary"][ref] == pytest.approx(g.annual_cost_cloud, rel=1e-12), g.workload
    total = lo["Summary"][f"{openpyxl.utils.get_column_letter(total_col)}{row}"]
    assert r.totals.annual_cost_cloud is not None
    assert total == pytest.approx(r.totals.annual_cost_cloud, rel=1e-12)
    # the figures tests/test_retrieval_cloud.py derives from the catalog's offers (session
    # 24: storage per GPU rented, 2,100 a GPU: 388,224 and 3 x 3.99 x 8,760 + 8,400 before)
    want = {"rag-shared-cloud.yaml": ([0, 8], 405_024.0),
            "rag-shared-single-gpu-cloud.yaml": ([1], 3 * (3.99 * 8760 + 2100))}[name]
    assert ([g.cloud_gpus for g in groups], total) == (want[0], pytest.approx(want[1]))


# --- 5. cloud-tier what-if rows an account's own price makes repeat ---------------------------


def test_cloud_tier_rows_are_listed_only_where_a_tier_changes_the_price(tmp_path: Path) -> None:
    """inputs/offline-summarisation.yaml prices its L40S, H100 and H200 cloud hours itself:
    the four cloud-tier rows all showed GBP 85,476 (the old code listed them); without those
    prices the catalog's tiers differ and the rows are listed, each its own figure."""
    shipped = ROOT / "inputs" / "offline-summarisation.yaml"
    own = size(load(shipped))
    assert own.totals.annual_cost_cloud is not None
    assert not [s for s in own.sensitivity if s.input == "cloud_tier_what_if"]
    assert {s.name for s in own.sensitivity} >= {"gpu_price_-30%", "load_0.3"}
    book = tmp_path / "own.xlsx"
    write_workbook(own, book)
    wb = openpyxl.load_workbook(book)
    labels = [c.value for c in wb["Scenarios"]["A"]]
    wb.close()
    assert "GPU price" in labels and "Cloud price" not in labels

    data = yaml.safe_load(shipped.read_text())
    del data["costs"]["cloud_gpu_hour"]
    catalog = size(load(write_yaml(data, tmp_path / "catalog-prices.yaml")))
    tiers = [s.annual_cost_cloud for s in catalog.sensitivity
             if s.input == "cloud_tier_what_if"]
    assert len(tiers) == 4 and len(set(tiers)) == 4
