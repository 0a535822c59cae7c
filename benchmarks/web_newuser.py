"""A new user sizes the Acme example in the browser (issue #26's acceptance: "sized from the
quick start and its PDF downloaded in under a minute"). Playwright drives Debian's Chromium
against `llmsizer serve` on a free loopback port and does what a presales engineer new to
the app does for inputs/example.yaml:

1. open the page and take the Chat API quick start;
2. type the customer's name and the first workload (name, users, prompt and answer lengths,
   the speed and first-token targets), as a person types (``--typing-ms`` per key);
3. add the second workload from the RAG quick start and type its figures the same way;
4. wait until the recommendation shows both workloads, press "PDF proposal", wait for the
   document and download it.

Prints the wall time of each step and in all, and checks the downloaded PDF names the
customer and both workloads (pdftotext). What it cannot measure is the user's reading and
thinking: the typing delay stands for the keys, nothing for the pauses.

    PYTHONPATH=src python benchmarks/web_newuser.py [--typing-ms 60]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
# inputs/example.yaml's workloads, as the form names their fields
FIRST = {"name": "Internal assistant", "concurrent_users": "200", "prompt_tokens": "500",
         "output_tokens": "300", "targets.tokens_per_s_per_user": "30", "targets.ttft_s": "2"}
SECOND = {"name": "Contract RAG", "concurrent_users": "100", "prompt_tokens": "2000",
          "output_tokens": "500", "max_context_tokens": "8192", "prefix_cache_hit": "0.3",
          "targets.tokens_per_s_per_user": "33", "targets.ttft_s": "3"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _type(page: object, name: str, value: str, delay: int) -> None:
    box = page.locator(f'[name="{name}"]')  # type: ignore[attr-defined]
    box.fill("")
    box.type(value, delay=delay)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--typing-ms", type=int, default=60, help="delay per key (default 60 ms)")
    args = ap.parse_args()
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    from playwright.sync_api import sync_playwright

    port = _port()
    url = f"http://127.0.0.1:{port}/"
    t0 = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "llmsizer.cli", "serve", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=os.environ.copy())
    steps: list[tuple[str, float]] = []
    try:
        while True:
            try:
                urllib.request.urlopen(url + "static/app.css", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        steps.append(("server started", time.perf_counter() - t0))
        with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
            browser = p.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page(accept_downloads=True, viewport={"width": 1400, "height": 900})
            mark = time.perf_counter()

            def step(name: str) -> None:
                nonlocal mark
                now = time.perf_counter()
                steps.append((name, now - mark))
                mark = now

            page.goto(url)
            page.click("#start-chat")
            page.wait_for_selector("#headline")
            step("page open, Chat API quick start")
            _type(page, "account.name", "Acme Corp", args.typing_ms)
            for key, value in FIRST.items():
                _type(page, f"workloads[0].{key}", value, args.typing_ms)
            step("customer and first workload typed")
            page.click("#add-workload")
            page.wait_for_selector('[name="workloads[1].name"]')
            for key, value in SECOND.items():
                _type(page, f"workloads[1].{key}", value, args.typing_ms)
            page.wait_for_function(
                "() => [...document.querySelectorAll('#recommendation td')]"
                ".some(td => td.innerText === 'Contract RAG')", timeout=30000)
            step("second workload typed, both sized")
            headline = page.locator("#headline").inner_text()
            page.click("#dl-pdf")
            page.wait_for_selector("#pdf-ready", timeout=180000)
            with page.expect_download() as dl:
                page.click("#pdf-ready")
            pdf = Path(tmp) / "acme.pdf"
            dl.value.save_as(pdf)
            step("PDF written and downloaded")
            text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                                  check=True).stdout
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    total = sum(s for _, s in steps[1:])
    for name, seconds in steps:
        print(f"{name:40s} {seconds:6.1f} s")
    print(f"{'in all, from the open page':40s} {total:6.1f} s   (load average {os.getloadavg()[0]:.1f})")
    print(f"recommendation: {headline}")
    ok = all(w in text for w in ("Acme Corp", "Internal assistant", "Contract RAG"))
    print("PDF names the customer and both workloads:", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
