"""Review round 22 (helper G): a throughput target with its request streams stated is sized
for those streams, not for replicas running full.

University of Northfield's overnight transcript job (tests/data/gbp-university-r22.yaml, from
review helper F) keeps 64 streams open and asks 1,500 tok/s of Llama 3.3 70B. The engine sized
each H100 PCIe TP2 replica full (batch 65 since session 25, the KV memory's limit): 4
replicas x 65 = 260 requests in flight for 64 streams, and it reported 36.8 % headroom
where the 64 streams on 4 replicas make only 1,223 tok/s (`llmsizer estimate --replicas 4
--concurrency 16`). The streams advance one step together: on N replicas each runs C / N of them, a step takes
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
    assert v["batch_per_replica"] == 65   # what one replica holds (KV memory; 67 before s25)
    # the streams make 1,500 tok/s only at steps of 64 x 1000 / 1,500 = 42.67 ms:
    # 27.76 + 1.535 x 64 / N <= 42.67  ->  N >= 1.535 x 64 / 14.91 = 6.59
    limit = 64 * 1000 / 1500
    assert v["stream_step_limit_ms"] == pytest.approx(limit)
    n = b * 64 / (limit - a)
    assert n == pytest.approx(b * 1 * 64 * 1500 / (1000 * 64 - a * 1 * 1500))   # the brief's form
    assert v["stream_replicas"] == pytest.approx(n)
    assert v["demand_replicas"] == pytest.approx(n)        # was 1,500 / 513 = 2.92, sized full
    assert math.ceil(n) == 7                                # 7 replicas before headroom
    # headroom 25 % is a margin on the load, here the throughput target (session 22, streams
    # headroom): 1,875 tok/s at steps of 64,000 / 1,875 = 34.13 ms, N >= 1.535 x 64 / (34.13
    # - 27.76) = 15.42 -> 16 (was ROUNDUP(6.59 x 1.25) = 9); N+1: the R760xa takes 4 PCIe
    # GPUs, 2 replicas of TP2, so 2 spare replicas when sized alone: 18 replicas, 36 GPUs
    n_load = b * 64 / (64 * 1000 / 1875 - a)
    assert v["stream_step_limit_load_ms"] == pytest.approx(64 * 1000 / 1875)
    assert v["stream_replicas_for_load"] == pytest.approx(n_load)
    assert v["replicas_for_load"] == math.ceil(n_load) == 16
    assert (v["replicas_per_node"], v["spare_replicas"], v["replicas"], v["gpus"]) == (2, 2, 18, 36)
    # the headroom reported is the tokens/s the 64 streams make over all 18 replicas / the
    # target - 1: 64,000 / (27.76 + 1.535 x 64 / 18) / 1,500 - 1 = 28.4 %; with a node (2
    # replicas) down, 16 replicas: 25.9 %
    assert v["headroom_achieved"] == pytest.approx(64 * 1000 / (a + b * 64 / 18) / 1500 - 1)
    assert v["headroom_after_node_loss"] == pytest.approx(
        64 * 1000 / (a + b * 64 / 16) / 1500 - 1)
    assert v["headroom_after_node_loss"] >= 0.25
    # the batch at peak: 64 streams over 6.59 replicas = 9.71 a replica (mean), each stream at
    # 1000 / 42.67 = 23.4 tok/s, 64 x 23.4 = 1,500 tok/s
    assert v["batch_served"] == pytest.approx(64 / n)
    assert v["tpot_ms"] == pytest.approx(limit)
    assert v["tokens_per_s_per_user"] == pytest.approx(1500 / 64)
    # installed: the 64 streams over all 18 replicas (3.6 each), not 18 replicas x 513 tok/s
    assert v["capacity_output_tokens_per_s"] == pytest.approx(64 * 1000 / (a + b * 64 / 18))
    # the plan's pool: 16 replicas (the node group holds the spare node), 64 / 6.59 = 9 a
    # replica at peak; its headroom the streams' tokens/s on 16 replicas / 1,500 - 1 = 25.9 %
    pool = university.plan.pools[0]
    assert (pool.replicas, pool.gpus) == (16, 32)
    assert pool.demand_replicas == pytest.approx(n)
    assert pool.values["pool_stream_replicas_for_load"] == pytest.approx(n_load)
    assert pool.batch_per_replica == 9
    assert pool.headroom_achieved == pytest.approx(64 * 1000 / (a + b * 64 / 16) / 1500 - 1)


def test_headroom_is_a_margin_on_the_streams_target(university: Result) -> None:
    """The defect (session 22): 6.59 replicas x 1.25 -> 9 replicas, reported as 36.6 %
    headroom, but the 64 streams on 9 replicas make 64,000 / (27.76 + 1.535 x 64 / 9) =
    1,655 tok/s, only 10.3 % over 1,500. Sized at the target x 1.25 instead, the pool of 16
    replicas makes 1,888 tok/s (25.9 %), and its reported headroom is that margin, the
    figure every surface reads (the workbook's, the PDF's and the CLI's pool row)."""
    a, b = _a_b()
    n = b * 64 / (64 * 1000 / 1500 - a)
    nine = 64 * 1000 / (a + b * 64 / 9)
    assert math.ceil(n * 1.25) == 9 and nine / 1500 - 1 == pytest.approx(0.103, abs=1e-3)
    pool = university.plan.pools[0]
    made = 64 * 1000 / (a + b * 64 / pool.replicas)
    assert made == pytest.approx(1888, abs=1)
    assert made / 1500 - 1 >= 0.25                         # the policy's margin is kept
    assert pool.headroom_achieved == pytest.approx(made / 1500 - 1)
    assert pool.headroom_after_node_loss == pytest.approx(made / 1500 - 1)   # a spare node
    # 15 replicas would not keep it: 64,000 / (27.76 + 1.535 x 64 / 15) / 1,500 - 1 < 25 %
    assert 64 * 1000 / (a + b * 64 / 15) / 1500 - 1 < 0.25


def test_streams_that_reach_the_target_but_not_its_headroom_rule_the_option_out() -> None:
    """48 streams on H100 PCIe TP2 reach 1,500 tok/s (steps of 48,000 / 1,500 = 32 ms, one
    stream a replica steps 29.30 ms), but not 1,875 with 25 % headroom (25.6 ms): no replica
    count keeps the margin, so the option is ruled out, saying so."""
    r = size(load_from_text(_JOB.format(users=48), "streams.yaml"))
    o = _option(r, 0, H100_TP2)
    a, b = _a_b()
    assert 48 * 1000 / 1875 < a + b < 48 * 1000 / 1500
    v = o.values
    assert v["streams_short"] == 1 and v["stream_replicas"] == 0
    assert not o.feasible and o.reason_code == "speed"
    best = 48 * 1000 / (a + b)
    assert o.reason == ("48 streams cannot reach 1,500 tok/s with 25 % headroom (1,875 tok/s) "
                        f"on this configuration even one per replica (at most {best:,.0f} "
                        "tok/s)")
    # without headroom the same 48 streams are sized: 1.535 x 48 / (32 - 27.76) replicas
    r0 = size(load_from_text(_JOB.format(users=48).replace("headroom: 0.25", "headroom: 0"),
                             "streams.yaml"))
    v0 = _option(r0, 0, H100_TP2).values
    assert v0["replicas"] == math.ceil(b * 48 / (32 - a))


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
    assert o.reason == ("64 streams cannot reach 1,500 tok/s with 25 % headroom (1,875 tok/s) "
                        f"on this configuration even one per replica (at most {best:,.0f} "
                        "tok/s)")


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
    (4 here: 4 x 65 = 260 streams) the count stays."""
    seen = []
    for users in (64, 80, 96, 128, 200, 268, 512, 1024):   # 48: short of the headroom, below
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
    """The job shares its H100 PCIe TP2 replicas with a 10-user chat on the same model: the
    pool counts the 64 streams (not 6.59 x 65 = 428 sequences) and 10 users, and holds the
    step every replica takes at peak to the streams' 64 x 1000 / 1,500 = 42.67 ms:
    N = (1.535 x 64 + b_chat x 10) / (42.67 - 27.76); with 25 % headroom on the load, the
    step to 64,000 / 1,875 = 34.13 ms with the chat's sequences x 1.25:
    N' = (1.535 x 64 + b_chat x 12.5) / (34.13 - 27.76). (A 40-user chat pooled so needs
    more than apart now, 16 + 2 replicas: the plan keeps them apart.)"""
    r = size(load_from_text(_MIXED.replace("concurrent_users: 40", "concurrent_users: 10"),
                            "mixed.yaml"))
    (pool,) = r.plan.pools
    assert pool.workload_indices == [0, 1]
    v = pool.values
    a, b = _a_b()
    chat = _option(r, 1, r.workloads[1].recommended).values
    assert v["pool_demand_sequences"] == 64 + 10
    b_chat = chat["step_ms_per_seq"]
    n = (b * 64 + b_chat * 10) / (64 * 1000 / 1500 - a)
    assert v["pool_stream_replicas"] == pytest.approx(n)
    assert v["pool_demand_replicas"] == pytest.approx(n)
    step = v["pool_step_fixed_ms"] + v["pool_step_sequence_ms"] / v["pool_demand_replicas"]
    assert 64 * 1000 / step == pytest.approx(1500)           # the streams make their target
    n_load = (b * 64 + b_chat * 10 * 1.25) / (64 * 1000 / 1875 - a)
    assert v["pool_stream_replicas_for_load"] == pytest.approx(n_load)
    assert pool.replicas == math.ceil(n_load) == 17          # (ROUNDUP(n x 1.25) = 10)
    # its headroom: the streams' tokens/s with every sequence on 17 replicas / 1,500 - 1
    made = 64 * 1000 / (a + (b * 64 + b_chat * 10) / 17)
    assert pool.headroom_achieved == pytest.approx(made / 1500 - 1)
    assert pool.headroom_achieved >= 0.25


def test_a_pool_of_one_streams_member_is_its_own_sizing(university: Result) -> None:
    """Alone in its pool, the job's pool needs the replicas its option needs for the load
    (16), and its headroom at 16 replicas is the option's figure at 16: the same row."""
    v = _option(university, 0, H100_TP2).values
    pool = university.plan.pools[0]
    assert pool.values["pool_stream_replicas_for_load"] == pytest.approx(
        v["stream_replicas_for_load"])
    assert pool.replicas == v["replicas_for_load"]
    assert pool.headroom_achieved == pytest.approx(v["headroom_after_node_loss"])  # 16 each


def test_confidence_range_scales_the_streams_line(university: Result) -> None:
    """The range if throughput is off scales a and b by the model's error in the same closed
    form: at the low end (steps x 1.165, the H100 PCIe's p90) one stream a replica steps
    (27.76 + 1.535) x 1.165 = 34.12 ms, just inside 64,000 / 1,875 = 34.13 ms: N = 1.535 x
    1.165 x 64 / (34.13 - 27.76 x 1.165) = 63.9 -> 64 + 2 spare = 66 replicas (was 12 by
    demand x 1.165 x 1.25, below the 18 recommended); at the high end (x 0.764) the streams
    need 5.8 and demand x 0.764 x 1.25 = 6.29 binds: 7 + 2 = 9."""
    v = _option(university, 0, H100_TP2).values
    a, b = _a_b()
    lo, hi = 1 + v["confidence_p90"], 1 + v["confidence_p10"]
    assert (lo, hi) == pytest.approx((1.165, 0.764))
    limit = 64 * 1000 / 1875
    assert (a + b) * lo < limit
    n_lo = b * lo * 64 / (limit - a * lo)
    assert v["confidence_replicas_low_throughput"] == math.ceil(n_lo) + 2 == 66
    n = b * 64 / (64 * 1000 / 1500 - a)
    assert b * hi * 64 / (limit - a * hi) < n * hi * 1.25
    assert v["confidence_replicas_high_throughput"] == math.ceil(n * hi * 1.25) + 2 == 9
    # the plan's range reads the same scaled load: 37 GPUs bought, more at the low end
    assert university.plan.gpus_purchased_if_throughput_low > university.totals.gpus_purchased
