"""Cross-check the shipped catalogs against the project's verified reference tables.

    PYTHONPATH=src python scripts/check_catalog_reference.py [REFERENCE_DIR]

REFERENCE_DIR holds gpu_specs.csv and prices.csv; it defaults to tests/data/reference (copies
of the project's reference folder, /work/shared/reference, refreshed by hand; pass that
folder to check against a newer copy). Prints one line per difference: GPU specs (units as
the reference README and gpus.yaml's header give them), purchase and cloud prices (value,
date, provider) and hosted-API prices, platform power and GPUs per node (gpu_specs.md and
infrastructure.md, carried in tests/catalog_reference.py with their sources), racks and
NICs. "flagged": the catalog entry says why it differs (an estimate, a source of its own);
"MISMATCH": it does not. Exit status 1 on any MISMATCH; tests/test_catalog_reference.py
asserts the same checks.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import catalog_reference as ref


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ref.DATA
    findings = ref.all_findings(folder)
    for f in findings:
        print(f)
    bad = [f for f in findings if f.startswith("MISMATCH")]
    print(f"{len(findings)} findings, {len(bad)} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
