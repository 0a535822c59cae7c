"""Disaggregated prefill/decode as an option kind (xPyD, issue 23 item 1): sizing/xpyd.py
states the prefill layout as the option's inputs; model/calculations/disagg.py's
XPYD_CALCULATIONS count the prefill replicas, their queue and the first token.

The published deployment it must state and size: LMSYS / SGLang team, "Deploying DeepSeek
with PD Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs" (2025-05-05;
lm-sys/lm-sys.github.io blog/2025-05-05-large-scale-ep.md @2db4e40): prefill on 4 nodes of
8 H100 (EP32), decode on 9 nodes (EP72) with 256 sequences per GPU at a 2,000-token KV,
22,282 output tokens/s per decode node; 54,543 input tokens/s per prefill node (2K prompts).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from llmsizer.inputs.loader import load_from_text
from llmsizer.inputs.schema import Policy, Requirements
from llmsizer.inputs.schema_workload import Account, Targets
from llmsizer.inputs.schema_workload import Workload as W
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
    evaluate_choice,
    workload_inputs,
)
from llmsizer.sizing.search import reason_for, size_workload
from llmsizer.sizing.xpyd import xpyd_inputs

CAT = load_catalog()
LMSYS_DECODE_TOKENS_PER_S_PER_NODE = 22_282  # blog table "For decode", SGLang (Default)
PREFILL = Choice("h100-sxm", "dgx-h100", "fp8", "bf16", 32, ep=32, adp=32)  # 4 nodes
DECODE = Choice("h100-sxm", "dgx-h100", "fp8", "bf16", 72, ep=72, adp=72)  # 9 nodes


def _lmsys(users: int = 256 * 72, ttft_s: float = 5.0, rate: float | None = None,
           burstiness: float | None = None, aggregated: bool = False, **policy: object
           ) -> dict:
    """The LMSYS deployment stated as an option: DeepSeek-V3 in FP8 with the checkpoint's
    16-bit KV (SGLang's default), 2,000-token prompts and 100-token answers (the KV stays
    about 2,000 tokens), decode EP72 over 9 nodes fed by EP32 prefill replicas of 4 nodes;
    a decode replica's 256 sequences per GPU as the users, 5 tok/s each."""
    load: dict[str, float] = {"requests_per_s": rate} if rate else {"concurrent_users": users}
    if burstiness is not None:
        load["burstiness"] = burstiness
    w = W(name="chat", model="deepseek-v3", prompt_tokens=2000, output_tokens=100,
          targets=Targets(tokens_per_s_per_user=5.0, ttft_s=ttft_s),
          **load)  # type: ignore[arg-type]
    pol = {"headroom": 0.0, "max_batch_per_replica": 256 * 72, "survive_node_loss": False,
           **policy}
    req = Requirements(schema_version=1, account=Account(name="lmsys"), workloads=[w],
                       policy=Policy(**pol))  # type: ignore[arg-type]
    base = {**account_inputs(req, CAT), **workload_inputs(w, CAT.model("deepseek-v3"))}
    tables = build_tables(req, CAT)
    if aggregated:
        return evaluate_choice(base, DECODE, tables, req, CAT)
    pre = evaluate_choice(base, PREFILL, tables, req, CAT)
    env = evaluate_choice(base, replace(DECODE, prefill=(32, 32, 32)), tables, req, CAT,
                          xpyd_inputs(CAT, PREFILL, pre, DECODE))
    env["_prefill_ms_per_token"] = pre["prefill_ms_per_token"]
    return env


def test_lmsys_96_h100_deployment_sized_within_the_moe_error_band():
    """One decode replica of 9 nodes serves the 18,432 sequences; its output tokens per node
    lie within the model's stated 80 % band for MoE options (confidence_moe_p10 / p90 in
    constants.yaml, from cross-validation) of the measured 22,282. Today about 17,000
    (-24 %). The prefill GPUs join the option's: GPUs = 72 + x x 32."""
    env = _lmsys()
    assert reason_for(env) == ("", "")
    assert env["replicas"] == 1 and env["disagg_prefill_gpus"] == 32
    per_node = env["replica_output_tokens_per_s"] / 9
    error = per_node / LMSYS_DECODE_TOKENS_PER_S_PER_NODE - 1
    assert CAT.constant("confidence_moe_p10") <= error <= CAT.constant("confidence_moe_p90")
    x = env["disagg_prefill_replicas_for_load"]
    assert x >= 1 and env["gpus"] == 72 + x * 32
    assert env["nodes"] == math.ceil(env["gpus"] / 8)


# Published prefill (context) rates of DeepSeek-V3/R1 on expert-parallel, attention-DP
# prefill pools, input tokens/s per GPU, against the list's prefill term without the
# disaggregated factor: (layout, prompt tokens, measured, source)
PUBLISHED_PREFILL = (
    # LMSYS 96 x H100 blog (above), "Prefill Phase": 4 nodes, EP32, per node 57,674 /
    # 54,543 / 50,302 tokens/s at 1K / 2K / 4K prompts, 16,384 tokens per device
    (PREFILL, 1000, 57_674 / 8, "lmsys h100 1k"),
    (PREFILL, 2000, 54_543 / 8, "lmsys h100 2k"),
    (PREFILL, 4000, 50_302 / 8, "lmsys h100 4k"),
    # LMSYS / SGLang team, "Deploying DeepSeek on GB200 NVL72 with PD and Large Scale EP
    # (Part II)" (2025-09-25; lm-sys/lm-sys.github.io blog/2025-09-25-gb200-part-2.md
    # @0f32018): 2,000-token prompts, 4 ranks per prefill instance with BF16 attention and
    # FP8 MoE 18,471; 2 ranks with FP8 attention and NVFP4 MoE 26,156 (weights offloaded
    # to the host, which the list does not model: its memory rule is not checked here)
    (Choice("gb200", "gb200-nvl72", "fp8", "bf16", 4, ep=4, adp=4), 2000, 18_471,
     "lmsys gb200 fp8"),
    (Choice("gb200", "gb200-nvl72", "fp4", "fp8", 2, ep=2, adp=2), 2000, 26_156,
     "lmsys gb200 fp4"),
)


def _prefill_env(choice: Choice, prompt: int) -> dict:
    w = W(name="chat", model="deepseek-v3", prompt_tokens=prompt, output_tokens=100,
          targets=Targets(tokens_per_s_per_user=5.0, ttft_s=30.0), concurrent_users=64)
    req = Requirements(schema_version=1, account=Account(name="lmsys"), workloads=[w],
                       policy=Policy(headroom=0.0, survive_node_loss=False))
    base = {**account_inputs(req, CAT), **workload_inputs(w, CAT.model("deepseek-v3"))}
    return evaluate_choice(base, choice, build_tables(req, CAT), req, CAT)


@pytest.mark.parametrize(("choice", "prompt", "measured", "what"), PUBLISHED_PREFILL,
                         ids=[p[3] for p in PUBLISHED_PREFILL])
def test_prefill_rate_without_the_factor_matches_published_prefill_pools(
        choice: Choice, prompt: int, measured: float, what: str) -> None:
    """The list's prefill term alone (no disaggregated factor) lies within the MoE band of
    every published prefill pool: H100 EP32 +16 % / +20 % / +23 % (1K / 2K / 4K; -42 % to
    -33 % while the network counted a copy per expert), GB200 EP4 FP8 -2 %, EP2 FP4 -12 %.
    With the factor (1.75) every one would be 30-50 % slow."""
    env = _prefill_env(choice, prompt)
    per_gpu = 1000 / env["prefill_ms_per_token"] / (choice.tp * choice.pp)
    error = per_gpu / measured - 1
    assert CAT.constant("confidence_moe_p10") <= error <= CAT.constant("confidence_moe_p90")


def test_prefill_sends_a_token_once_per_other_node():
    """DeepEP's normal kernels (prefill) send a token over the network once to each other
    node holding one of its experts and forward it over NVLink there: EP32 over 4 nodes,
    top-8: 3 x (1 - (3/4)^8) = 2.70 copies, against the 8 x 24 / 32 = 6 per expert the
    decode step's exchange counts (unchanged). With two-batch overlap only what exceeds
    the compute adds: here nothing (3.2 us against 3.4 us of compute a token)."""
    env = _prefill_env(PREFILL, 2000)
    copies = 3 * (1 - (3 / 4) ** 8)
    assert copies == pytest.approx(2.70, abs=0.005)
    assert env["prefill_alltoall_scaleout_ms_per_token"] == pytest.approx(
        env["alltoall_scaleout_ms_per_token"] * copies / 6)
    assert env["prefill_alltoall_scaleout_ms_per_token"] < env["prefill_compute_ms_per_token"]
    assert env["prefill_ms_per_token"] == pytest.approx(
        env["prefill_compute_ms_per_token"] + env["alltoall_ms_per_token"])


def test_the_prefill_count_covers_the_load_and_its_queue_is_in_the_first_token():
    """The closed loop's rate (users / (first token + 99 x TPOT)) over the prompts a prefill
    replica completes (1000 / (ms per prompt token x the fitted factor x 2,000)) sets the
    count; the first token is the Allen-Cunneen wait at that utilisation (burstiness 1:
    rho / (1 - rho) / 2 x one prompt's time) + prefill (the list's own: the factor is the
    pool's rate) + the cache's move + the fitted overhead + the engine's request path, 13
    decode steps (first_token_engine_steps) as for an aggregated server. The decode
    replicas prefill nothing: no prefill share in their step."""
    env = _lmsys()
    factor = CAT.constant("disagg_prefill_time_factor")
    per = 1000 / (env["_prefill_ms_per_token"] * factor * 2000)
    assert env["disagg_prefill_replica_rate_per_s"] == pytest.approx(per)
    no_wait = (env["disagg_prefill_ms"] + env["disagg_kv_move_ms"]
               + CAT.constant("ttft_overhead_ms")
               + CAT.constant("first_token_engine_steps") * env["tpot_ms"])
    rate = 256 * 72 * 1000 / (no_wait + 99 * env["tpot_ms"])
    assert env["disagg_request_rate_per_s"] == pytest.approx(rate)
    x = env["disagg_prefill_replicas_for_load"]
    assert x == max(math.ceil(rate / per), math.floor(rate / per) + 1)
    rho = rate / (x * per)
    assert env["disagg_prefill_utilisation"] == pytest.approx(rho)
    assert env["ttft_ms"] == pytest.approx(rho / (1 - rho) / 2 * 1000 / per + no_wait)
    agg = _lmsys(aggregated=True)
    assert env["prefill_ms_per_seq_step"] == 0 < agg["prefill_ms_per_seq_step"]
    assert env["step_ms_per_seq"] == pytest.approx(agg["step_ms_per_seq"]
                                                   - agg["prefill_ms_per_seq_step"])


def test_kv_moves_over_the_network_between_nodes():
    """DeepSeek's MLA cache in BF16: 61 layers x (512 + 64) x 2 B = 70,272 B per token;
    2,000 tokens sent by the 32 prefill GPUs, each over its own 50 GB/s NIC at the measured
    network efficiency (the pools span 13 nodes: no NVLink domain holds both)."""
    env = _lmsys()
    m = CAT.model("deepseek-v3")
    per_token = m.layers * (m.kv_lora_rank + m.qk_rope_head_dim) * 2
    assert per_token == 70_272
    expected = per_token * 2000 / (32 * 50e9 * CAT.constant("scaleout_efficiency")) * 1000
    assert env["disagg_kv_move_ms"] == pytest.approx(expected)


def test_a_tighter_first_token_target_buys_prefill_replicas():
    """The queue's wait shrinks as prefill replicas are added: a target below the
    rate-covering count's first token needs the count that solves rho / (1 - rho) x k x one
    prompt's time <= the room left; the decode replicas are unchanged. A target below
    prefill alone is missed whatever the count, said plainly."""
    loose, tight = _lmsys(ttft_s=30), _lmsys(ttft_s=1.75)
    assert tight["ttft_ms"] <= 1750 < loose["ttft_ms"]
    assert tight["disagg_prefill_replicas_for_load"] > loose["disagg_prefill_replicas_for_load"]
    assert tight["replicas"] == loose["replicas"]
    # one fewer would miss the target
    per, rate = tight["disagg_prefill_replica_rate_per_s"], tight["disagg_request_rate_per_s"]
    rho = rate / ((tight["disagg_prefill_replicas_for_load"] - 1) * per)
    assert rho / (1 - rho) / 2 * 1000 / per + tight["disagg_ttft_without_wait_ms"] > 1750
    code, why = reason_for(_lmsys(ttft_s=0.01))
    assert code == "ttft" and "target 10 ms" in why


def test_a_stated_arrival_rate_sets_the_prefill_count():
    """50 requests/s with 25 % headroom: x = ROUNDUP(50 x 1.25 / a prefill replica's prompt
    rate); burstier arrivals (CV 2) wait four times as long for the same count."""
    env = _lmsys(rate=50, headroom=0.25, ttft_s=30)
    per = env["disagg_prefill_replica_rate_per_s"]
    assert env["disagg_prefill_replicas_for_load"] == math.ceil(50 * 1.25 / per)
    bursty = _lmsys(rate=50, headroom=0.25, ttft_s=30, burstiness=2.0)
    assert bursty["disagg_prefill_replicas_for_load"] == env["disagg_prefill_replicas_for_load"]
    assert bursty["disagg_prefill_wait_ms"] == pytest.approx(4 * env["disagg_prefill_wait_ms"])


def test_n_plus_one_adds_a_node_of_prefill_replicas():
    """Surviving a node loss: the prefill replicas keep as many spares as one node holds, at
    least one (a 4-node replica: one); the decode replicas their own."""
    base, spare = _lmsys(), _lmsys(survive_node_loss=True)
    assert spare["disagg_prefill_spare_replicas"] == 1
    assert spare["disagg_prefill_pool_gpus"] == base["disagg_prefill_pool_gpus"] + 32
    assert spare["replicas"] == base["replicas"] + 1


RACK = """schema_version: 1
account: {name: Frontier, currency: USD}
workloads:
  - name: reasoning
    model: deepseek-r1
    concurrent_users: 4000
    prompt_tokens: 8000
    output_tokens: 2000
    targets: {tokens_per_s_per_user: 60, ttft_s: 1}
hardware:
  gpus: [%s]
  weight_precisions: [fp4]
  tensor_parallel: [8, 16, 32, 64, 72]
costs:
  gpu_prices: {%s: 50000}
"""


def _rack(gpu: str, extra: str = ""):
    req = load_from_text(RACK % (gpu, gpu) + extra, "rack.yaml", CAT).req
    w = req.workloads[0]
    return size_workload(req, w, CAT.models[w.model], CAT, build_tables(req, CAT),
                         account_inputs(req, CAT))


def test_on_a_gb300_rack_long_answers_at_speed_are_served_cheaper_disaggregated():
    """DeepSeek-R1 in FP4 on GB300 NVL72 racks, 4,000 users of 8k-token prompts and 2k-token
    answers at 60 tok/s, first token within 1 s: every aggregated layout carries each
    prompt's prefill in its decode steps, so its batch is small; the xPyD option's decode
    replicas run without it. It is recommended because it costs less (fewer racks), flagged
    as resting on the fitted factor; a prefill and a decode replica share a rack, so the
    cache moves over NVLink."""
    res = _rack("gb300")
    best = res.options[0]
    assert res.recommended == best.id and "/prefill-" in best.id
    aggregated = next(o for o in res.options if "/prefill-" not in o.id and o.feasible)
    v, a = best.values, aggregated.values
    assert float(v["annual_cost_onprem"]) < float(a["annual_cost_onprem"])
    assert float(v["gpus_purchased"]) < float(a["gpus_purchased"])
    assert float(v["ttft_ms"]) <= 1000 and float(v["tpot_ms"]) <= 1000 / 60
    assert any("disaggregated" in g for g in best.calibration_gaps)
    m = CAT.model("deepseek-r1")
    per_token = m.layers * (m.kv_lora_rank + m.qk_rope_head_dim) * 1  # FP8 KV
    link = CAT.gpu("gb300").link_gb_s * 1e9 * CAT.constant("link_efficiency")
    assert float(v["disagg_kv_move_ms"]) == pytest.approx(
        per_token * 8000 / (float(v["disagg_prefill_gpus"]) * link) * 1000)


def test_xpyd_is_offered_only_where_the_network_is_stated_and_not_when_refused():
    """GB200 NVL72: the catalog states no network per GPU, so no xPyD option; GB300 with
    policy.disaggregated: never, none either."""
    for res in (_rack("gb200"), _rack("gb300", "policy: {disaggregated: never}\n")):
        assert res.options[0].feasible
        assert not any("/prefill-" in o.id for o in res.options)


def test_the_plan_counts_both_pools_and_the_proposal_says_so():
    """The shipped example inputs/frontier-moe-rack.yaml (the GB300 account above): its
    recommendation is disaggregated; the plan's pool carries the prefill replicas (the plan's
    formulas add the members' prefill GPUs to the decode replicas'); the proposal says in one
    sentence how many prefill replicas feed how many decode replicas and how long a cache
    takes to move."""
    from pathlib import Path

    from llmsizer.documents.proposal.plan import plan_context
    from llmsizer.sizing.engine import size

    path = Path(__file__).parent.parent / "inputs" / "frontier-moe-rack.yaml"
    result = size(load_from_text(path.read_text(), path.name, CAT), CAT)
    pool = result.plan.pools[0]
    assert "/prefill-" in pool.option and result.workloads[0].recommended == pool.option
    option = next(o for o in result.workloads[0].options if o.id == pool.option)
    assert pool.prefill_gpus == option.values["disagg_prefill_gpus_for_load"] > 0
    assert pool.prefill_gpus == pool.prefill_replicas * pool.prefill_gpus_per_replica
    assert pool.gpus == pool.replicas * pool.tp + pool.prefill_gpus
    assert result.plan.node_groups[0].gpus_used >= pool.gpus
    text = plan_context(result, CAT)["plan"].groups[0].pools[0].disaggregated
    move = float(option.values["disagg_kv_move_ms"])
    assert text == (f"Disaggregated serving: {pool.prefill_replicas} prefill replicas of "
                    f"{pool.prefill_gpus_per_replica} GPUs read the prompts and feed the "
                    f"{pool.replicas} decode replicas; a request's cache moves once, in "
                    f"{move:,.2f} ms.")  # as the walk-through gives it (0.08, not "about 0.1")


def test_the_glossary_lists_disaggregated_serving_only_when_used():
    """The glossary page is nearly full: the term is listed only in a proposal whose plan
    runs prefill replicas of their own."""
    from llmsizer.documents.proposal.glossary import glossary_context

    def terms(uses: frozenset[str]) -> set[str]:
        return {t.term for t in glossary_context(uses)["glossary"]}

    assert "Disaggregated serving" in terms(frozenset({"disaggregated"}))
    assert "Disaggregated serving" not in terms(frozenset())
    assert "Prefill" in terms(frozenset()) and "Decode" in terms(frozenset())
