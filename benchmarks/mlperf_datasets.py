"""Recompute the prompt-length figures of ``catalogs/mlperf_datasets.yaml`` from their source.

MLCommons publishes no mean prompt length per MLPerf dataset; the catalog takes the mean of
the per-sample ``input_length`` column in the public summary CSVs of
github openshift-psap/performance-dashboard (``mlperf-data/summaries/``, commit
71007029fb5bced1d79808e7e64dc4c2af82ea55), extracted there from MLCommons' dataset files.
Download those CSVs (not shipped here) and run:

    python benchmarks/mlperf_datasets.py llama2-70b-99.csv mixtral-8x7b.csv llama3-1-405b.csv

It prints, per file, the rows, the mean / median / max input length and the mean reference
output length (which for mixtral-8x7b and llama3.1-405b equals MLCommons' published
tokens_per_sample, 144.84 and 684.68: the check that the files are the official datasets).
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path


def summarise_file(path: Path) -> str:
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    inputs = [float(r["input_length"]) for r in rows]
    outputs = [float(r["output_length"]) for r in rows]
    return (f"{path.name}: {len(rows)} rows; input mean {statistics.mean(inputs):.2f}, "
            f"median {statistics.median(inputs):g}, max {max(inputs):g}; "
            f"reference output mean {statistics.mean(outputs):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("csv", nargs="+", type=Path)
    for path in parser.parse_args().csv:
        print(summarise_file(path))


if __name__ == "__main__":
    main()
