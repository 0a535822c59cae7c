"""What session 21's loosened hypothesis hunt found (LLMSIZER_HYPOTHESIS_EXAMPLES, random
seeds: tests/support/hunting.py), each as the shrunk example with the number it must give.
Each test fails on the code before its fix."""

from __future__ import annotations

import copy

import pytest
import yaml
from test_bad_inputs_round14 import problems  # the loader's lines for a text

from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Option

CAT = load_catalog()

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


# --- a mixture of experts' third solve: the line's batch is checked ----------------------

# test_a_higher_percentile_never_needs_fewer_gpus (LLMSIZER_HYPOTHESIS_EXAMPLES=250, seed 2),
# shrunk: this account's H100 TP4 option met a 0.203125 s first token at the p95 and was
# refused at the p90, "missed even for one request (one request alone waits 210 ms)".
CLIFF = {"schema_version": 1, "account": {"name": "t"},
         "workloads": [{"name": "w0", "model": "qwen3-235b-a22b", "named_users": 233,
                        "requests_per_user_per_hour": 31.0, "peak_to_average": 2.0,
                        "prompt_tokens": 64, "output_tokens": 16,
                        "targets": {"response_time_s": 2.0, "ttft_p90_s": 0.203125}}],
         "hardware": {"gpus": ["h100-sxm"], "weight_precisions": ["fp8"],
                      "kv_precisions": ["fp8"]},
         "policy": {"headroom": 0, "survive_node_loss": False, "disaggregated": "never",
                    "deployment": "on_prem"}}
CLIFF_OPTION = "h100-sxm/fp8/kv-fp8/tp4/ep4/dell-xe9680"


def _cliff_option(percentile_key: str) -> Option:
    d = copy.deepcopy(CLIFF)
    targets = d["workloads"][0]["targets"]
    targets[percentile_key] = targets.pop("ttft_p90_s")
    r = size(load_from_text(yaml.safe_dump(d), "t.yaml"), CAT)
    [o] = [o for o in r.workloads[0].options if o.id == CLIFF_OPTION]
    return o


def test_a_line_past_the_first_token_cliff_falls_back_to_the_first_estimate() -> None:
    """The first solve (experts of the largest batch, 3 sequences: 28.8 % of them on the
    busiest GPU) finds no batch; the second (one sequence's, 13.4 %) allows 5. The line through
    (28.8 %, 0) and (13.4 %, 5) gives 5 - 32.39 x (21.7 % - 13.4 %) = 2.3 >= 2 at 2 sequences,
    but with 2 sequences' experts the first token's fixed part is 207.5 ms, over the 203.1 ms
    target: no batch there (the limit falls off a cliff, not along the line). The experts are
    now read at the first estimate, 1 sequence, whose limits allow it: 185.54 ms fixed +
    2.22 ms for its own prompt = 187.76 ms <= 203.1 ms, as at the p95 (the rows' values)."""
    o = _cliff_option("ttft_p90_s")
    v = {k: float(x) for k, x in o.values.items() if isinstance(x, int | float)}
    assert v["batch_experts_candidate"] == 2 and v["batch_per_replica_line"] == 0
    assert v["batch_experts_estimate"] == 1 and v["batch_per_replica_second"] == 5
    assert v["batch_experts_read"] == 1 and v["batch_per_replica"] == 1
    assert o.feasible, o.reason
    assert v["ttft_p90_ms"] == pytest.approx(v["ttft_fixed_ms"] + v["ttft_ms_per_seq"])
    assert v["ttft_p90_ms"] == pytest.approx(187.7566, abs=1e-3)
    assert v["ttft_p90_ms"] < 203.125
    p95 = _cliff_option("ttft_p95_s")
    assert p95.feasible and float(p95.values["gpus"]) == v["gpus"] == 8
