"""A response time bounds the mean first token when no TTFT target is stated (decode.py
``target_ttft_ms``). Seed 000 reads a response time as a speed ("300 output tokens in 10
seconds = 30 tokens/sec per user", TTFT a separate target), and that stays; but an option whose
first token alone comes after the response time cannot give an answer within it, and one was
accepted: Llama-3.1-70B on 4 x L40S, 40,000-token prompts, a 46 s first token against a
16.7 s response time (76 GPUs recommended; this session's invariant hunt found the shape at
49 s). Since a 50-token answer's first token counts its own prompt's prefill once (session
18: it was counted in each of the 97 steps before it, past one prefill), that first token is
15.5 s (a 14.0 s prefill), and a 15 s response time asks one user for more speed (3.3 tok/s)
than the prompt's share of every step leaves (3.2): the cases below use 100,000-token
prompts, a 42.4 s first token, against 42 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from llmsizer.inputs.loader import load, load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Option

CAT = load_catalog()
ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ["example.yaml", "ref-a-7b-assistant.yaml", "ref-b-70b-rag.yaml",
           "enterprise-multi.yaml"]


def _option(model: str, gpu: str, tp: int, prompt: int, output: int, load_: dict[str, Any],
            targets: dict[str, float]) -> Option:
    """The one option (GPU, FP8 weights and KV, ``tp``) on the GPU's default platform."""
    d = {"schema_version": 1, "account": {"name": "t"},
         "workloads": [{"name": "w0", "model": model, **load_, "prompt_tokens": prompt,
                        "output_tokens": output, "targets": targets}],
         "hardware": {"gpus": [gpu], "weight_precisions": ["fp8"], "kv_precisions": ["fp8"],
                      "tensor_parallel": [tp]},
         "policy": {"headroom": 0, "survive_node_loss": False, "disaggregated": "never"}}
    r = size(load_from_text(yaml.safe_dump(d), "t.yaml"), CAT)
    return next(o for o in r.workloads[0].options if o.id == f"{gpu}/fp8/kv-fp8/tp{tp}")


def _f(o: Option, name: str) -> float:
    return float(o.values[name])


LONG_PROMPT = ("llama-3.1-70b", "l40s", 4, 100_000, 50, {"requests_per_s": 0.3, "burstiness": 2})


def test_first_token_after_the_response_time_is_rejected_in_its_words() -> None:
    o = _option(*LONG_PROMPT, {"response_time_s": 42})
    one = _f(o, "ttft_one_user_ms")
    assert one > 42_000  # the case is what it claims: one request alone is past 42 s
    assert _f(o, "target_ttft_ms") == pytest.approx(42_000, rel=1e-12)
    assert o.reason == (f"the first token alone takes {one:,.0f} ms even for one request, "
                        "so no answer comes within the 42 s response time")
    assert _f(o, "gpus_purchased") == 0


def test_the_same_speed_stated_as_tokens_per_s_sets_no_first_token_bound() -> None:
    """The bound comes from the response time alone: 50 tokens / 42 s stated as a speed
    leaves the option accepted with its 42.4 s first token (no TTFT target, no bound)."""
    o = _option(*LONG_PROMPT, {"tokens_per_s_per_user": 50 / 42})
    assert o.reason == ""
    assert _f(o, "target_ttft_ms") == 0
    assert _f(o, "ttft_ms") > 42_000


def test_a_first_token_late_from_waiting_buys_smaller_batches() -> None:
    """Llama-3.1-8B on one L4, 20,000-token prompts: alone a request's first token takes
    3.4 s, but at the batch the speed allows (5) the wait for the prompts ahead makes it
    18.2 s (arrivals at 0.3/s, burstiness 2) against 16.7 s. The option now meets it with a
    smaller batch (4: 15.2 s; so more GPUs or the same), not rejected. (With 30 concurrent
    users the speed's batch of 5 met it, 14.8 s, once a short answer's first token counted
    each other prompt's prefill at most once: session 18.)"""
    args = ("llama-3.1-8b", "l4", 1, 20_000, 50, {"requests_per_s": 0.3, "burstiness": 2})
    bound = _option(*args, {"response_time_s": 16.7})
    speed = _option(*args, {"tokens_per_s_per_user": 50 / 16.7})
    assert speed.reason == "" and _f(speed, "ttft_ms") > 16_700  # what the bound corrects
    assert bound.reason == ""
    assert _f(bound, "ttft_ms") <= 16_700
    assert _f(bound, "slo_met") == 1
    assert _f(bound, "batch_per_replica") < _f(speed, "batch_per_replica")
    assert _f(bound, "gpus_purchased") >= _f(speed, "gpus_purchased")
    # the speed is still seed 000's output / response time
    assert _f(bound, "required_tokens_per_s_per_user") == pytest.approx(50 / 16.7, rel=1e-12)


def test_a_stated_ttft_stays_the_first_token_bound() -> None:
    """Seed 000's worked example (inputs/example.yaml, "Internal assistant": 300 tokens in
    10 s, TTFT < 2 s): 30 tok/s per user, and the 2 s TTFT, not the 10 s, bounds the first
    token."""
    r = size(load(ROOT / "inputs" / "example.yaml"), CAT)
    w = next(w for w in r.workloads if w.name == "Internal assistant")
    assert w.best is not None
    assert _f(w.best, "required_tokens_per_s_per_user") == pytest.approx(30.0, rel=1e-12)
    assert _f(w.best, "target_ttft_ms") == pytest.approx(2000, rel=1e-12)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_accounts_keep_their_first_token_targets(name: str) -> None:
    """Every shipped account with a response time also states a shorter ttft_s, so the bound
    is its stated TTFT on every option and no plan moves (before/after plans: the report of
    branch y-resp)."""
    path = ROOT / "inputs" / name
    stated = {w["name"]: w.get("targets", {}) for w in yaml.safe_load(path.read_text())["workloads"]}
    r = size(load(path), CAT)
    checked = 0
    for w in r.workloads:
        t = stated[w.name]
        if "response_time_s" not in t:
            continue
        assert 0 < t["ttft_s"] < t["response_time_s"]
        for o in w.options:
            assert _f(o, "target_ttft_ms") == pytest.approx(t["ttft_s"] * 1000, rel=1e-12)
            checked += 1
    assert checked > 0
