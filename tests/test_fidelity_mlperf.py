"""MLPerf rows predicted (issue 21 item 6): the dataset means and p99 limits in
catalogs/mlperf_datasets.yaml pinned to their sources, the Server / Interactive rate found by
bisection checked against the forward p99 formulas, and the error and coverage on
tests/data/mlperf_inference.csv."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import yaml

from llmsizer.inputs.benchdata import read_points
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.fidelity import _Row, evaluate_file, prepare, summarise, tables_for
from llmsizer.sizing.fidelity_mlperf import (
    Limits,
    dataset_lengths,
    env_at_rate,
    largest_rate,
    limits_of,
    load_datasets,
    meets_limits,
    server_rate,
)

DATA = Path(__file__).parent / "data"
MLPERF = DATA / "mlperf_inference.csv"
CATALOG = Path(__file__).parents[1] / "src/llmsizer/model/catalogs/mlperf_datasets.yaml"
MLC = "mlcommons/inference/blob/b66003e10e2db4b8c36a448b0545ec90fcc6e9e9"
PSAP = "openshift-psap/performance-dashboard/blob/71007029fb5bced1d79808e7e64dc4c2af82ea55"


def test_dataset_figures_are_the_published_ones_with_their_sources() -> None:
    raw = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))["mlperf_datasets"]
    sets = load_datasets()
    # mean generated tokens per sample: the reference READMEs' accuracy targets
    assert sets["llama2-70b"].mean_output_tokens == 294.45
    assert sets["mixtral-8x7b"].mean_output_tokens == 144.84
    assert sets["llama3.1-405b"].mean_output_tokens == 684.68
    # mean prompt tokens: mean input_length of the per-sample summary CSVs extracted from
    # MLCommons' dataset files (openshift-psap/performance-dashboard mlperf-data/summaries)
    assert sets["llama2-70b"].mean_prompt_tokens == 222.33
    assert sets["mixtral-8x7b"].mean_prompt_tokens == 427.39
    assert sets["llama3.1-405b"].mean_prompt_tokens == 9428.64
    assert [sets[k].samples for k in ("llama2-70b", "mixtral-8x7b", "llama3.1-405b")] == [
        24576, 15000, 8313]
    # loadgen/mlperf.conf: *.Server.target_latency_percentile = 99 and the ms limits
    assert sets["llama2-70b"].limits == {"Server": Limits(2000, 200),
                                         "Interactive": Limits(450, 40)}
    assert sets["mixtral-8x7b"].limits == {"Server": Limits(2000, 200)}
    assert sets["llama3.1-405b"].limits == {"Server": Limits(6000, 175),
                                            "Interactive": Limits(4500, 80)}
    for entry in raw.values():
        assert MLC in entry["output_source"] and MLC in entry["limits_source"]
        assert PSAP in entry["prompt_source"]
        assert f"{entry['mean_output_tokens']}" in entry["output_source"]


def test_rows_name_their_benchmark_and_scenario() -> None:
    llama = {"model": "Llama-2-70B (MLPerf llama2-70b-interactive-99.9)"}
    assert dataset_lengths(llama) == (222, 294)
    assert dataset_lengths({"model": "Mixtral-8x7B (MLPerf mixtral-8x7b)"}) == (427, 145)
    assert dataset_lengths({"model": "GPT-J (MLPerf gptj-99)"}) == (
        "MLPerf benchmark 'gptj-99': no dataset statistics in the catalog (known: "
        "llama2-70b, llama3.1-405b, mixtral-8x7b)")
    points, _ = read_points(MLPERF, load_catalog())
    interactive = next(p for p in points if p.raw["scenario"] == "Interactive")
    assert limits_of(interactive) == Limits(450, 40)
    server = next(p for p in points if p.raw["scenario"] == "Server")
    assert limits_of(server) == Limits(2000, 200)


def test_bisection_finds_the_edge_of_a_monotone_condition() -> None:
    assert largest_rate(lambda r: r <= 3.7, 10.0) == pytest.approx(3.7, rel=2e-4)
    assert largest_rate(lambda r: True, 10.0) == pytest.approx(10.0, rel=2e-4)
    assert largest_rate(lambda r: False, 10.0) == 0.0


@pytest.mark.parametrize("scenario", ["Interactive", "Server"])
def test_found_rate_meets_the_p99_limits_and_two_percent_more_does_not(scenario: str) -> None:
    catalog = load_catalog()
    tables = tables_for(catalog)
    points, _ = read_points(MLPERF, catalog)
    cases, _ = prepare([p for p in points if p.raw["scenario"] == scenario
                        and p.gpu == "h200-sxm"], catalog)
    row = _Row(cases[0], catalog, tables)
    limits = limits_of(cases[0].point)
    assert isinstance(limits, Limits)
    rate, env = server_rate(row, limits)
    assert rate > 0 and meets_limits(env, limits, catalog)
    saturated = row.env()
    capacity = float(saturated["replica_output_tokens_per_s"]) / cases[0].output_tokens
    more = rate * 1.02
    # past the rate either a p99 limit fails or the replica cannot serve it at all
    assert more >= capacity or not meets_limits(env_at_rate(row, more, saturated), limits,
                                                catalog)
    if scenario == "Interactive":  # the 40 ms TPOT / 450 ms TTFT limits bind below capacity
        assert more < capacity


def test_mlperf_error_and_coverage() -> None:
    results, skipped, n_rows = evaluate_file(MLPERF)
    assert (n_rows, len(results), skipped) == (44, 44, [])
    by_benchmark = {r.point.model for r in results}
    assert by_benchmark == {"llama-2-70b", "mixtral-8x7b", "llama-3.1-405b"}
    summary = {s.regime: s for s in summarise(results)}
    # issue 21 acceptance: Offline median |error| <= 15 % (met: 12.9 %, 19 rows)
    assert summary["offline"].count == 19 and summary["offline"].median_abs_error <= 0.15
    # Server + Interactive: the target is <= 20 %; measured 16.4 % (25 rows, bias +13.6 %;
    # 24.5 % before the p99 TPOT carried the batch's Poisson fluctuation; docs/calibration.md
    # "MLPerf Inference rows"), pinned so a change shows
    assert summary["rate"].count == 25
    assert summary["rate"].median_abs_error == pytest.approx(0.164, abs=0.005)
    assert summary["rate"].median_abs_error <= 0.20
    # the six Interactive rows, where the 40 ms p99 TPOT binds: +19 to +40 % before, now
    # +9 to +30 % (median |error| 24.1 % -> 14.9 %)
    interactive = sorted(abs(r.error) for r in results
                         if r.point.raw["scenario"] == "Interactive")
    assert len(interactive) == 6 and (interactive[2] + interactive[3]) / 2 <= 0.16
    # llama3.1-405b Server on H200 x8 (TP8, one instance): the 6 s p99 TTFT of 9,429-token
    # prompts binds well below the offline throughput, as measured (291 vs 559 tokens/s)
    server_405b = [r for r in results if r.point.model == "llama-3.1-405b"
                   and r.point.gpu == "h200-sxm" and r.point.raw["scenario"] == "Server"]
    offline_405b = [r for r in results if r.point.model == "llama-3.1-405b"
                    and r.point.gpu == "h200-sxm" and r.point.raw["scenario"] == "Offline"]
    assert server_405b[0].predicted < 0.6 * offline_405b[0].predicted


def _lifetime_mean_batch(rate: float, service: float, n: int, seed: int) -> list[float]:
    """Poisson arrivals (``rate``), each request in service for ``service``: the mean number
    in service over each request's own life, by sweeping the event times."""
    rng = random.Random(seed)
    starts, t = [], 0.0
    for _ in range(n):
        t += rng.expovariate(rate)
        starts.append(t)
    means = []
    lo = 0
    for s in starts:
        if s < 3 * service or s > starts[-1] - 3 * service:
            continue  # away from the ends: steady state
        while starts[lo] < s - service:
            lo += 1
        # overlap of each other request [a, a + service] with [s, s + service]
        total = 0.0
        j = lo
        while j < len(starts) and starts[j] < s + service:
            total += max(0.0, min(starts[j], s) + service - max(starts[j], s))
            j += 1
        means.append(total / service)
    return means


def test_batch_a_request_sees_over_its_life_is_poisson_with_two_thirds_variance() -> None:
    """The p99 TPOT term (benchmarks.py ``tpot_p99_from_mean_ms``): under Poisson arrivals a
    request's mean batch over its life has mean about L and variance 2/3 x L, and its p99 is
    about L + 2.326 x sqrt(2 L / 3). Simulated at L = 100 (59,393 requests): mean 100.5
    (itself counted), std 8.23 against sqrt(200 / 3) = 8.16, p99 119.7 against 119.0."""
    means = sorted(_lifetime_mean_batch(rate=100.0, service=1.0, n=60_000, seed=3))
    mean = sum(means) / len(means)
    std = math.sqrt(sum((m - mean) ** 2 for m in means) / len(means))
    assert mean == pytest.approx(100, rel=0.02)
    assert std == pytest.approx(math.sqrt(2 * 100 / 3), rel=0.05)
    assert means[int(0.99 * len(means))] == pytest.approx(100 + 2.326 * math.sqrt(200 / 3),
                                                          rel=0.02)
