"""Compare two batch output folders account by account, quickly enough for 1,000 accounts:

    python benchmarks/compare_outputs.py REFERENCE_DIR OTHER_DIR [PROCESSES]

Each account's results JSON as ``scripts/fingerprint_outputs.py`` hashes it (version
aside), the PDF's text page by page (``pdftotext -layout``, the same function), and each
workbook's zip parts byte for byte, docProps (the timestamps) aside: a byte-identical sheet
XML means identical cells, formulas and cached values; a workbook whose parts differ is then
compared cell by cell with the script's own function. Prints the problems (missing or
different files); exits 1 if there is any. benchmarks/batch.py --scale fingerprints every
cell of every workbook instead, about 3 s an account."""

from __future__ import annotations

import hashlib
import sys
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from fingerprint_outputs import _json_lines, _pdf_lines, _workbook_lines


def _parts(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as z:
        return {n: hashlib.sha256(z.read(n)).hexdigest() for n in z.namelist()
                if not n.startswith("docProps/")}


def compare(args: tuple[Path, Path, str]) -> list[str]:
    """The problems of one account (its stem) in ``other`` against ``ref``."""
    ref, other, stem = args
    missing = [f"missing {stem}.{ext}" for ext in ("json", "xlsx", "pdf")
               if not (other / f"{stem}.{ext}").is_file()]
    if missing:
        return missing
    out = []
    if _json_lines(ref / f"{stem}.json") != _json_lines(other / f"{stem}.json"):
        out.append(f"json differs: {stem}")
    xa, xb = ref / f"{stem}.xlsx", other / f"{stem}.xlsx"
    if _parts(xa) != _parts(xb) and _workbook_lines(xa) != _workbook_lines(xb):
        out.append(f"xlsx differs: {stem}")
    if _pdf_lines(ref / f"{stem}.pdf") != _pdf_lines(other / f"{stem}.pdf"):
        out.append(f"pdf differs: {stem}")
    return out


def main() -> int:
    ref, other = Path(sys.argv[1]), Path(sys.argv[2])
    processes = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    stems = sorted(p.stem for p in ref.glob("*.json")
                   if p.stem != "batch" and not p.name.startswith("."))
    with ProcessPoolExecutor(processes) as ex:
        problems = [x for r in ex.map(compare, [(ref, other, s) for s in stems], chunksize=16)
                    for x in r]
    extra = sorted(p.name for p in other.glob("*.json")
                   if p.stem not in stems and p.stem != "batch" and not p.name.startswith("."))
    print(f"{len(stems)} accounts in {ref}; {other}: {len(problems)} problems, "
          f"{len(extra)} accounts not in the reference")
    for line in [*problems, *extra][:50]:
        print(" ", line)
    return 1 if problems or extra else 0


if __name__ == "__main__":
    sys.exit(main())
