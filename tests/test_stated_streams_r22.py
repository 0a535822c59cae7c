"""Review round 22 (helper G): a throughput target with its request streams stated is sized
for those streams, not for replicas running full.

University of Northfield's overnight transcript job (tests/data/gbp-university-r22.yaml, from
review helper F) keeps 64 streams open and asks 1,500 tok/s of Llama 3.3 70B. The engine sized
each H100 PCIe TP2 replica full (batch 67, the KV memory's limit): 4 replicas x 67 = 268
requests in flight for 64 streams, and it reported 36.8 % headroom where the 64 streams on 4
replicas make only 1,223 tok/s (`llmsizer estimate --replicas 4 --concurrency 16`). The
streams advance one step together: on N replicas each runs C / N of them, a step takes
t = a + b x C / N and they make C x 1000 / (f x t) tok/s (f the speculative TPOT factor, 1
here), so N >= b x f x C x T / (1000 x C - a x f x T) (replicas.py stream_replicas).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from llmsizer.inputs.loader import load, load_from_text
from llmsizer.sizing.engine import estimate, size
from llmsizer.sizing.results import Result

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parent.parent
H100_TP2 = "h100-pcie/fp8/kv-fp8/tp2"


def _option(r: Result, workload: int, option_id: str) -> Any:
    return next(o for o in r.workloads[workload].options if o.id == option_id)


@pytest.fixture(scope="module")
def university() -> Result:
    return size(load(DATA / "gbp-university-r22.yaml"))


def _a_b() -> tuple[float, float]:
    """a and b of t(B) for Llama 3.3 70B FP8 on 2 x H100 PCIe at 6,000 + 500 tokens, worked
    from the catalogs as helper F worked them (tests/test_review_sizing_r22.py on branch
    s22-review-sizing): 2.0 TB/s, FP8 1,513 TFLOP/s, NVLink bridge 300 GB/s, uncalibrated
    x 0.903; mbu_kv 0.8303, mfu_decode 0.685, mfu_prefill 0.7923, mfu_attention 0.1301,
    all-reduce 35.81 us at link efficiency 0.462, step overhead 2.485 ms."""
    e = 0.903
    a = 70.6 / (2 * 2.0 * e) + 80 * 2 * 35.81 / 1000 + 2.485            # 27.76 ms
    ar = 80 * 2 * (2 * 0.5 * 8192 * 2) / (300e9 * 0.462) * 1000
    pre_tok = (2 * 70.6e9 + 2 * 8192 * 80 * 6000) / 1513 / (2 * 1e12 * 0.7923 * e) * 1000 + ar
    b = (80 * 2048 * 6250 / 1e9 / (2 * 2.0 * 0.8303 * e)
         + 2 * 70.6e9 / (2 * 1513e12 * 0.685 * e) * 1000
         + 4 * 64 * 128 * 80 * 6250 / (2 * 1513e12 * 0.1301 * e) * 1000
         + ar + pre_tok * 6000 / 500)                                    # 1.535 ms
    return a, b


def test_university_transcript_job_is_sized_for_its_64_streams(university: Result) -> None:
    v = _option(university, 0, H100_TP2).values
    assert university.workloads[0].recommended == H100_TP2
    a, b = _a_b()
    assert v["step_fixed_ms"] == pytest.approx(a)
    assert v["step_ms_per_seq"] == pytest.approx(b)
    assert v["batch_per_replica"] == 67                    # what one replica holds (KV memory)
    # the streams make 1,500 tok/s only at steps of 64 x 1000 / 1,500 = 42.67 ms:
    # 27.76 + 1.535 x 64 / N <= 42.67  ->  N >= 1.535 x 64 / 14.91 = 6.59
    limit = 64 * 1000 / 1500
    assert v["stream_step_limit_ms"] == pytest.approx(limit)
    n = b * 64 / (limit - a)
    assert n == pytest.approx(b * 1 * 64 * 1500 / (1000 * 64 - a * 1 * 1500))   # the brief's form
    assert v["stream_replicas"] == pytest.approx(n)
    assert v["demand_replicas"] == pytest.approx(n)        # was 1,500 / 513 = 2.92, sized full
    assert math.ceil(n) == 7                                # 7 replicas before headroom
    # headroom 25 %: ROUNDUP(6.59 x 1.25 = 8.24) = 9 (was 4); N+1: the R760xa takes 4 PCIe
    # GPUs, 2 replicas of TP2, so 2 spare replicas when sized alone: 11 replicas, 22 GPUs
    assert v["replicas_for_load"] == math.ceil(n * 1.25) == 9
    assert (v["replicas_per_node"], v["spare_replicas"], v["replicas"], v["gpus"]) == (2, 2, 11, 22)
    assert v["headroom_achieved"] == pytest.approx(11 / n - 1)
    # the batch at peak: 64 streams over 6.59 replicas = 9.71 a replica (mean), each stream at
    # 1000 / 42.67 = 23.4 tok/s, 64 x 23.4 = 1,500 tok/s
    assert v["batch_served"] == pytest.approx(64 / n)
    assert v["tpot_ms"] == pytest.approx(limit)
    assert v["tokens_per_s_per_user"] == pytest.approx(1500 / 64)
    # installed: the 64 streams over all 11 replicas (5.8 each), not 11 replicas x 513 tok/s
    assert v["capacity_output_tokens_per_s"] == pytest.approx(64 * 1000 / (a + b * 64 / 11))
    # the plan's pool: 9 replicas (the node group holds the spare node), 64 / 6.59 = 9 a replica
    pool = university.plan.pools[0]
    assert (pool.replicas, pool.gpus) == (9, 18)
    assert pool.demand_replicas == pytest.approx(n)
    assert pool.batch_per_replica == 9


def test_estimate_agrees_with_the_stream_sizing() -> None:
    """`llmsizer estimate` at the streams per replica: 4 replicas x 16 miss 1,500 tok/s (the
    defect's plan); 7 x 9 (63 of the 64 streams) make it."""
    kw: dict[str, Any] = {"model_id": "llama-3.3-70b", "gpu": "h100-pcie", "tp": 2,
                          "weight_precision": "fp8", "kv_precision": "fp8",
                          "prompt_tokens": 6000, "output_tokens": 500}
    a, b = _a_b()
    four = estimate(replicas=4, concurrency=16, **kw)["output_tokens_per_s"]
    seven = estimate(replicas=7, concurrency=9, **kw)["output_tokens_per_s"]
    assert four == pytest.approx(4 * 16 * 1000 / (a + 16 * b))    # 1,223 tok/s
    assert seven == pytest.approx(7 * 9 * 1000 / (a + 9 * b))     # 1,515 tok/s
    assert four < 1500 < seven


def test_streams_too_few_for_the_target_rule_the_option_out(university: Result) -> None:
    """2 x L40S FP8: even one stream per replica steps too slowly for 64 streams to make
    1,500 tok/s; it was recommended (21 replicas at batch 12, 252 requests assumed)."""
    o = _option(university, 0, "l40s/fp8/kv-fp8/tp2")
    v = o.values
    one = v["step_fixed_ms"] + v["step_ms_per_seq"]
    assert one > 64 * 1000 / 1500
    assert v["streams_short"] == 1 and v["stream_replicas"] == 0
    best = 64 * 1000 / one
    assert v["streams_best_tokens_per_s"] == pytest.approx(best)
    assert not o.feasible and o.reason_code == "speed"
    assert o.reason == ("64 streams cannot reach 1,500 tok/s on this configuration even one per "
                        f"replica (at most {best:,.0f} tok/s)")


_JOB = """schema_version: 1
account: {{name: Streams}}
workloads:
  - name: Transcripts
    model: llama-3.3-70b
    concurrent_users: {users}
    prompt_tokens: 6000
    output_tokens: 500
    targets: {{system_tokens_per_s: 1500}}
hardware: {{gpus: [h100-pcie], weight_precisions: [fp8]}}
policy: {{headroom: 0.25, survive_node_loss: false}}
"""


def test_more_streams_never_need_more_replicas() -> None:
    """The same target with more streams open: fewer replicas or as many, never more (more
    streams per replica is a larger batch, more tok/s a replica); from full replicas on
    (4 here: 4 x 67 = 268 streams) the count stays."""
    seen = []
    for users in (48, 64, 80, 96, 128, 200, 268, 512, 1024):
        r = size(load_from_text(_JOB.format(users=users), "streams.yaml"))
        o = _option(r, 0, H100_TP2)
        assert o.feasible
        seen.append((o.values["demand_replicas"], o.values["replicas_for_load"]))
    demands = [d for d, _ in seen]
    counts = [c for _, c in seen]
    assert demands == sorted(demands, reverse=True)
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > counts[1] and counts[-1] == counts[-3] == 4   # sized full at 268 and more


def test_offline_summarisation_keeps_its_recommendation() -> None:
    """inputs/offline-summarisation.yaml, 1,024 streams for 6,950 tok/s: its plan does not
    move (1,024 streams fill its L40S replicas); an alternative that counted more requests in
    flight than streams does: 8 x L40S FP8 at batch 512 counted 5.37 x 512 = 2,750."""
    r = size(load(ROOT / "inputs" / "offline-summarisation.yaml"))
    w = r.workloads[0]
    rec = _option(r, 0, w.recommended).values
    assert w.recommended == "l40s/fp8/kv-fp8/tp1"
    # sized full: 1,024 streams fill 4.88 replicas of 157 (766 in flight, the rest wait)
    assert rec["stream_replicas"] < rec["demand_replicas"]
    assert rec["demand_replicas"] == pytest.approx(6950 / rec["replica_output_tokens_per_s"])
    assert rec["replicas"] == 6
    v = _option(r, 0, "l40s/fp8/kv-fp8/tp8").values
    a, b = v["step_fixed_ms"], v["step_ms_per_seq"]
    n = b * 1024 / (1024 * 1000 / 6950 - a)                  # 5.51 replicas of 186 streams
    assert v["demand_replicas"] == pytest.approx(n)
    assert 6950 / v["replica_output_tokens_per_s"] < n        # 5.37 sized full
    assert v["replicas"] == math.ceil(n * 1.1) == 7           # was 6


def test_an_arrival_rate_keeps_its_concurrency(university: Result) -> None:
    """The student chat states 8,000 named users (a rate): its concurrency comes from Little's
    law and its batch is those users, never replicas run full; no stream rows apply."""
    v = _option(university, 1, university.workloads[1].recommended).values
    assert v["peak_request_rate_per_s"] > 0
    assert v["stream_step_limit_ms"] == 0 and v["stream_replicas"] == 0
    assert v["batch_served"] == min(v["concurrent_users"], v["batch_per_replica"])
    assert v["demand_replicas"] == pytest.approx(v["concurrent_users"] / v["batch_per_replica"])


_MIXED = """schema_version: 1
account: {name: Mixed}
workloads:
  - name: Transcripts
    model: llama-3.3-70b
    concurrent_users: 64
    prompt_tokens: 6000
    output_tokens: 500
    targets: {system_tokens_per_s: 1500}
  - name: Staff chat
    model: llama-3.3-70b
    concurrent_users: 40
    prompt_tokens: 2000
    output_tokens: 300
    targets: {tokens_per_s_per_user: 15}
hardware: {gpus: [h100-pcie], weight_precisions: [fp8]}
policy: {headroom: 0.25, survive_node_loss: false}
"""


def test_a_shared_pool_keeps_the_streams_step() -> None:
    """The job shares its H100 PCIe TP2 replicas with a 40-user chat on the same model: the
    pool counts the 64 streams (not 6.59 x 67 = 441 sequences) and 40 users, and holds the
    step every replica takes at peak to the streams' 64 x 1000 / 1,500 = 42.67 ms:
    N = (1.535 x 64 + b_chat x 40) / (42.67 - 27.76)."""
    r = size(load_from_text(_MIXED, "mixed.yaml"))
    (pool,) = r.plan.pools
    assert pool.workload_indices == [0, 1]
    v = pool.values
    a, b = _a_b()
    chat = _option(r, 1, r.workloads[1].recommended).values
    assert v["pool_demand_sequences"] == 64 + 40
    n = (b * 64 + chat["step_ms_per_seq"] * 40) / (64 * 1000 / 1500 - a)
    assert v["pool_stream_replicas"] == pytest.approx(n)
    assert v["pool_demand_replicas"] == pytest.approx(n)
    step = v["pool_step_fixed_ms"] + v["pool_step_sequence_ms"] / v["pool_demand_replicas"]
    assert 64 * 1000 / step == pytest.approx(1500)           # the streams make their target
    assert pool.replicas == math.ceil(n * 1.25)
