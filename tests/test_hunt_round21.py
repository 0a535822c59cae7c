"""What session 21's loosened hypothesis hunt found (LLMSIZER_HYPOTHESIS_EXAMPLES, random
seeds: tests/support/hunting.py), each as the shrunk example with the number it must give.
Each test fails on the code before its fix."""

from __future__ import annotations

import pytest
from test_bad_inputs_round14 import problems  # the loader's lines for a text

from llmsizer.inputs.loader import load_from_text

HEAD = "schema_version: 1\naccount:\n  name: Test Co\n"
CHAT = ("workloads:\n  - name: chat\n    model: llama-3.1-8b\n    concurrent_users: 20\n"
        "    prompt_tokens: 500\n    output_tokens: 300\n"
        "    targets: {tokens_per_s_per_user: 30}\n")


@pytest.mark.parametrize(("tail", "told"), [
    # test_workbook_recalc drew headroom 5E-324 (the smallest subnormal double): inside
    # 0..3, so it was sized, and the workbook's headroom cell and every formula using it read
    # #VALUE! (a spreadsheet holds nothing between 0 and 2.2e-308)
    ("policy:\n  headroom: 5e-324\n",
     "acme.yaml:12:3: policy.headroom: 5e-324 is nearer zero than a spreadsheet holds "
     "(2.2e-308 at the least): write 0 for none; allowed: a number from 0 to 3"),
    ("costs:\n  support_rate: 1.0e-310\n",
     "costs.support_rate: 1e-310 is nearer zero than a spreadsheet holds"),
    # in a mapping: the price's own key and line, and no '0' where 0 is not allowed
    ("costs:\n  gpu_prices:\n    h100-sxm: 4.9e-324\n",
     "acme.yaml:13:5: costs.gpu_prices.h100-sxm: 5e-324 is nearer zero than a spreadsheet "
     "holds (2.2e-308 at the least): write the value meant; allowed: a number more than 0"),
])
def test_a_subnormal_number_is_refused_with_its_field_and_range(tail: str, told: str) -> None:
    [line] = problems(HEAD + CHAT + tail)
    assert told in line, line


def test_the_smallest_normal_number_is_still_read() -> None:
    """2.3e-308 is a normal double: a spreadsheet holds it, so it is sized as written."""
    loaded = load_from_text(HEAD + CHAT + "policy:\n  headroom: 2.3e-308\n", "acme.yaml")
    assert loaded.req.policy.headroom == 2.3e-308
