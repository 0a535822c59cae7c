"""A live update's chart drawing past its time limit (web/jobs.py ``Drawer``): the chart area
says so, the hung worker process is ended and a fresh one draws the next charts. Real worker
processes (spawn) run a real slow drawing, with a small DRAW_TIMEOUT_S; the drawing had no
limit, so a hung one held the only worker and every later page waited behind it."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from test_web_jobs_timeout import _ended, _pid_of, _wait

from llmsizer.web import jobs, render
from llmsizer.web.jobs import Drawer


def _draw(yaml_text: str, configs: object = ()) -> str:
    """In the worker, in place of the charts: ``hang:PIDFILE`` writes its process id and
    sleeps past any limit; anything else returns the process id that drew it."""
    if yaml_text.startswith("hang:"):
        Path(yaml_text.removeprefix("hang:")).write_text(str(os.getpid()))
        time.sleep(600)
    return f"<section id=\"charts\">{os.getpid()}</section>"


def _drawn_by(html: str) -> int:
    return int(html.removeprefix("<section id=\"charts\">").removesuffix("</section>"))


@pytest.fixture
def drawer(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(jobs, "DRAW_TIMEOUT_S", 3.0)
    monkeypatch.setattr(render, "charts_html", _draw)  # Drawer.draw reads it when called
    d = Drawer()
    d.start(warm=False)
    yield d
    d.shutdown()


def test_a_hung_drawing_says_so_and_its_worker_is_replaced(drawer: Drawer,
                                                           tmp_path: Path) -> None:
    first = _drawn_by(asyncio.run(drawer.draw("x")))
    assert first != os.getpid()  # drawn in the worker, not by the server
    pidfile = tmp_path / "hung.pid"
    html = asyncio.run(drawer.draw(f"hang:{pidfile}"))
    hung = _pid_of(pidfile)
    assert hung == first
    assert html.lstrip().startswith("<section id=\"charts\">")  # the page's chart area
    assert "The charts took longer than 3 s to draw" in html
    _wait(f"process {hung} ended", lambda: _ended(hung))
    after = _drawn_by(asyncio.run(drawer.draw("x")))
    assert after not in (hung, os.getpid())  # a fresh worker, not the server's fallback


def test_a_drawing_queued_behind_a_hung_one_runs_in_the_fresh_worker(
        drawer: Drawer, tmp_path: Path) -> None:
    pidfile = tmp_path / "hung.pid"

    async def both() -> list[str]:
        hung = asyncio.ensure_future(drawer.draw(f"hang:{pidfile}"))
        while not pidfile.exists():  # the hung drawing holds the only worker
            await asyncio.sleep(0.05)
        return list(await asyncio.gather(hung, drawer.draw("x")))

    late, queued = asyncio.run(both())
    hung = int(pidfile.read_text())
    assert "took longer than" in late
    # cut off by the first one's limit (its worker ended), then drawn by the fresh worker
    assert _drawn_by(queued) not in (hung, os.getpid())
    _wait(f"process {hung} ended", lambda: _ended(hung))
