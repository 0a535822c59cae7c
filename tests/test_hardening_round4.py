"""Round 4 of hostile and clumsy use (brief X3): what rounds 1-3 did not try.

* the web app's document worker killed (the kernel's out-of-memory killer, an operator):
  every later download was an internal error until the server was restarted;
* ``serve --host 127.0.0.2`` (or ``::1`` on port 80) refused every request of its own
  browser as another site's (421), and ``--host ::1`` printed ``http://::1:8000/``;
* U+2028, U+2029 and U+0085 (pasted from a web page) are line breaks to YAML only: the error
  named a line the editor did not show, about a missing ':';
* a hand-made request (``/workload?index=abc``, an upload's file sent as text) answered
  FastAPI's 422 JSON as the whole page;
* an account past ~23 workloads (the schema allows 50) could not be updated, downloaded or
  uploaded over in the web app: Starlette's default limit of 1,000 form fields;
* a path longer than the file system allows (``--out``, an input, ``--templates``): a
  traceback (``Path.exists`` raises ENAMETOOLONG);
* ``serve`` on a port in use, or on an address not of this machine: "open http://…" then
  uvicorn's error and exit 3;
* the Dask scheduler lost mid-batch: each account's row was distributed's exception with
  its internal task key, and distributed.client's traceback reached the terminal.
"""

from __future__ import annotations

import contextlib
import copy
import html
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import openpyxl
import pytest
import yaml
from fastapi.testclient import TestClient
from test_batch import make_accounts, valid_outputs
from test_web_routes import fields, post

from llmsizer.base.errors import InputError
from llmsizer.inputs.yamlsafe import load_file
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
    # the web box starts with a capital (review 25b: a sentence, not a CLI "error: " line)
    assert STOPPED[0].upper() + STOPPED[1:] in page and "internal error" not in page, page
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


# ---- characters YAML reads as line breaks though editors show none --------------------------

_EXAMPLE = (Path(__file__).parent.parent / "inputs" / "example.yaml").read_text("utf-8")


@pytest.mark.parametrize(("char", "words"), [("\u2028", "line separator U+2028"),
                                              ("\u2029", "paragraph separator U+2029"),
                                              ("\x85", "next-line character U+0085")])
def test_a_line_break_only_yaml_sees_is_named_where_the_editor_shows_it(
        char: str, words: str, tmp_path: Path) -> None:
    """Pasted into a name (line 5 of the example), PyYAML broke the line there: the error was
    "could not find expected ':'" on line 7, a line the editor does not have there."""
    path = tmp_path / "acme.yaml"
    path.write_text(_EXAMPLE.replace("name: Acme Corp", f"name: Acme{char}Corp", 1), "utf-8")
    with pytest.raises(InputError) as err:
        load_file(path)
    assert (err.value.line, err.value.column) == (5, 13)
    assert words in err.value.message and "delete it" in err.value.message
    assert "expected ':'" not in err.value.message


def test_the_web_forms_text_with_such_a_character_is_checked_as_its_field(
        one_worker: tuple[TestClient, object]) -> None:
    """The form's YAML writes them escaped: notes keep them and size; a name holding one is
    the name's error, beside the field, not an error in a file the user never saw."""
    client, _ = one_worker
    items = fields(client.get("/").text)
    notes = [(k, "first\u2028second" if k == "account.notes" else v) for k, v in items]
    if not any(k == "account.notes" for k, _ in notes):
        notes.append(("account.notes", "first\u2028second"))
    r = post(client, "/size", notes)
    assert r.status_code == 200 and "U+2028" not in r.text, r.text[:500]
    named = [(k, "Acme\u2028Corp" if k == "account.name" else v) for k, v in items]
    r = post(client, "/size", named)
    assert "must be one line of text" in html.unescape(r.text)
    assert "U+2028, an invisible character" not in r.text


def test_a_hand_made_address_gets_the_apps_error_page_not_json(
        one_worker: tuple[TestClient, object]) -> None:
    """/workload?index=abc answered FastAPI's 422 JSON list of errors as the whole page."""
    client, _ = one_worker
    r = client.get("/workload?index=abc")
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert '"detail"' not in r.text and 'href="/"' in r.text
    found = re.search(r'id="problem">([^<]*)<', r.text)
    assert found and "/workload: 'index' must be a whole number" in html.unescape(
        found.group(1)), r.text[:300]


@pytest.mark.parametrize(("url", "words"), [
    ("/upload/yaml", "choose a requirements YAML file first, then press Open"),
    ("/upload/workbook", "choose a workbook (.xlsx) written by llmsizer first, then press "
                         "Re-read")])
def test_an_upload_whose_file_is_text_is_no_file_chosen(
        one_worker: tuple[TestClient, object], url: str, words: str) -> None:
    """A form whose `file` is a text field (not a browser's): FastAPI's 422 JSON was the
    page; it is the page's own "choose a file first" now, with the form kept."""
    client, _ = one_worker
    r = client.post(url, data={"file": "not a file"})
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert '"detail"' not in r.text and words in html.unescape(r.text), r.text[:300]


def test_an_account_with_the_schemas_fifty_workloads_updates_in_the_web(
        one_worker: tuple[TestClient, object], tmp_path: Path) -> None:
    """About 40 fields a workload: past ~23 workloads every update, download and upload
    of the form was refused by Starlette's default of 1,000 fields ("Too many fields")."""
    client, _ = one_worker
    doc = yaml.safe_load(_EXAMPLE)
    first = doc["workloads"][0]
    doc["workloads"] = [{**copy.deepcopy(first), "name": f"Assistant {i}",
                         "concurrent_users": 5} for i in range(50)]  # the schema's limit
    text = yaml.safe_dump(doc, sort_keys=False)
    (tmp_path / "fifty.yaml").write_text(text)
    load_file(tmp_path / "fifty.yaml")  # valid for the CLI
    page = client.post("/upload/yaml", files={"file": ("fifty.yaml", text.encode())})
    assert page.status_code == 200, page.text[:300]
    items = fields(page.text)
    assert len(items) > 1000
    r = post(client, "/size", items)
    assert r.status_code == 200 and "Too many fields" not in r.text, r.text[:300]
    got = post(client, "/download/json", items)
    assert got.status_code == 200, got.text[:300]
    assert len(json.loads(got.content)["workloads"]) == 50
    kept = client.post("/upload/yaml", data=dict(items[:1]),
                       files={"file": ("bad.yaml", b"x: [\n")})
    assert "Too many fields" not in kept.text


# ---- the Dask scheduler lost mid-batch -------------------------------------------------------

_CLUSTER = """
import sys, time, distributed
if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as c:
        print(c.scheduler_address, flush=True)
        time.sleep(600)
"""


def test_a_scheduler_lost_mid_batch_names_it_for_each_account_without_a_traceback(
        tmp_path: Path) -> None:
    """The scheduler killed once the first account is back: the others were rows of
    "FutureCancelledError: llmsizer-4-acct-003-… cancelled for reason: scheduler-connection-
    lost" and distributed.client's own traceback reached the terminal (its logger has a level
    of its own, so quieting "distributed" missed it)."""
    pytest.importorskip("distributed")
    accounts = make_accounts(tmp_path / "in", 24)
    cluster = subprocess.Popen([sys.executable, "-c", _CLUSTER], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        address = (cluster.stdout.readline() if cluster.stdout else "").strip()
        assert address.startswith("tcp://"), address
        out = tmp_path / "out"
        proc = subprocess.Popen([sys.executable, "-m", "llmsizer.cli", "report",
                                 str(accounts[0].parent), "--out", str(out), "--quiet",
                                 "--scheduler", address], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        first = proc.stderr.readline() if proc.stderr else ""  # the rows go to stderr
        os.killpg(cluster.pid, signal.SIGKILL)  # the scheduler and its workers
        rest, err = proc.communicate(timeout=240)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(cluster.pid, signal.SIGKILL)
        cluster.wait(30)
    assert " ok " in first, first + rest + err
    assert proc.returncode == 1, err[-2000:]
    assert "Traceback" not in err + rest and "FutureCancelledError" not in rest, err[-2000:]
    doc = json.loads((out / "batch.json").read_text("utf-8"))
    lost = [a for a in doc["accounts"] if a["status"] == "error"]
    assert lost, "the scheduler went before the last account was back"
    for a in lost:
        assert a["message"].startswith(f"the connection to the Dask scheduler {address} was "
                                       "lost before this account was sized"), a["message"]
        assert not list(out.glob(f"{a['stem']}.*"))  # nothing half-written for it
    for a in doc["accounts"]:
        if a["status"] == "ok":
            assert valid_outputs(out, a["stem"])


# ---- a name longer than the file system allows -----------------------------------------------

_LONG = "x" * 300  # NAME_MAX is 255 bytes: Path.exists() raises ENAMETOOLONG, not False


@pytest.mark.parametrize("args", [
    ("{example}", "--out", "{long}"),                      # one account
    ("{inputs}", "--out", "{long}", "--quiet"),             # a batch
    ("{example}", "--out", "{tmp}/{long}/sub"),
    ("{long}.yaml", "--out", "{tmp}/o"),                    # the input
    ("{inputs}", "{long}.yaml", "--out", "{tmp}/o"),
    ("{example}", "--out", "{tmp}/o", "--templates", "{long}"),
])
def test_a_name_too_long_is_one_line_not_a_traceback(args: tuple[str, ...],
                                                      tmp_path: Path) -> None:
    root = Path(__file__).parent.parent
    names = {"example": str(root / "inputs" / "example.yaml"), "long": _LONG,
             "inputs": str(root / "inputs"), "tmp": str(tmp_path)}
    argv = [a.format(**names) for a in args]
    proc = subprocess.run([sys.executable, "-m", "llmsizer.cli", "report", *argv],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(root / "src")})
    assert proc.returncode == 2, proc.stderr[-1500:]
    assert "Traceback" not in proc.stderr, proc.stderr[-1500:]
    [line] = proc.stderr.strip().splitlines()
    # the system's "File name too long" in a user's words, with what to do (session 24)
    # an output folder: the system's "File name too long" in a user's words (session 24);
    # an input file: click's message, naming the file
    assert line.startswith("error: ") and (
        line.endswith(": the name is too long; choose a shorter path")
        if "cannot create output folder" in line else "File name too long" in line), line
    assert list(tmp_path.iterdir()) == [], "nothing written"


def test_serve_on_a_port_in_use_or_a_foreign_address_is_one_line_and_exit_2() -> None:
    """Both printed "open http://…" first, then uvicorn's "ERROR: [Errno 98] …", and exited
    3, the code that means "no option meets the targets"."""
    import socket

    root = Path(__file__).parent.parent
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for args, words in ((["--port", port], "(Address already in use): another program "
                                               "(or another llmsizer serve) uses it"),
                            (["--host", "192.0.2.1", "--token", "t" * 20, "--port", port],
                             "give an address of this machine with --host")):  # TEST-NET-1
            proc = subprocess.run([sys.executable, "-m", "llmsizer.cli", "serve", *args],
                                  capture_output=True, text=True, timeout=120,
                                  env={**os.environ, "PYTHONPATH": str(root / "src")})
            assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
            [line] = proc.stderr.strip().splitlines()
            assert line.startswith("error: cannot listen on ") and words in line, line
