"""The third MoE solve (src/llmsizer/model/calculations/third_solve.py): a tight first-token
target no longer buys the replicas of a one-sequence batch where the batch's own experts allow
far more. Case from benchmarks/moe_fixed_point.py's grid (docs/queueing.md, "A third solve")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing import engine
from llmsizer.sizing.results import Result

# The grid's "kimi-k2 h200-sxm ttft 0.3 s 10 tok/s prompt 500 users 512", weights narrowed to
# MXFP4 (the precision recommended on the full grid case) to keep the workbook small.
KIMI_H200 = {
    "schema_version": 1, "account": {"name": "grid"},
    "workloads": [{"name": "w", "model": "kimi-k2", "concurrent_users": 512,
                   "prompt_tokens": 500, "output_tokens": 400,
                   "targets": {"tokens_per_s_per_user": 10, "ttft_s": 0.3}}],
    "hardware": {"gpus": ["h200-sxm"], "weight_precisions": ["mxfp4"],
                 "kv_precisions": ["fp8"]},
    "policy": {"headroom": 0.25, "survive_node_loss": False, "disaggregated": "never",
               "deployment": "on_prem"}}


def _size() -> Result:
    return engine.size(load_from_text(yaml.safe_dump(KIMI_H200), "kimi.yaml"), load_catalog())


def _recommended(r: Result) -> dict[str, Any]:
    w = r.workloads[0]
    return next(o for o in w.options if o.id == w.recommended).values


def test_kimi_k2_at_a_tight_first_token_buys_the_batch_its_experts_allow() -> None:
    """With the experts of the largest batch (256 sequences, 99.5 % of Kimi-K2's) no batch
    met the 0.3 s first token: the first estimate fell to 0, the second solve kept a batch of
    1, and the plan bought 5,120 H200 (640 replicas of TP8; benchmarks/moe_fixed_point.py,
    'today'). The line through the TTFT limit (-27 at the largest batch, 107 at one sequence,
    the smallest limit at both) meets the batch at 36, the limits solved with 36 sequences'
    experts allow 36: 18 replicas, 144 GPUs, the fixed point b* = 36's plan, targets held."""
    r = _size()
    v = _recommended(r)
    assert float(v["batch_per_replica_first"]) == 0
    assert float(v["batch_experts_estimate"]) == 1
    assert float(v["line_limit_at_bound"]) == float(v["batch_by_ttft_first"]) == -27
    assert float(v["line_limit_at_estimate"]) == float(v["batch_by_ttft_second"]) == 107
    assert float(v["batch_experts_read"]) == float(v["batch_per_replica"]) == 36
    assert r.totals.gpus_purchased == 144
    assert float(v["slo_met"]) == 1
    assert float(v["ttft_ms"]) <= float(v["target_ttft_ms"]) == 300
    assert 1000 / float(v["tpot_ms"]) >= 10
    # forward check: the share rows read the served batch's experts, or more
    share = 1 - (1 - float(v["expert_share_per_token"])) ** (
        max(1.0, float(v["batch_served"]) / float(v["pp"])) * float(v["spec_tokens_per_step"]))
    assert float(v["batch_served"]) <= float(v["batch_experts_read"])
    assert float(v["experts_read_fraction"]) >= share - 1e-12


# The grid's "qwen3-30b-a3b l40s ttft 0.3 s 50 tok/s prompt 2000 users 64", as the grid
# states it (benchmarks/moe_fixed_point.py grid(); its worst plan gap in session 19).
QWEN_L40S = {
    "schema_version": 1, "account": {"name": "grid"},
    "workloads": [{"name": "w", "model": "qwen3-30b-a3b", "concurrent_users": 64,
                   "prompt_tokens": 2000, "output_tokens": 400,
                   "targets": {"tokens_per_s_per_user": 50, "ttft_s": 0.3}}],
    "hardware": {"gpus": ["l40s"], "weight_precisions": ["fp8", "bf16", "fp4", "mxfp4"],
                 "kv_precisions": ["fp8"]},
    "policy": {"headroom": 0.25, "survive_node_loss": False, "disaggregated": "never",
               "deployment": "on_prem"}}


def test_the_line_follows_the_first_token_limit_not_the_smallest_at_each_solve() -> None:
    """Qwen3-30B-A3B on L40S, 0.3 s first token, 50 tok/s, 64 users: with the largest batch's
    experts the first-token limit allows 0; with one sequence's it allows 14 while the speed
    target allows 6 (it does not read the experts). Session 19's line joined the smallest
    limit at each (0, then the speed target's 6), met the batch at 3 and the plan bought 27
    L40S (benchmarks/moe_fixed_point.py --worst, 'product' before this change; 80 before the
    third solve). The first-token limit's own line (0 to 14) meets it at 4, the limits at 4
    sequences' experts allow 4: 20 L40S, the plan at the fixed point b* (the same script)."""
    r = engine.size(load_from_text(yaml.safe_dump(QWEN_L40S), "qwen.yaml"), load_catalog())
    v = _recommended(r)
    assert float(v["line_limit_at_bound"]) == float(v["batch_by_ttft_first"]) == 0
    assert float(v["line_limit_at_estimate"]) == float(v["batch_by_ttft_second"]) == 14
    assert float(v["batch_by_tpot"]) == float(v["batch_experts_top"]) == 6
    assert float(v["batch_experts_read"]) == float(v["batch_per_replica"]) == 4
    assert r.totals.gpus_purchased == 20
    assert float(v["slo_met"]) == 1


def test_a_whole_answer_target_keeps_the_line_through_the_smallest_limits() -> None:
    """DeepSeek-V3 on GB300 (FP8, TP4), 5 requests/s, 3,000-token prompts, 800-token answers,
    40 tok/s, 95 % of answers within 12.5 s. The whole-answer limit stops at 0 (no batch meets
    it with the largest batch's experts), so the first-token limit's own line from that floor
    (0 to 52 at one sequence) overshoots: with it the experts were read at a batch where the
    whole answer allows 1 sequence and the option needed 316 GPUs (session 20's first try,
    measured by benchmarks/moe_fixed_point.py --floored; docs/queueing.md). With a
    percentile or whole-answer target the line goes through the smallest limits (0, then the
    speed target's 20), as in session 19: batch 9, 36 GPUs (10 and 32 since session 25's
    back-off)."""
    text = yaml.safe_dump({
        "schema_version": 1, "account": {"name": "grid"},
        "workloads": [{"name": "w", "model": "deepseek-v3", "requests_per_s": 5,
                       "prompt_tokens": 3000, "output_tokens": 800,
                       "targets": {"tokens_per_s_per_user": 40, "e2e_p95_s": 12.5}}],
        "hardware": {"gpus": ["gb300"], "weight_precisions": ["fp8"], "kv_precisions": ["fp8"]},
        "policy": {"headroom": 0.25, "survive_node_loss": False, "disaggregated": "never",
                   "deployment": "on_prem"}})
    r = engine.size(load_from_text(text, "deepseek.yaml"), load_catalog())
    (v,) = [o.values for o in r.workloads[0].options if o.id == "gb300/fp8/kv-fp8/tp4"]
    assert float(v["batch_by_ttft_first"]) == 0 and float(v["batch_by_ttft_second"]) == 52
    assert float(v["line_limit_at_bound"]) == 0
    assert float(v["line_limit_at_estimate"]) == float(v["batch_by_tpot"]) == 20
    # session 25: the line's batch, 9, stopped short (the limits with 9 sequences' experts
    # allow 16); the back-off searches up from it and keeps 10, the largest its own experts
    # allow (third_solve.py backoff_rows): 32 GPUs, was 9 and 36; the whole answer's p95 is
    # 12.23 s against 12.5
    assert float(v["batch_experts_candidate"]) == 9 and float(v["batch_per_replica_line"]) == 16
    assert float(v["batch_per_replica"]) == float(v["batch_experts_read"]) == 10
    assert float(v["gpus"]) == 32 and float(v["slo_met"]) == 1


def test_every_option_serves_at_most_the_batch_whose_experts_it_reads() -> None:
    """On every feasible option of the case: the batch per replica is at most the batch the
    experts are read at and at most every limit solved there; the third solve's batch lies
    between the first estimate and the largest batch at this load."""
    for o in _size().workloads[0].options:
        v = {k: float(x) for k, x in o.values.items() if isinstance(x, (int, float))}
        if not o.feasible:
            continue
        assert v["batch_served"] <= v["batch_per_replica"] <= max(
            v["batch_experts_read"], v["batch_per_replica_first"]), o.id
        assert v["batch_experts_estimate"] <= v["batch_experts_read"] \
            <= v["batch_experts_bound"], o.id
        # never below the second solve's batch where the first estimate is a sequence or
        # more (third_solve.py's docstring: by construction)
        if v["batch_per_replica_first"] >= 1:
            assert v["batch_per_replica"] >= min(v["batch_experts_estimate"],
                                                 v["line_limit_at_estimate"]), o.id


def test_libreoffice_recalculates_the_third_solve(tmp_path: Path) -> None:
    """The Kimi-K2 workbook: every formula cell, the bisection rows included, equals the
    engine's after LibreOffice recalculates it (no circular reference)."""
    from support.libreoffice import read_values, recalculate
    from test_workbook import expected_values, formula_cells, same

    from llmsizer.documents.workbook import write_workbook

    result = _size()
    book = tmp_path / "kimi.xlsx"
    write_workbook(result, book)
    lo = read_values(recalculate([book], tmp_path / "recalc", timeout=300)[book])
    engine_values = expected_values(result, read_values(book))
    problems, checked, names = [], 0, set()
    for sheet, ref, _ in formula_cells(book):
        if (sheet, ref) not in engine_values:
            continue
        expected, name = engine_values[(sheet, ref)]
        got = lo.get(sheet, {}).get(ref)
        checked += 1
        names.add(name)
        if got is None or not same(expected, got, name, rel=1e-9):
            problems.append(f"{sheet}!{ref} ({name}): LibreOffice {got!r}, engine {expected!r}")
    assert checked > 500 and not problems, problems[:20]
    assert {"batch_experts_try_10", "line_limit_slope", "batch_by_ttft_second"} <= names
