"""Issue 21, item 1: load stated three ways (concurrent users, a peak arrival rate, a user
population), turned into a concurrency by Little's law solved with the request time the load
itself causes (src/llmsizer/model/calculations/load.py, docs/queueing.md)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from pydantic import ValidationError
from support.hunting import property_settings

from llmsizer.inputs.loader import load
from llmsizer.inputs.schema import Requirements
from llmsizer.model.calculations.load import SLOT_FIXED_MS, SLOT_STEPS
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import evaluate
from llmsizer.sizing.engine import size
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
    evaluate_choice,
    workload_inputs,
)

ROOT = Path(__file__).resolve().parents[1]
CAT = load_catalog()
# The first example: 2,000 users, 6 requests an hour each, busiest hour 3x the
# average -> 2000 x 6 x 3 / 3600 = 10 requests/s at peak.
POPULATION = {"named_users": 2000, "requests_per_user_per_hour": 6, "peak_to_average": 3}


def _req(load_form: dict[str, Any], targets: dict[str, float] | None = None,
         model: str = "llama-3.1-70b") -> Requirements:
    return Requirements.model_validate({
        "schema_version": 1, "account": {"name": "t"},
        "workloads": [{"name": "w", "model": model, "prompt_tokens": 1200, "output_tokens": 350,
                       "targets": targets or {"tokens_per_s_per_user": 25}, **load_form}]})


def _values(load_form: dict[str, Any], gpu: str = "h100-sxm", tp: int = 4,
            model: str = "llama-3.1-70b", **kw: Any) -> dict[str, Any]:
    req = _req(load_form, model=model, **kw)
    base = {**account_inputs(req, CAT), **workload_inputs(req.workloads[0], CAT.models[model])}
    return evaluate_choice(base, Choice(gpu, CAT.gpus[gpu].default_platform, "fp8", "fp8", tp),
                           build_tables(req, CAT), req, CAT)


# --- the schema: exactly one form ---------------------------------------------------------

@pytest.mark.parametrize("load_form, fragment", [
    ({}, "found none of them"),
    ({"concurrent_users": 10, "requests_per_s": 2}, "found concurrent_users and requests_per_s"),
    ({"requests_per_s": 2, **POPULATION}, "found requests_per_s and named_users"),
    ({"named_users": 2000, "requests_per_user_per_hour": 6}, "named_users needs peak_to_average"),
    ({"concurrent_users": 10, "peak_to_average": 3}, "use them with named_users"),
    ({"concurrent_users": 10, "burstiness": 2}, "burstiness describes arrivals"),
])
def test_exactly_one_load_form(load_form: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        _req(load_form)
    assert fragment in str(err.value)


def test_population_is_the_rate_it_implies() -> None:
    v = _values(POPULATION)
    assert v["peak_request_rate_per_s"] == pytest.approx(10.0)
    assert _values({"requests_per_s": 7.5})["peak_request_rate_per_s"] == 7.5
    assert _values({"concurrent_users": 40})["peak_request_rate_per_s"] == 0.0


# --- Little's law ---------------------------------------------------------------------------

@pytest.mark.parametrize("rate", [0.5, 2.0, 10.0])
def test_one_replica_concurrency_is_littles_law_fixed_point(rate: float) -> None:
    """L = rate x W(L) with W(B) = c0 + steps x b x B: the closed form is the fixed point
    (rounded up), and it is within the bound at a full replica."""
    v = _values({"requests_per_s": rate}, gpu="h200-sxm", tp=8)
    c0 = float(evaluate(SLOT_FIXED_MS, v))
    steps = float(evaluate(SLOT_STEPS, v))
    b = float(v["step_ms_per_seq"])
    exact = rate / 1000 * c0 / (1 - rate / 1000 * steps * b)
    assert exact == pytest.approx(rate / 1000 * (c0 + steps * b * exact))  # the fixed point
    assert v["concurrent_users"] == math.ceil(min(exact, rate * v["request_slot_full_ms"] / 1000))
    # what users see is evaluated at that batch: W at the batch served x rate <= users
    w_served = c0 + steps * b * v["batch_served"]
    assert rate * w_served / 1000 <= v["concurrent_users"] + 1e-9


def test_beyond_one_replica_the_full_replica_bound_holds() -> None:
    """10 requests/s of 1,200/350 tokens on TP2 H100s: more than one replica's batch, so the
    concurrency is rate x the slot time at a full replica (the conservative bound)."""
    v = _values({"requests_per_s": 10}, tp=2)
    assert v["concurrent_users"] > v["batch_per_replica"]
    assert v["concurrent_users"] == math.ceil(10 * v["request_slot_full_ms"] / 1000)


# --- properties the customer relies on -----------------------------------------------------

SETTINGS = property_settings(60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen2.5-72b"]),
       st.sampled_from(["h100-sxm", "h200-sxm", "l40s"]), st.sampled_from([1, 2, 4, 8]),
       st.floats(0.05, 200), st.floats(1.0, 3.0))
def test_more_requests_per_second_never_fewer_gpus(model: str, gpu: str, tp: int, rate: float,
                                                   factor: float) -> None:
    if tp > CAT.platforms[CAT.gpus[gpu].default_platform].gpus_per_node:
        return
    a = _values({"requests_per_s": rate}, gpu=gpu, tp=tp, model=model)
    b = _values({"requests_per_s": rate * factor}, gpu=gpu, tp=tp, model=model)
    assert b["concurrent_users"] >= a["concurrent_users"]
    assert b["gpus"] >= a["gpus"]


def test_named_users_and_requests_per_s_give_the_same_answer(tmp_path: Path) -> None:
    """The shipped population account against the same load stated as 10 requests/s."""
    path = ROOT / "inputs" / "helpdesk-population.yaml"
    text = path.read_text(encoding="utf-8")
    as_rate = tmp_path / "rate.yaml"
    as_rate.write_text(text.replace("    named_users: 2000\n    requests_per_user_per_hour: 6\n"
                                    "    peak_to_average: 3\n", "    requests_per_s: 10\n"),
                       encoding="utf-8")
    a, b = size(load(path)), size(load(as_rate))
    assert a.workloads[0].recommended == b.workloads[0].recommended
    assert a.totals.gpus == b.totals.gpus
    for oa, ob in zip(a.workloads[0].options, b.workloads[0].options, strict=True):
        assert oa.values["concurrent_users"] == ob.values["concurrent_users"]
        assert oa.values["gpus"] == ob.values["gpus"]
