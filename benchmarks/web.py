"""Load on `llmsizer serve` over loopback (issue #26): 4 clients send sizing updates (the
form as the browser posts it, the users changed on every request so the cache never answers),
each followed by the charts request the page then makes, while PDF downloads run at the same
time (start, poll the progress, fetch). Prints the p50/p95 latency of each (a sizing update:
the numbers, what the user waits for; the charts arrive after them), the errors, the server's
memory (its process and its document workers, resident) before and after, and the machine's
load average (the figures depend on what else runs).

    PYTHONPATH=src python benchmarks/web.py [--clients 4] [--updates 50] [--pdfs 4]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode


class _Fields(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[str, str]] = []
        self.inside = False
        self.select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == "account"
        if not self.inside:
            return
        if tag == "input" and a.get("name") and a.get("type") != "file" and (
                a.get("type") != "checkbox" or "checked" in a):
            self.items.append((a["name"] or "", a.get("value") or ""))
        elif tag == "select":
            self.select = a.get("name")
        elif tag == "option" and self.select and "selected" in a:
            self.items.append((self.select, a.get("value") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.select = None


def _post(url: str, items: list[tuple[str, str]]) -> bytes:
    req = urllib.request.Request(url, data=urlencode(items).encode(), method="POST",
                                 headers={"content-type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return bytes(r.read())


def _rss_kb(pid: int) -> int:
    """Resident memory of the process and its children (the document workers)."""
    total = 0
    pids = [pid]
    try:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                             text=True, check=False).stdout.split()
        pids += [int(p) for p in out]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--updates", type=int, default=50, help="sizing updates per client")
    ap.add_argument("--pdfs", type=int, default=4, help="PDF downloads, one after another")
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen([sys.executable, "-m", "llmsizer.cli", "serve", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                page = urllib.request.urlopen(base, timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.1)
        parser = _Fields()
        parser.feed(page)
        form = parser.items
        # warm up: one sizing and one PDF (the worker processes start), then measure memory
        _post(base + "size", form)
        sizing: list[float] = []
        drawing: list[float] = []
        pdf: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()

        def one_pdf() -> float:
            t = time.perf_counter()
            html = _post(base + "download/pdf", form).decode()
            job = re.search(r"/jobs/([A-Za-z0-9_-]+)", html)
            if not job:
                raise RuntimeError(html[:200])
            while True:
                state = urllib.request.urlopen(f"{base}jobs/{job.group(1)}", timeout=60).read()
                if b"pdf-ready" in state:
                    break
                if b"job-error" in state:
                    raise RuntimeError(state.decode()[:200])
                time.sleep(0.25)
            body = urllib.request.urlopen(f"{base}jobs/{job.group(1)}/file", timeout=60).read()
            if not body.startswith(b"%PDF-"):
                raise RuntimeError("not a PDF")
            return time.perf_counter() - t

        one_pdf()
        before = _rss_kb(server.pid)

        def sizer(k: int) -> None:
            for i in range(args.updates):
                users = str(100 + 7 * i + 1000 * k)  # never the same form twice: no cache hit
                items = [(n, users if n == "workloads[0].concurrent_users" else v)
                         for n, v in form]
                t = time.perf_counter()
                try:
                    body = _post(base + "size", items)
                    if b'id="headline"' not in body:
                        raise RuntimeError(body[:200].decode())
                    took = time.perf_counter() - t
                    # then the charts, as the page asks for them once the numbers are shown
                    t = time.perf_counter()
                    charts = _post(base + "charts", items)
                    if charts.count(b'<img class="chart"') < 2:
                        raise RuntimeError(charts[:200].decode())
                    with lock:
                        sizing.append(took)
                        drawing.append(time.perf_counter() - t)
                except Exception as exc:
                    with lock:
                        errors.append(f"size: {exc}")

        def pdfs() -> None:
            for _ in range(args.pdfs):
                try:
                    took = one_pdf()
                    with lock:
                        pdf.append(took)
                except Exception as exc:
                    with lock:
                        errors.append(f"pdf: {exc}")

        threads = [threading.Thread(target=sizer, args=(k,)) for k in range(args.clients)]
        threads.append(threading.Thread(target=pdfs))
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        after = _rss_kb(server.pid)

        def q(xs: list[float], p: float) -> float:
            return statistics.quantiles(xs, n=100)[p - 1] * 1000 if len(xs) > 1 else float("nan")

        print(f"{args.clients} clients x {args.updates} sizing updates, {args.pdfs} PDFs at the "
              f"same time, {wall:.1f} s wall")
        print(f"sizing update: n={len(sizing)} p50 {q(sizing, 50):.0f} ms  p95 {q(sizing, 95):.0f} ms")
        print(f"its charts:    n={len(drawing)} p50 {q(drawing, 50):.0f} ms  p95 {q(drawing, 95):.0f} ms")
        print(f"PDF download:  n={len(pdf)} p50 {q(pdf, 50):.0f} ms  p95 {q(pdf, 95):.0f} ms")
        print(f"errors: {len(errors)}" + ("".join(f"\n  {e}" for e in errors[:5])))
        print(f"server memory (server + document workers, resident): before {before / 1024:.0f} MB, "
              f"after {after / 1024:.0f} MB")
        print(f"load average (1 min) before {load_before:.1f}, after {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
