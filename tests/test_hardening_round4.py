"""Round 4 of hostile and clumsy use (brief X3): what rounds 1-3 did not try.

* the web app's document worker killed (the kernel's out-of-memory killer, an operator):
  every later download was an internal error until the server was restarted;
* ``serve --host 127.0.0.2`` (or ``::1`` on port 80) refused every request of its own
  browser as another site's (421), and ``--host ::1`` printed ``http://::1:8000/``;
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator

import openpyxl
import pytest
from fastapi.testclient import TestClient
from test_web_routes import fields, post

from llmsizer.web.app import create_app
from llmsizer.web.jobs import STOPPED, Busy, Pool


@pytest.fixture(scope="module")
def one_worker() -> Iterator[tuple[TestClient, object]]:
    app = create_app(workers=1)
    with TestClient(app) as c:
        yield c, app


def _kill_workers(app: object) -> int:
    executor = app.fastapi.state.pool._executor  # type: ignore[attr-defined]
    pids = [p.pid for p in executor._processes.values()]
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return len(pids)


def test_a_killed_document_worker_is_replaced(one_worker: tuple[TestClient, object],
                                               tmp_path: object) -> None:
    """Killed while idle: the next workbook is written (was: BrokenProcessPool, a 500, and
    every document after it too)."""
    client, app = one_worker
    items = fields(client.get("/").text)
    first = post(client, "/download/xlsx", items)
    assert first.status_code == 200, first.text[:300]
    assert _kill_workers(app) == 1
    time.sleep(0.5)
    again = post(client, "/download/xlsx", items)
    assert again.status_code == 200, again.text[:300]
    path = tmp_path / "again.xlsx"  # type: ignore[operator]
    path.write_bytes(again.content)
    assert "Summary" in openpyxl.load_workbook(path).sheetnames


def test_a_worker_killed_under_a_pdf_says_so_and_the_next_pdf_is_written(
        one_worker: tuple[TestClient, object]) -> None:
    client, app = one_worker
    items = fields(client.get("/").text)
    post(client, "/download/xlsx", items)  # the worker is up: the kill lands on the job
    started = post(client, "/download/pdf", items)
    job = re.search(r"/jobs/([A-Za-z0-9_-]+)", started.text)
    assert job, started.text
    _kill_workers(app)
    for _ in range(60):
        page = client.get(f"/jobs/{job.group(1)}").text
        if "Writing the PDF" not in page:
            break
        time.sleep(0.5)
    assert STOPPED in page and "internal error" not in page, page
    retry = post(client, "/download/pdf", items)
    job = re.search(r"/jobs/([A-Za-z0-9_-]+)", retry.text)
    assert job, retry.text
    for _ in range(240):
        if "pdf-ready" in client.get(f"/jobs/{job.group(1)}").text:
            break
        time.sleep(0.5)
    f = client.get(f"/jobs/{job.group(1)}/file")
    assert f.status_code == 200 and f.content[:5] == b"%PDF-"


def test_a_job_that_kills_its_worker_is_one_line_and_the_pool_goes_on() -> None:
    """The quick documents (workbook, re-read) wait on the job: a dead worker is the
    "try again" the page shows for a busy pool (was: BrokenProcessPool through the route)."""
    pool = Pool(1)
    try:
        with pytest.raises(Busy, match="stopped before it finished"):
            pool.run("xlsx", os.abort)  # the worker dies as the OOM killer would leave it
        assert pool.run("xlsx", os.getpid) != os.getpid()  # a fresh worker answers
    finally:
        pool.shutdown()


@pytest.mark.parametrize("base", ["http://127.0.0.2:8000", "http://[::1]", "http://[::1]:8000",
                                  "http://localhost:8000"])
def test_a_loopback_server_answers_every_loopback_address(base: str) -> None:
    with TestClient(create_app(), base_url=base) as c:
        assert c.get("/catalog/gpus").status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example", "[::1].evil",
                                  "127.0.0.1:80:80", "0x7f000001", "127.1"])
def test_a_name_that_only_resolves_to_loopback_is_still_refused(host: str) -> None:
    """DNS rebinding: only loopback addresses written as such, and localhost, pass."""
    with TestClient(create_app()) as c:
        assert c.get("/catalog/gpus", headers={"host": host}).status_code == 421


def test_serve_prints_an_ipv6_address_a_browser_can_open(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import uvicorn

    from llmsizer.web.server import serve

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    serve("::1", 8123, None)
    assert "open http://[::1]:8123/  (this machine only)" in capsys.readouterr().out
