"""The waiting-time term (issue #21 item 3; docs/queueing.md): the mean wait for the prompts
ahead (Allen-Cunneen at the replica's prefill utilisation), checked against a simulated queue,
and the batch that meets a TTFT target, checked against the forward formula it inverts."""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers import option_values

from llmsizer.model.calculations import CALCULATIONS
from llmsizer.model.catalog import load_catalog
from llmsizer.model.expr import evaluate

WAIT = next(c.expr for c in CALCULATIONS if c.name == "prefill_wait_ms")


def _simulated_wait_ms(rho: float, prefill_ms: float, cv: float, n: int, seed: int) -> float:
    """Mean wait of a single-server queue with fixed service (the prefill) and arrival gaps
    of the given CV (exponential at CV 1, gamma otherwise): the Lindley recursion
    W[n+1] = max(0, W[n] + S - A[n+1]), an independent check of the closed form."""
    rng = random.Random(seed)
    gap = prefill_ms / rho
    shape = 1 / cv**2
    w = total = 0.0
    for _ in range(n):
        total += w
        a = rng.expovariate(1 / gap) if cv == 1 else rng.gammavariate(shape, gap / shape)
        w = max(0.0, w + prefill_ms - a)
    return total / n


def _wait(rho: float, prefill_ms: float, cv: float, batch: float = 1000) -> float:
    value = evaluate(WAIT, {"prefill_utilisation": rho, "prefill_ms": prefill_ms,
                            "burstiness": cv, "batch_served": batch})
    assert isinstance(value, float)
    return value


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_poisson_wait_is_the_md1_mean(rho: float) -> None:
    # Pollaczek-Khinchine for M/D/1: W = rho / (2 (1 - rho)) x S; 50 ms at rho 0.5, S 100 ms
    assert _wait(0.5, 100, 1) == pytest.approx(50.0)
    assert _wait(rho, 100, 1) == pytest.approx(_simulated_wait_ms(rho, 100, 1, 150_000, 7),
                                               rel=0.05)


def test_bursty_wait_is_within_a_quarter_below_a_simulated_queue() -> None:
    # Kingman is exact in heavy traffic and reads low for bursty gaps at moderate load
    # (docs/queueing.md states it): gamma gaps of CV 2 at 70 % busy, simulated ~555 ms
    simulated = _simulated_wait_ms(0.7, 100, 2, 200_000, 11)
    assert _wait(0.7, 100, 2) == pytest.approx(0.7 / 0.3 * 4 / 2 * 100)
    assert 0.75 * simulated <= _wait(0.7, 100, 2) <= simulated


def test_wait_is_at_most_the_rest_of_the_batch_prefilled_first() -> None:
    assert _wait(0.9, 100, 1, batch=3) == pytest.approx(200.0)  # not 450: 2 prompts ahead
    assert _wait(1.5, 100, 1, batch=3) == pytest.approx(200.0)  # saturated: still bounded
    assert _wait(0.5, 100, 0) == 0.0  # paced arrivals (a closed loop) never queue


_CASES = [("llama-3.1-70b", "h100-sxm", 4, 2000, 300, 400.0),
          ("llama-3.1-70b", "h100-sxm", 2, 5000, 500, 600.0),
          ("llama-3.1-8b", "l40s", 1, 1000, 200, 150.0)]


@pytest.mark.parametrize("burstiness", [0.0, 1.0, 3.0])
@pytest.mark.parametrize(("model_id", "gpu", "tp", "prompt", "output", "slack_ms"), _CASES)
def test_batch_by_ttft_is_the_inverse_of_the_forward_formula(
        model_id: str, gpu: str, tp: int, prompt: int, output: int, slack_ms: float,
        burstiness: float) -> None:
    """At batch_by_ttft the mean TTFT, wait included, meets the target; one more sequence
    misses it (the closed form is exact, not only safe)."""
    model = load_catalog().model(model_id)
    kw: dict[str, Any] = {"tp": tp, "weights": "fp8", "kv": "fp8", "prompt": prompt,
                          "output": output, "users": 1000}
    free = option_values(model, gpu, **kw, overrides={"burstiness": burstiness})
    target_ms = free["ttft_one_user_ms"] + slack_ms
    v = option_values(model, gpu, **kw, targets={"ttft_s": target_ms / 1000,
                                                 "system_tokens_per_s": 1.0},
                      overrides={"burstiness": burstiness})
    batch = v["batch_by_ttft"]
    assert 1 <= batch < min(v["max_batch_per_replica"], v["max_sequences_by_memory"])
    assert v["batch_per_replica"] == batch
    assert v["ttft_ms"] <= target_ms + 1e-6
    over = option_values(model, gpu, **kw, overrides={"burstiness": burstiness,
                                                      "max_batch_per_replica": batch + 1})
    assert over["batch_per_replica"] == batch + 1
    assert over["ttft_ms"] > target_ms
