"""Fingerprint what `llmsizer report` wrote, to show a refactor changed no output.

    python scripts/fingerprint_outputs.py OUT_DIR > before.txt   # on the old commit
    python scripts/fingerprint_outputs.py OUT_DIR > after.txt    # on the new one
    diff before.txt after.txt                                    # empty: same outputs

Per account it prints the results JSON's SHA-256 (the version string blanked, since a
release may change it), every workbook cell (formula and cached value, sheet by sheet)
hashed per sheet, and the PDF's text (pdftotext -layout) hashed per page. PDF bytes and
workbook zip bytes carry timestamps and so are not compared, nor is batch.json (the
batch's log, with times).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import openpyxl


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _json_lines(path: Path) -> list[str]:
    raw = path.read_text(encoding="utf-8")
    # Byte identity, version aside: hash the file with the version value blanked in place.
    version = json.loads(raw).get("version")
    if isinstance(version, str):
        raw = raw.replace(json.dumps(version), '"-"', 1)
    return [f"{path.name} json {_sha(raw.encode())}"]


def _workbook_lines(path: Path) -> list[str]:
    out = []
    formulas = openpyxl.load_workbook(path, data_only=False)
    values = openpyxl.load_workbook(path, data_only=True)
    for ws in formulas.worksheets:
        cached = values[ws.title]
        cells = []
        for row in ws.iter_rows():
            for c in row:
                if c.value is None:
                    continue
                cells.append(f"{c.coordinate}={c.value!r}|{cached[c.coordinate].value!r}")
        out.append(f"{path.name} sheet {ws.title!r} cells={len(cells)} {_sha(chr(10).join(cells).encode())}")
    return out


def _pdf_lines(path: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True,
                          capture_output=True).stdout
    pages = text.split(b"\f")
    return [f"{path.name} pages={len(pages)} text {_sha(text)}"] + [
        f"{path.name} page {i + 1} {_sha(p)}" for i, p in enumerate(pages)]


def main(out_dir: str) -> None:
    root = Path(out_dir)
    for path in sorted(root.iterdir()):
        if path.name == "batch.json" or path.name.startswith("."):
            continue  # the batch log carries timestamps; dotfiles are locks and stamps
        if path.suffix == ".json":
            lines = _json_lines(path)
        elif path.suffix == ".xlsx":
            lines = _workbook_lines(path)
        elif path.suffix == ".pdf":
            lines = _pdf_lines(path)
        else:
            continue
        print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
