"""Fit the retrieval model's two GPU constants on published encoder throughputs, and
cross-validate them.

    python benchmarks/calibrate_embed.py            # fit, print the tables
    python benchmarks/calibrate_embed.py --write    # ... and update docs/calibration.md

Data: tests/data/embedding_points.csv. Every prediction goes through the product
(llmsizer.sizing.fidelity_embed -> the retrieval calculation list), so the fitted constants
are the ones the product sizes with.

Method (deterministic): a grid over MFU (0.10-0.80 by 0.01) and the fixed time per batch
(0-4 ms by 0.05 ms); the pair with the least source-balanced error wins (the mean over
sources of each source's median |predicted / measured - 1|: every source counts once).
Cross-validation: leave one source out and leave one GPU type out, each fold refitted on the
rest and scored on what was left out. The fitted values are copied by hand into
catalogs/embedders.yaml (retrieval_constants) with this run's date; --write only rewrites
the table between the markers of docs/calibration.md.
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
    EmbedResult,
    catalog_constants,
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


def _line(label: str, k: dict[str, float], results: list[EmbedResult]) -> str:
    return (f"| {label} | {len(results)} | {k['mfu_encode']:.2f} | "
            f"{k['encode_batch_overhead_ms']:.2f} | {_pct(median_abs_error(results))} |")


def table() -> str:
    catalog = load_catalog()
    cases, skipped = load(POINTS, catalog)
    fitted, _ = fit(cases, catalog)
    current = catalog_constants(catalog)
    lines = [
        f"{len(cases)} of {len(cases) + len(skipped)} rows predicted "
        f"({len({c.source for c in cases})} sources, {len({c.gpu for c in cases})} catalog GPUs; "
        f"{len(skipped)} FP32 rows skipped).",
        "",
        "| fit / fold | rows scored | MFU | fixed ms per batch | median abs error |",
        "|---|---:|---:|---:|---:|",
        _line("catalog constants, all rows", current, score(cases, catalog, current)),
        _line("fitted on all rows (in sample)", fitted, score(cases, catalog, fitted)),
    ]
    for by in ("source", "gpu"):
        folds = cross_validate(cases, catalog, by)
        pooled = [r for _, _, rs in folds for r in rs]
        for held, k, rs in folds:
            name = "/".join(held.removeprefix("github:").split("/")[:2])
            lines.append(_line(f"leave {by} out: {name}", k, rs))
        lines.append(f"| **leave one {by} out, pooled** | {len(pooled)} | | | "
                     f"**{_pct(median_abs_error(pooled))}** |")
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
