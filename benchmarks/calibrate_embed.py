"""Fit the retrieval model's GPU constants per encoder engine class on published encoder
throughputs, and cross-validate them.

    python benchmarks/calibrate_embed.py            # fit, print the tables
    python benchmarks/calibrate_embed.py --write    # ... and update docs/calibration.md

Data: tests/data/embedding_points.csv. Every prediction goes through the product
(llmsizer.sizing.fidelity_embed -> the retrieval calculation list), so the fitted constants
are the ones the product sizes with.

Method (deterministic): a grid over MFU (0.10-0.80 by 0.01) and the fixed time per batch
(0-4 ms by 0.05 ms); the pair with the least source-balanced error wins (the mean over
sources of each source's median |predicted / measured - 1|: every source counts once). One
pair is fitted on every row (the retrieval constants: the fallback); then each encoder engine
class with at least 5 rows (fidelity_embed.MIN_CLASS_ROWS) gets its own pair, fitted on its
rows alone. Cross-validation: leave one source out and leave one GPU type out, each fold
refitted the same way on the rest (a class whose rows all sit in the held-out group falls
back to the rest's every-row pair) and scored on what was left out. The fitted values are
copied by hand into catalogs/embedders.yaml (retrieval_constants and encoder_engines) with
this run's date; --write only rewrites the table between the markers of docs/calibration.md.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from llmsizer.model.catalog import load_catalog  # noqa: E402
from llmsizer.sizing.fidelity_embed import (  # noqa: E402
    MIN_CLASS_ROWS,
    catalog_table,
    cross_validate,
    fit,
    load,
    median_abs_error,
    score,
)

POINTS = ROOT / "tests" / "data" / "embedding_points.csv"
DOC = ROOT / "docs" / "calibration.md"
MARK = "calibrate_embed:table"


def _pct(x: float) -> str:
    return f"{x:.0%}"


def table() -> str:
    catalog = load_catalog()
    cases, skipped = load(POINTS, catalog)
    fitted, own = fit(cases, catalog)
    current = catalog_table(catalog)
    results = score(cases, catalog, fitted)
    chips = sorted({catalog.gpus[c.gpu].name for c in cases})
    lines = [
        f"{len(cases)} of {len(cases) + len(skipped)} rows predicted "
        f"({len({c.source for c in cases})} sources, {len({c.gpu for c in cases})} catalog GPUs: "
        f"{', '.join(chips)}; {len(skipped)} FP32 rows skipped).",
        "",
        "| engine class | rows | MFU | fixed ms per batch | fitted on | median abs error |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for e in catalog.encoder_engines:
        rs = [r for r in results if r.case.engine_class == e]
        k = fitted[e]
        on = "its rows" if e in own else f"every row (fewer than {MIN_CLASS_ROWS} of its own)"
        same = "" if (k["mfu_encode"], k["encode_batch_overhead_ms"]) == (
            current[e]["mfu_encode"], current[e]["encode_batch_overhead_ms"]) else " (catalog differs)"
        lines.append(f"| {e} | {len(rs)} | {k['mfu_encode']:.2f} | "
                     f"{k['encode_batch_overhead_ms']:.2f} | {on}{same} | "
                     f"{_pct(median_abs_error(rs)) if rs else '-'} |")
    lines += [f"| **all rows, in sample** | {len(results)} | | | | "
              f"**{_pct(median_abs_error(results))}** |", "",
              "| held out (refitted on the rest) | rows scored | median abs error |",
              "|---|---:|---:|"]
    for by in ("source", "gpu"):
        folds = cross_validate(cases, catalog, by)
        pooled = [r for _, _, rs in folds for r in rs]
        for held, _, rs in folds:
            name = "/".join(held.removeprefix("github:").split("/")[:2])
            lines.append(f"| {by}: {name} | {len(rs)} | {_pct(median_abs_error(rs))} |")
        # one decimal: the acceptance target (20 %) is read against this line
        lines.append(f"| **leave one {by} out, pooled** | {len(pooled)} | "
                     f"**{median_abs_error(pooled):.1%}** |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite docs/calibration.md's table")
    args = ap.parse_args()
    text = table()
    print(text)
    if args.write:
        doc = DOC.read_text(encoding="utf-8")
        pattern = re.compile(rf"(<!-- {MARK} -->\n).*?(<!-- /{MARK} -->)", re.S)
        if not pattern.search(doc):
            sys.exit(f"{DOC}: markers <!-- {MARK} --> not found")
        DOC.write_text(pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), doc),
                       encoding="utf-8")


if __name__ == "__main__":
    main()
