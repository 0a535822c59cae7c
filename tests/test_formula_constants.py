"""Numbers inside the workbook's formulas read as typed: finance reads them (the Assumptions
and calculation sheets, the PDF appendix's formulas). Once failed: 1 - 0.95 was written as
0.050000000000000044 in 28 formulas (the p95 wait's tail, the inter-token percentiles'
thresholds), found by review round 18."""

from __future__ import annotations

import re
from pathlib import Path

SNAPSHOT = Path(__file__).parent / "snapshots" / "example_formulas.txt"
# e, written as LOG's base (DESIGN §2 has LOG(x, base), not LN): the only long constant
E = "2.718281828459045"


def test_no_float_artefacts_in_the_calculation_formulas() -> None:
    long_numbers = re.compile(r"(?<![\w.])\d+\.\d{13,}")
    found = {m for line in SNAPSHOT.read_text("utf-8").splitlines()
             if not line.startswith("Catalog!")  # prices, as derived: not constants
             for m in long_numbers.findall(line)} - {E}
    assert not found, sorted(found)
