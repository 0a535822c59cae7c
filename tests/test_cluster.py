"""`report --scheduler` (issue 25): a batch sized on a Dask cluster. A LocalCluster over
loopback (two worker processes, one thread each, no dashboard) stands in for machines
that share no file system with the client: the workers get every byte with the task."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_batch import make_accounts, valid_outputs

from llmsizer.runs import batch, cluster
from llmsizer.runs.outcome import Outcome

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]
N = 6


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as c:
        yield c.scheduler_address


@pytest.fixture(scope="module")
def accounts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return make_accounts(tmp_path_factory.mktemp("in"), N)


@pytest.fixture(scope="module")
def pool_out(tmp_path_factory: pytest.TempPathFactory, accounts: list[Path]) -> Path:
    """The same accounts through the local process pool (the default)."""
    out = tmp_path_factory.mktemp("pool")
    outcomes = batch.run_batch(accounts, out, jobs=2, force=False, templates=None)
    assert [o.status for o in outcomes] == ["ok"] * N
    return out


def fingerprints(out: Path) -> str:
    """scripts/fingerprint_outputs.py: the JSON bytes (version blanked), every workbook
    cell and the PDF text per page; not the timestamps in PDF and zip bytes."""
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "fingerprint_outputs.py"),
                           str(out)], check=True, capture_output=True, text=True).stdout


def stamps(out: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(out.glob(".*.stamp"))}


def test_cluster_outputs_equal_the_local_pools(scheduler: str, accounts: list[Path],
                                               pool_out: Path, tmp_path: Path) -> None:
    out = tmp_path / "cluster"
    outcomes = batch.run_batch(accounts, out, jobs=2, force=False, templates=None,
                               scheduler=scheduler)
    assert [o.status for o in outcomes] == ["ok"] * N
    assert [o.file for o in outcomes] == [str(a) for a in accounts]
    text = fingerprints(out)
    assert text.count(".pdf pages=") == N and text == fingerprints(pool_out)
    # the stamps are the ones a local run writes: a re-run on either engine skips them
    assert stamps(out) == stamps(pool_out) and len(stamps(out)) == N
    again = batch.run_batch(accounts, out, jobs=1, force=False, templates=None)
    assert [o.status for o in again] == ["skipped"] * N
    # no temp work left in the output folder
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".llmsizer-tmp")) == []


def test_a_worker_killed_mid_batch_loses_nothing(scheduler: str, accounts: list[Path],
                                                 pool_out: Path, tmp_path: Path) -> None:
    """SIGKILL one worker as soon as the first account is back: the accounts it held are
    sized by the other (or by its restarted replacement), every set is written once."""
    client = distributed.Client(scheduler, set_as_default=False)
    pids: dict[str, int] = client.run(os.getpid)
    client.close()
    assert len(pids) == 2
    victim = sorted(pids.values())[0]
    seen: list[Outcome] = []

    def on_done(o: Outcome, done: int, total: int) -> None:
        seen.append(o)
        if len(seen) == 1:
            os.kill(victim, signal.SIGKILL)

    out = tmp_path / "killed"
    outcomes = batch.run_batch(accounts, out, jobs=2, force=False, templates=None,
                               scheduler=scheduler, on_done=on_done)
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)  # it did die
    assert [o.status for o in outcomes] == ["ok"] * N
    assert sorted(o.stem for o in seen) == sorted(o.stem for o in outcomes)  # each once
    assert all(valid_outputs(out, o.stem) for o in outcomes)
    assert fingerprints(out) == fingerprints(pool_out)


def test_custom_templates_travel_with_the_task(scheduler: str, accounts: list[Path],
                                               tmp_path: Path) -> None:
    user = tmp_path / "tpl" / "partials"
    user.mkdir(parents=True)
    shipped = ROOT / "templates" / "partials" / "risks.html.j2"
    (user / "risks.html.j2").write_text(
        shipped.read_text(encoding="utf-8") + "<p>Sentinel from the client's templates</p>\n",
        encoding="utf-8")
    out = tmp_path / "tpl-out"
    outcomes = batch.run_batch(accounts[:2], out, jobs=1, force=False,
                               templates=tmp_path / "tpl", scheduler=scheduler)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    for o in outcomes:
        text = subprocess.run(["pdftotext", str(out / f"{o.stem}.pdf"), "-"], check=True,
                              capture_output=True, text=True).stdout
        assert "Sentinel from the client's templates" in text


def test_other_llmsizer_version_on_the_workers_is_refused(
        scheduler: str, accounts: list[Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from llmsizer.base.errors import InputError

    monkeypatch.setattr(cluster, "__version__", "0.0.0-client")  # the workers keep theirs
    with pytest.raises(InputError, match=r"2 of 2 Dask workers run other llmsizer code.*"
                                         r"this machine: llmsizer 0\.0\.0-client"):
        batch.run_batch(accounts[:2], tmp_path / "o", jobs=1, force=False, templates=None,
                        scheduler=scheduler)
    assert list((tmp_path / "o").glob("*.pdf")) == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_unreachable_scheduler_is_one_line_and_exit_2(accounts: list[Path], tmp_path: Path
                                                      ) -> None:
    env: dict[str, Any] = {**os.environ, "LLMSIZER_SCHEDULER": f"tcp://127.0.0.1:{_free_port()}"}
    t0 = time.monotonic()
    r = subprocess.run([*LLMSIZER, "report", str(accounts[0].parent), "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, env=env, timeout=60)
    took = time.monotonic() - t0
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(
        "error: cannot reach the Dask scheduler at 'tcp://127.0.0.1:"), r.stderr
    assert "Traceback" not in r.stderr
    assert took < 15, took
    assert list((tmp_path / "o").glob("*.pdf")) == []
