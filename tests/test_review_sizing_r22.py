"""Review round 22 (helper F): three new customer shapes sized and checked by hand.

Each figure below is worked from the catalogs (model/catalogs/*.yaml) and the formulas of
docs/calculations.md, the derivation in the comment beside it; the engine must agree within
rounding. The accounts (tests/data/*-r22.yaml) are shapes no shipped or test account had:

1. Nordvik Telecom (SEK, bought, no N+1): Qwen3-235B-A22B at a stated 20 requests/s with a p99
   first-token target, B200 against H200, FP8;
2. University of Northfield (GBP, bought, N+1): an overnight batch job on Llama 3.3 70B with a
   system throughput target beside a student chat on Llama 3.1 8B stated as 8,000 named users,
   H100 PCIe against L40S;
3. Ledgerline (USD, rented by the hour on AWS 8-GPU instances, N+1): DeepSeek-V3 with its MTP
   module at the catalog's published acceptance, H200 against B200.

Constants every option below reads (catalogs/constants.yaml): gpu_memory_utilization 0.9 and
runtime_reserve_gb 1 (per GPU); mbu_weights 1, mbu_kv 0.8303; mfu_decode_8bit 0.685,
mfu_prefill_8bit 0.7923, mfu_attention 0.1301; step_overhead_ms 2.485; allreduce_latency_us
35.81, link_efficiency 0.462; alltoall_latency_us 38.34; moe_compute_factor 1.313,
expert_slot_overhead 3174; prefill_chunk_tokens 417.8; ttft_overhead_ms 8.021;
first_token_engine_steps 13; max_batch_per_replica 256; draft_forward_ms 0.60;
uncalibrated_derating 0.903 (an option without calibration rows: the H100 PCIe).
Prices (catalogs/prices.yaml extras): network 17,578 USD per node, storage 10 TB per node
(costs.storage_tb_per_node default) at 70 USD per TB-month, colocation 184 USD per kW-month;
PUE 1.3, support 10 % of capital a year, average load 0.6, 8,760 h a year (costs defaults).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size
from llmsizer.sizing.results import Result

DATA = Path(__file__).resolve().parent / "data"
H = 8760.0  # hours a year
STORAGE_USD_TB_MONTH, COLO_USD_KW_MONTH = 70.0, 184.0
# A server's network (prices.yaml, session 23): 2,197.25 USD per GPU-fabric port (17,578 per
# 8-GPU node of a 1,024-GPU NDR fat tree / 8) on a platform built for a GPU fabric, + its
# front-end ports at 5.493125 USD per Gb/s (2,197.25 / 400). Before: 17,578 on every node.
FABRIC_PORT_USD, FRONTEND_GBPS_USD = 17578 / 8, 17578 / 8 / 400
NET_HGX8_USD = 8 * FABRIC_PORT_USD + 2 * 200 * FRONTEND_GBPS_USD   # 19,775.25: 8 + 2 x 200 GbE
NET_R760XA_USD = 2 * 100 * FRONTEND_GBPS_USD                       # 1,098.625: PCIe, 2 x 100 GbE


def _rec(r: Result, workload: int) -> dict[str, Any]:
    w = r.workloads[workload]
    o = next(o for o in w.options if o.id == w.recommended)
    return o.values


@pytest.fixture(scope="module")
def telco() -> Result:
    return size(load(DATA / "sek-telco-moe-r22.yaml"))


@pytest.fixture(scope="module")
def university() -> Result:
    return size(load(DATA / "gbp-university-r22.yaml"))


@pytest.fixture(scope="module")
def ledgerline() -> Result:
    return size(load(DATA / "usd-ondemand-mtp-r22.yaml"))


# ---- 1. Nordvik Telecom: Qwen3-235B-A22B on B200, a request rate, p99 first token ------------

def test_telco_memory_per_replica(telco: Result) -> None:
    """4 x B200 (180 GB), experts over 4 GPUs, attention data-parallel over 4 ranks, FP8."""
    assert telco.workloads[0].recommended == "b200/fp8/kv-fp8/tp4/ep4/adp4/dell-xe9685l"
    v = _rec(telco, 0)
    # models.yaml qwen3-235b-a22b: 235.0e9 total, 22.0e9 active, 128 experts, top 8.
    routed = (235.0e9 - 22.0e9) / (1 - 8 / 128)          # 227.2e9 in the experts
    shared = 235.0e9 - routed                            # 7.8e9 attention + embeddings
    # FP8 1 B, but the checkpoint keeps embeddings, lm_head, norms and routers (1.2947e9,
    # models.yaml) at 2 B (session 25 weights audit; was 258.4 at 1 B throughout); ADP 4
    # keeps 4 copies of the non-expert part: 263.6
    kept = 1.2947e9
    weights_gb = (routed + (shared + kept) * 4) / 1e9
    assert v["weights_gb"] == pytest.approx(weights_gb) and weights_gb == pytest.approx(263.579)
    # KV: 2 x 4 KV heads x 128 head dim x 1 B (FP8) x 94 layers = 96,256 B a token; a request
    # holds 2,000 + 350 tokens: 0.2262 GB; attention TP 1 under ADP, so no copies.
    kv_req_gb = 2 * 4 * 128 * 1 * 94 * 2350 / 1e9
    assert v["kv_bytes_per_token"] == 96256
    assert v["kv_gb_per_request"] == pytest.approx(kv_req_gb)
    usable = 4 * (180 * 0.9 - 1)                         # 644 GB
    assert v["usable_memory_gb"] == pytest.approx(usable)
    # 1681 since session 25 (was 1704)
    assert v["max_sequences_by_memory"] == math.floor((usable - weights_gb) / kv_req_gb) == 1681


def test_telco_step_time_batch_and_tpot(telco: Result) -> None:
    """Roofline step t(B) = a + b x B on B200 (gpus.yaml: 7.7 TB/s, FP8 4,500 TFLOP/s,
    NVLink 900 GB/s), the batch the 25 tok/s target allows (TPOT 40 ms)."""
    v = _rec(telco, 0)
    routed, shared = 227.2e9, 7.8e9
    # a: the busiest GPU reads all its experts at a batch of 251 (1 - (1 - 8/128)^251 ~ 1):
    # (7.8 x 4 + 227.2) GB / (4 x 7.7 TB/s) = 8.390 ms; two all-to-alls per MoE layer (94)
    # at 38.34 us = 7.208 ms; + 2.485 ms overhead = 18.083 ms.
    weights_ms = (shared * 4 + routed) / 1e9 / (4 * 7.7)
    a = weights_ms + 2 * 94 * 38.34 / 1000 + 2.485
    assert v["step_fixed_ms"] == pytest.approx(a)
    # b: KV read at the mean context 2,000 + 175 over 94 layers at 1,024 B: 0.209 GB /
    # (4 x 7.7 x 0.8303) = 0.00819 ms; compute (2 x 22e9 x 1.313 + 6 x 94 x 8 x 4096 x 3174
    # expert-slot FLOPs) / (4 x 4,500e12 x 0.685) = 0.00944 ms; attention 4 x 64 x 128 FLOPs
    # x 94 x 2,175 / (4 x 4,500e12 x 0.1301) = 0.00286 ms; the all-to-all 94 x 4 x 3/4 x 4096
    # x (2 + 2) B / (4 x 900e9 x 0.462) = 0.00278 ms; the prompt's prefill spread over the 350
    # steps: 2,000 x (compute 0.00838 + all-to-all 0.00278 ms a token) / 350 = 0.0638 ms.
    slot = 6 * 94 * 8 * 4096 * 3174
    kv_ms = 1024 * 94 * 2175 / 1e9 / (4 * 7.7 * 0.8303)
    cmp_ms = (2 * 22e9 * 1.313 + slot) / (4 * 4500e12 * 0.685) * 1000
    att_ms = 4 * 64 * 128 * 94 * 2175 / (4 * 4500e12 * 0.1301) * 1000
    a2a_ms = 94 * 4 * 3 / 4 * 4096 * 4 / (4 * 900e9 * 0.462) * 1000
    pre_tok = ((2 * 22e9 * 1.313 + slot) / 4500 + 2 * 8192 * 94 * 2000 / 4500) \
        / (4 * 1e12 * 0.7923) * 1000 + a2a_ms
    b = kv_ms + cmp_ms + att_ms + a2a_ms + pre_tok * 2000 / 350
    assert v["step_ms_per_seq"] == pytest.approx(b)
    batch = math.floor((1000 / 25 - a) / b)              # (40 - 18.08) / 0.0870 = 251.8
    assert batch == 251 and v["batch_per_replica"] == batch
    assert v["tpot_ms"] == pytest.approx(a + b * batch)  # 39.93 ms: 25.05 tok/s a user


def test_telco_first_token_p99_with_its_queue(telco: Result) -> None:
    """TTFT p99 = the first token without waiting + the p99 prompt wait (docs/queueing.md:
    Allen-Cunneen, Poisson arrivals CV 1, prompts of one length CV 0)."""
    v = _rec(telco, 0)
    tpot = v["tpot_ms"]
    # prefill: 2,000 x 0.01116 ms = 22.3 ms (more than one weight read, 8.39 ms) + the
    # all-to-all latency 7.208 + 2.485 overhead = 32.0 ms.
    prefill = 2000 * v["prefill_ms_per_token"] + 2 * 94 * 38.34 / 1000 + 2.485
    assert v["prefill_ms"] == pytest.approx(prefill)
    steps = 0.5 + 2000 / 417.8                           # 5.29 chunks shared with decode
    own = (steps + 13) * v["prefill_ms_per_seq_step"]    # this prompt's share, counted once
    unq = prefill + steps * (tpot - v["decode_weights_ms"]) + 13 * tpot + 8.021 - own
    assert v["ttft_unqueued_ms"] == pytest.approx(unq)   # 724.6 ms
    # Little's law per replica: 251 sequences each holding a slot for the first token + 349
    # steps: 14.66 s, so 17.1 prompts/s a replica (the replica full: a conservative bound;
    # 20/s over 2 replicas is 10/s) x 32.0 ms = rho 0.548.
    slot_ms = v["request_slot_fixed_ms"] + v["request_slot_ms_per_seq"] * 251
    rho = 251 * 1000 / slot_ms * prefill / 1000
    assert v["prefill_utilisation"] == pytest.approx(rho)
    # p99 wait: (1 + 0) / 2 x prefill / (1 - rho) x ln(rho / 0.01) = 141.8 ms
    p99 = unq + 0.5 * prefill / (1 - rho) * math.log(rho / 0.01)
    assert v["ttft_p99_ms"] == pytest.approx(p99)
    assert 860 < p99 < 870 and p99 < 2000                # the 2 s target met


def test_telco_replicas_gpus_and_costs(telco: Result) -> None:
    """Concurrency by Little's law, replicas with 20 % headroom, no N+1, SEK 10.5 a dollar."""
    v = _rec(telco, 0)
    # 20 requests/s x (first token 724.6 ms + 349 x 39.93 ms = 14.66 s) = 293.2 -> 294 users
    cycle = v["ttft_unqueued_ms"] + 349 * v["tpot_ms"]
    assert v["concurrent_users"] == math.ceil(20 * cycle / 1000) == 294
    demand = 294 / 251                                   # 1.171 replicas
    assert v["demand_replicas"] == pytest.approx(demand)
    assert v["replicas"] == math.ceil(demand * 1.2) == 2  # 8 GPUs: one 8-GPU XE9685L
    assert (telco.totals.gpus_purchased, telco.totals.nodes) == (8, 1)
    assert v["headroom_achieved"] == pytest.approx(2 / demand - 1)      # 70.7 %
    # capex: Dell XE9685L 60,000 USD + 8 x B200 40,000 USD + network 19,775.25 USD (17,578
    # before session 23 priced its 2 x 200 GbE front end), x 10.5
    capex = (60000 + 8 * 40000 + NET_HGX8_USD) * 10.5
    assert telco.totals.capex == pytest.approx(capex) and capex == pytest.approx(4_197_640.125)
    # a year: capex / 4 + power 10 kW x 1.3 x 8,760 h x 1.1 SEK x 0.6 + colocation 10 kW x 184
    # x 12 + storage 10 TB x 70 x 12 (dollars x 10.5) + support 10 % of capex
    onprem = (capex / 4 + 10 * 1.3 * H * 1.1 * 0.6 + 10 * COLO_USD_KW_MONTH * 12 * 10.5
              + 10 * STORAGE_USD_TB_MONTH * 12 * 10.5 + 0.1 * capex)
    assert telco.totals.annual_cost_onprem == pytest.approx(onprem)     # SEK 1.86 M
    # cloud (committed 1 year, the default): the B200 has no dated one-year price: its GPU
    # cloud price 6.69 USD x the tier ratio 0.6642 = 4.4435 USD/GPU-h; 8 GPUs all year
    cloud = 8 * 6.69 * 0.6642 * 10.5 * H + 10 * STORAGE_USD_TB_MONTH * 12 * 10.5
    assert telco.totals.annual_cost_cloud == pytest.approx(cloud)       # SEK 3.36 M


# ---- 2. University of Northfield: an overnight batch job and a named-user chat -----------------

def test_university_batch_job_on_h100_pcie_pairs(university: Result) -> None:
    """Llama 3.3 70B (70.6e9, 80 layers, 8 KV heads x 128) FP8 on 2 x H100 PCIe (80 GB,
    2.0 TB/s, FP8 1,513 TFLOP/s, NVLink bridge 300 GB/s), uncalibrated: x 0.903."""
    assert university.workloads[0].recommended == "h100-pcie/fp8/kv-fp8/tp2"
    v = _rec(university, 0)
    # FP8 1 B + embed_tokens and lm_head (+ norms) 2.1027e9 kept at 2 B (session 25 weights
    # audit; was 70.6): 72.70 GB
    weights = (70.6e9 + 2.1027e9) / 1e9
    assert v["weights_gb"] == pytest.approx(weights)
    kv_req = 2 * 80 * 8 * 128 * 1 * 6500 / 1e9           # 1.065 GB for 6,000 + 500 tokens
    assert v["kv_gb_per_request"] == pytest.approx(kv_req)
    budget = 2 * (80 * 0.9 - 1) - weights                 # 69.3 GB
    assert v["max_sequences_by_memory"] == math.floor(budget / kv_req) == 65  # was 67
    e = 0.903
    # a: 70.6 GB / (2 x 2.0 TB/s x 0.903) = 19.55 ms + two all-reduces a layer x 80 x 35.81 us
    # = 5.73 ms + 2.485 ms = 27.76 ms
    a = 70.6 / (2 * 2.0 * e) + 80 * 2 * 35.81 / 1000 + 2.485
    assert v["step_fixed_ms"] == pytest.approx(a)
    # b: KV at 6,250 tokens 80 x 2,048 B x 6,250 / (2 x 2.0 x 0.8303 x 0.903) = 0.341 ms;
    # 2 x 70.6e9 / (2 x 1,513e12 x 0.685 x 0.903) = 0.0754 ms; attention 4 x 64 x 128 x 80
    # x 6,250 / (2 x 1,513e12 x 0.1301 x 0.903) = 0.0461 ms; all-reduce 80 x 2 x (2 x 1/2 x
    # 8,192 x 2 B) / (300e9 x 0.462) = 0.0189 ms; prefill 6,000 x (0.0689 + 0.0189) / 500
    ar = 80 * 2 * (2 * 0.5 * 8192 * 2) / (300e9 * 0.462) * 1000
    pre_tok = (2 * 70.6e9 + 2 * 8192 * 80 * 6000) / 1513 / (2 * 1e12 * 0.7923 * e) * 1000 + ar
    b = (80 * 2048 * 6250 / 1e9 / (2 * 2.0 * 0.8303 * e)
         + 2 * 70.6e9 / (2 * 1513e12 * 0.685 * e) * 1000
         + 4 * 64 * 128 * 80 * 6250 / (2 * 1513e12 * 0.1301 * e) * 1000
         + ar + pre_tok * 6000 / 500)
    assert v["step_ms_per_seq"] == pytest.approx(b)
    # no speed target: memory holds the batch at 65 (67 before session 25's 16-bit
    # embeddings); TPOT 27.76 + 65 x 1.535 = 127.5 ms; a replica full makes 65 / 0.1275 =
    # 510 tok/s (1,500 / 510 = 2.94 replicas full). The step still streams 70.6 GB: the
    # weight reads keep the single price (tests/test_fp4_checkpoint.py)
    assert v["batch_per_replica"] == 65
    tps = 65 * 1000 / (a + 65 * b)
    assert v["replica_output_tokens_per_s"] == pytest.approx(tps)
    # but the job keeps only 64 streams open (session 22, s22-stated-streams): they make
    # 1,500 tok/s at steps of 64 x 1000 / 1,500 = 42.67 ms, 27.76 + 1.535 x 64 / N <= 42.67:
    # N >= 1.535 x 64 / 14.91 = 6.59 replicas at peak (4 full replicas would hold 260)
    n = b * 64 / (64 * 1000 / 1500 - a)
    assert v["demand_replicas"] == pytest.approx(n)
    # headroom 25 % on the load, 1,875 tok/s: steps of 64,000 / 1,875 = 34.13 ms,
    # N >= 1.535 x 64 / (34.13 - 27.76) = 15.42 -> 16 replicas (32 GPUs) before the spares
    n_load = b * 64 / (64 * 1000 / 1875 - a)
    assert v["stream_replicas_for_load"] == pytest.approx(n_load)
    assert v["replicas_for_load"] == math.ceil(n_load) == 16


def test_university_chat_from_named_users(university: Result) -> None:
    """Llama 3.1 8B FP8 on one H100 PCIe: 8,000 students x 2 requests an hour x peak 3 =
    13.33 requests/s; 20 tok/s a user (TPOT 50 ms) and a p95 first token of 1.5 s."""
    v = _rec(university, 1)
    assert university.workloads[1].recommended == "h100-pcie/fp8/kv-fp8/tp1"
    rate = 8000 * 2 * 3 / 3600
    assert v["peak_request_rate_per_s"] == pytest.approx(rate)
    # KV 2 x 32 layers x 8 x 128 x 1 B = 65,536 B a token x 1,500 = 98.3 MB; budget 80 x 0.9
    # - 1 - 9.08 = 61.92 GB: 629 requests (weights 8.03 + the 1.0509e9 of embed_tokens,
    # lm_head and norms kept at 2 B: session 25 weights audit; was 8.03 GB, 640 requests)
    weights = (8.03e9 + 1.0509e9) / 1e9
    assert v["max_sequences_by_memory"] == math.floor((80 * 0.9 - 1 - weights) / (65536 * 1500 / 1e9)) == 629
    e = 0.903
    a = 8.03 / (2.0 * e) + 2.485                          # 4.446 + 2.485 = 6.931 ms
    pre_tok = (2 * 8.03e9 + 2 * 4096 * 32 * 1200) / 1513 / (1e12 * 0.7923 * e) * 1000
    b = (32 * 2048 * 1350 / 1e9 / (2.0 * 0.8303 * e) + 2 * 8.03e9 / (1513e12 * 0.685 * e) * 1000
         + 4 * 32 * 128 * 32 * 1350 / (1513e12 * 0.1301 * e) * 1000 + pre_tok * 1200 / 300)
    assert v["step_fixed_ms"] == pytest.approx(a)
    assert v["step_ms_per_seq"] == pytest.approx(b)
    # (50 - 6.93) / 0.1407 = 306 sequences by speed; the engine cap 256 binds
    assert v["batch_by_tpot"] == math.floor((50 - a) / b) == 306
    assert v["batch_per_replica"] == 256
    # Little's law: each request holds a slot for its first token + 299 steps at the batch
    # the load brings: 13.33/s x 5.39 s = 71.9 -> 72 users, 72 / 256 = 0.28 replicas
    assert v["concurrent_users"] == math.ceil(rate * v["request_cycle_ms"] / 1000) == 72
    assert v["tpot_ms"] == pytest.approx(a + 72 * b)      # 17.06 ms: 58.6 tok/s a user
    assert v["demand_replicas"] == pytest.approx(72 / 256)
    # p95 first token: prefill 1,200 x 0.01513 ms = 18.15 ms (above one weight read, 4.45)
    # + 2.485 = 20.64 ms; one replica takes the 13.33 requests/s (72 slots of 5.39 s: 13.35/s),
    # busy prefilling rho = 13.35 x 0.02064 = 0.276; p95 wait (1 + 0) / 2 x 20.64 / (1 - rho)
    # x ln(rho / 0.05) = 24.3 ms on top of 292 ms without waiting: far inside 1.5 s
    prefill = 1200 * pre_tok + 2.485
    assert v["prefill_ms"] == pytest.approx(prefill)
    rho = 72 * 1000 / v["request_slot_ms"] * prefill / 1000
    assert v["prefill_utilisation"] == pytest.approx(rho)
    wait95 = 0.5 * prefill / (1 - rho) * math.log(rho / 0.05)
    assert v["prefill_wait_p95_ms"] == pytest.approx(wait95)
    assert v["ttft_p95_ms"] == pytest.approx(v["ttft_unqueued_ms"] + wait95)
    assert v["ttft_p95_ms"] < 400


def test_university_plan_and_costs(university: Result) -> None:
    """One node group of Dell R760xa (4 PCIe slots, 2.2 kW, 20,000 USD) with H100 PCIe at
    25,000 USD (gpus.yaml), at GBP 0.79 a dollar: 16 + 1 replicas serving and one node spare.
    The batch job's pool: its 64 streams at 1,500 tok/s x 1.25 headroom need 15.42 replicas
    (test above) -> 16 of TP2 = 32 GPUs (was 4 x 67 = 268 requests assumed for 64 streams,
    then 9 replicas giving only 10 % more tok/s than the target); the chat: 1 GPU."""
    pools = university.plan.pools
    assert [(p.replicas, p.gpus) for p in pools] == [(16, 32), (1, 1)]
    t = university.totals
    # 33 GPUs serving + one node's 4 on standby (N+1) = 37 in ROUNDUP(37 / 4) = 10 nodes
    assert (t.gpus_serving, t.gpus_standby, t.gpus_purchased, t.nodes) == (33, 4, 37, 10)
    # network: each PCIe server its 2 x 100 GbE front end, no GPU fabric (session 23; it was
    # 10 x 17,578 USD of InfiniBand fabric, GBP 138,866 of a GBP 1,027,616 capex)
    capex = (37 * 25000 + 10 * 20000 + 10 * NET_R760XA_USD) * 0.79
    assert t.capex == pytest.approx(capex) == pytest.approx(897_429.1375)  # GBP 897 k
    onprem = (capex / 5 + 10 * 2.2 * 1.3 * H * 0.24 * 0.6
              + 10 * 2.2 * COLO_USD_KW_MONTH * 12 * 0.79
              + 10 * 10 * STORAGE_USD_TB_MONTH * 12 * 0.79 + 0.1 * capex)
    assert t.annual_cost_onprem == pytest.approx(onprem)  # GBP 449 k
    # cloud comparison (committed 1 year): the H100 PCIe has only a GPU-cloud price, 3.29
    # USD (Lambda) x 0.6642 = 2.185 USD/GPU-h, an offer sold by the GPU (session 22's instance
    # shapes): one instance per replica and, with N+1, one spare instance for the node group
    # as wide as its widest replica (session 23; session 22: one per pool, 36 GPUs in 19
    # instances, GBP 611 k). Lambda sells the H100 PCIe as 1-GPU instances only (SkyPilot's
    # lambda/vms.csv v8 @0f407038 lists gpu_1x_h100_pcie alone; prices.yaml fixed_sizes): a
    # TP2 replica spans two of them (costs.py, the offer's own size when none holds it), so
    # 16 x 2 (the batch job) + 1 (the chat) + 1 (the spare, one 1-GPU instance) = 34 GPUs in
    # 34 instances all year, + the same storage (session 23 before: 35 GPUs in 18 2-GPU
    # instances Lambda does not sell, GBP 596 k). Session 24: two 1-GPU virtual machines are
    # not one tensor-parallel group, so the TP2 batch job cannot run on that offer at all:
    # the node group has no cloud price (costs.py cloud_holds_replica = 0) and the account's
    # cloud total is none, the GPU named as unheld (it was 34 x 3.29 x 0.6642 x 0.79 x 8,760
    # + 10 servers' storage = GBP 581 k)
    assert university.plan.node_groups[0].values["cloud_instances"] == 34
    assert university.plan.node_groups[0].values["cloud_holds_replica"] == 0
    assert university.plan.node_groups[0].annual_cost_cloud == 0
    assert t.annual_cost_cloud is None
    assert (t.cloud_unpriced, t.cloud_unheld) == (["h100-pcie"], ["h100-pcie"])


# ---- 3. Ledgerline: DeepSeek-V3 with MTP, rented on demand ---------------------------------

def test_mtp_memory_and_speculative_factor(ledgerline: Result) -> None:
    """8 x H200 (141 GB, 4.8 TB/s), experts over 8, attention data-parallel over 8, FP8."""
    assert ledgerline.workloads[0].recommended == "h200-sxm/fp8/kv-fp8/tp8/ep8/adp8/dell-xe9680"
    v = _rec(ledgerline, 0)
    # models.yaml deepseek-v3: 671e9 total, 37e9 active, 256 experts top 8, 61 layers, 58 MoE
    routed = (671e9 - 37e9) / (1 - 8 / 256)               # 654.5e9
    shared = 671e9 - routed                               # 16.5e9, one copy per ADP rank
    # the FP8 release keeps embeddings, lm_head, norms and routers (1.9608e9) in BF16: each
    # rank's non-expert copy costs shared + kept bytes (session 25 weights audit; was 786.8)
    kept = 1.9608e9
    weights = (routed + 8 * (shared + kept)) / 1e9         # 802.5 GB
    assert v["weights_gb"] == pytest.approx(weights)
    # MLA: (512 + 64) x 1 B x 61 layers = 35,136 B a token; x 4,800 = 0.1687 GB
    kv_req = 576 * 61 * 4800 / 1e9
    assert v["kv_gb_per_request"] == pytest.approx(kv_req)
    budget = 8 * (141 * 0.9 - 1) - weights                                 # 204.7 GB
    assert v["max_sequences_by_memory"] == math.floor(budget / kv_req) == 1213  # was 1306
    # MTP: one drafted token, the catalog's published acceptance 1.875 a step; the MTP
    # layer is one of 61: factor (1 + 1/61) / 1.875 = 0.5421 on every step
    assert v["spec_tpot_factor"] == pytest.approx((1 + 1 / 61) / 1.875)


def test_mtp_step_batch_and_tpot(ledgerline: Result) -> None:
    v = _rec(ledgerline, 0)
    routed = (671e9 - 37e9) / (1 - 8 / 256)
    shared = 671e9 - routed
    # a: the busiest GPU reads all its experts: (8 x 16.5 + 654.5) GB / (8 x 4.8) = 20.49 ms;
    # 2 x 58 all-to-alls x 38.34 us = 4.45 ms; 2.485 ms; the draft's fixed 0.60 ms / (1 + 1/61)
    a = ((8 * shared + routed) / 1e9 / (8 * 4.8) + 2 * 58 * 38.34 / 1000 + 2.485
         + 0.60 / (1 + 1 / 61))
    assert v["step_fixed_ms"] == pytest.approx(a)
    # b: KV 576 B x 61 x 4,400 / (8 x 4.8 x 0.8303); per token verified (x 2 under MTP):
    # compute (2 x 37e9 x 1.313 + 6 x 58 x 8 x 7168 x 3174) / (8 x 1,979e12 x 0.685), MLA
    # attention 2 x 128 x (2 x 512 + 64) x 61 x 4,400 / (8 x 1,979e12 x 0.1301), all-to-all
    # 58 x 8 x 7/8 x 7168 x 4 B / (8 x 450e9 x 0.462); the prompt's prefill spread over
    # 800 / 1.875 steps
    slot = 6 * 58 * 8 * 7168 * 3174
    a2a = 58 * 8 * 7 / 8 * 7168 * 4 / (8 * 450e9 * 0.462) * 1000
    per_token = ((2 * 37e9 * 1.313 + slot) / (8 * 1979e12 * 0.685) * 1000
                 + 2 * 128 * 1088 * 61 * 4400 / (8 * 1979e12 * 0.1301) * 1000 + a2a)
    pre_tok = ((2 * 37e9 * 1.313 + slot) + 2 * 128 * 160 * 61 * 4000) / 1979 \
        / (8 * 1e12 * 0.7923) * 1000 + a2a
    b = 576 * 61 * 4400 / 1e9 / (8 * 4.8 * 0.8303) + 2 * per_token + pre_tok * 4000 * 1.875 / 800
    assert v["step_ms_per_seq"] == pytest.approx(b)
    f = (1 + 1 / 61) / 1.875
    # 30 tok/s a user: (33.33 / 0.542 - 28.01) / 0.314 = 106.6 -> 106 sequences
    assert v["batch_per_replica"] == math.floor((1000 / 30 / f - a) / b) == 106
    assert v["tpot_ms"] == pytest.approx((a + 106 * b) * f)    # 33.2 ms: 30.1 tok/s


def test_mtp_rented_instances_and_costs(ledgerline: Result) -> None:
    """300 users / 106 = 2.83 replicas x 1.2 = 3.4 -> 4, + 1 spare instance (N+1) = 5 AWS
    p5en.48xlarge (8 x H200 at 7.912 USD/GPU-h on demand, prices.yaml)."""
    v = _rec(ledgerline, 0)
    assert v["demand_replicas"] == pytest.approx(300 / 106)
    assert (v["replicas_for_load"], v["spare_replicas"], v["replicas"]) == (4, 1, 5)
    assert v["headroom_after_node_loss"] == pytest.approx(4 / (300 / 106) - 1)   # 41.3 %
    t = ledgerline.totals
    assert (t.cloud_gpus_rented, t.gpus_purchased) == (40, 40)
    cloud = 40 * 7.912 * H + 5 * 10 * STORAGE_USD_TB_MONTH * 12
    assert t.annual_cost_cloud == pytest.approx(cloud)    # USD 2.81 M
    # buying instead: 5 x (Dell XE9680 50,000 + 8 x H200 35,000 + network 19,775.25), over 3
    # years (17,578 a node before session 23 priced the front end)
    capex = 5 * (50000 + 8 * 35000 + NET_HGX8_USD)
    assert t.capex == pytest.approx(capex)
    onprem = (capex / 3 + 5 * 8.4 * 1.3 * H * 0.12 * 0.6 + 5 * 8.4 * COLO_USD_KW_MONTH * 12
              + 5 * 10 * STORAGE_USD_TB_MONTH * 12 + 0.1 * capex)
    assert t.annual_cost_onprem == pytest.approx(onprem)  # USD 922 k
    # the hosted API at Bedrock's 0.58 in / 1.68 out per million: 300 users x 30 tok/s x 0.6
    # average load x 8,760 h, and 5 input tokens for each output token (4,000 / 800)
    out_m = 300 * 30 * 0.6 * H * 3600 / 1e6
    assert t.annual_cost_api == pytest.approx(out_m * 5 * 0.58 + out_m * 1.68)   # USD 780 k
    assert ledgerline.deployment is not None
    assert (ledgerline.deployment.recommended, ledgerline.deployment.cheapest) == ("cloud", "api")
