"""Speculative decoding and MTP (issue 23, item 2): the step costs the target's verification of
1 + k tokens plus k draft forwards and yields the mean acceptance length. Figures pinned from
TensorRT-LLM tech blog 1 ("Pushing Latency Boundaries: Optimizing DeepSeek-R1 Performance on
NVIDIA B200 GPUs", table "Autoregressive MTP Layers": batch 1, 8x B200, TP8 EP2, FP4, ISL 1K /
OSL 2K: 111 tok/s without MTP, speed-up 1.78 with MTP 1 at acceptance 1.92, 2.28 with MTP 3 at
2.82) and from tests/data/measured_blackwell_moe.csv."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import DATA
from pydantic import ValidationError

from llmsizer.base.errors import InputError
from llmsizer.inputs.loader import load_from_text
from llmsizer.inputs.schema import Requirements
from llmsizer.inputs.schema_workload import Speculative
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
    evaluate_choice,
    workload_inputs,
)
from llmsizer.sizing.fidelity import evaluate_file, quantile

CAT = load_catalog()


def _env(spec: dict[str, Any] | None, gpu: str = "b200") -> dict[str, Any]:
    w: dict[str, Any] = {"name": "w", "model": "deepseek-r1", "concurrent_users": 1,
                         "prompt_tokens": 1024, "output_tokens": 2048,
                         "targets": {"system_tokens_per_s": 1.0}}
    if spec:
        w["speculative"] = spec
    req = Requirements.model_validate({"schema_version": 1, "account": {"name": "t"},
                                       "workloads": [w]})
    base = {**account_inputs(req, CAT),
            **workload_inputs(req.workloads[0], CAT.models["deepseek-r1"])}
    choice = Choice(gpu, CAT.gpus[gpu].default_platform, "fp4", "fp8", 8, ep=2)
    return evaluate_choice(base, choice, build_tables(req, CAT), req, CAT,
                           {"max_batch_per_replica": 1.0})


def test_published_acceptance_is_the_mtp_default() -> None:
    r1 = CAT.models["deepseek-r1"]
    assert r1.mtp_acceptance_length(1) == 1.92 and r1.mtp_acceptance_length(3) == 2.82
    assert r1.mtp_acceptance_length(6) is None  # not published: the user states it
    assert CAT.models["deepseek-v3"].mtp_acceptance_length(1) == 1.875  # 85-90 % (V3 report)
    assert "Pushing Latency Boundaries" in r1.mtp_acceptance_source


def test_batch1_speedup_matches_the_published_table() -> None:
    off = _env(None)
    for drafts, published in ((1, 1.78), (3, 2.28)):
        on = _env({"method": "mtp", "draft_tokens": drafts})
        speedup = on["tokens_per_s_per_user"] / off["tokens_per_s_per_user"]
        # 1.67 and 1.95 today (1.86 and 2.56 before the drafts' fixed cost): the table's
        # 0.60 ms a draft, in ms, on a batch-1 step the model puts at 6.4 ms, not the
        # table's 9.01 ms (the model serves the blog's later kernels), so the ratio is lower
        assert speedup == pytest.approx(published, rel=0.15), (drafts, speedup)
        assert speedup < CAT.models["deepseek-r1"].mtp_acceptance[drafts - 1]


# TensorRT-LLM tech blog 1, "Autoregressive MTP Layers": (drafts, acceptance, tok/s per user),
# 8x B200, batch 1
BLOG_MTP_TABLE = ((0, 1.00, 111), (1, 1.92, 198), (2, 2.58, 250), (3, 2.82, 253),
                  (4, 2.99, 245), (5, 3.01, 239))


def test_draft_forward_cost_is_the_blogs_step_times() -> None:
    """A step's time is acceptance / speed: 9.01 ms without MTP to 12.59 ms with 5 drafts. The
    least-squares slope, 0.751 ms a draft, less the draft's one layer (9.01 / 61 ms), is the
    fixed cost of a draft forward (the shared head, sampling, launches): 0.60 ms."""
    steps = [(k, 1000 * tau / tps) for k, tau, tps in BLOG_MTP_TABLE]
    mk = sum(k for k, _ in steps) / len(steps)
    mt = sum(t for _, t in steps) / len(steps)
    slope = (sum((k - mk) * (t - mt) for k, t in steps)
             / sum((k - mk) ** 2 for k, _ in steps))
    assert slope == pytest.approx(0.751, abs=1e-3)
    assert CAT.constant("draft_forward_ms") == pytest.approx(slope - steps[0][1] / 61, abs=0.005)


def test_draft_forward_cost_in_the_step() -> None:
    """TPOT = (step x (1 + k x draft share) + k x draft forward) / tau: the fixed part rides
    in the step's a, divided by the factor that multiplies it back."""
    on = _env({"method": "mtp", "draft_tokens": 3})
    assert on["spec_draft_fixed_ms"] * (1 + 3 / 61) == pytest.approx(3 * 0.60)
    off = _env(None)
    assert off["spec_draft_fixed_ms"] == 0
    # a draft model's stated share already holds its fixed work; n-gram lookup has none
    stated = _env({"method": "draft_model", "draft_tokens": 3, "acceptance_length": 2.0,
                   "draft_cost": 0.1})
    assert stated["spec_draft_fixed_ms"] == 0
    # measured on NVIDIA's stack; AMD's has no published figure (ATOM MI355X rows at 8 users
    # went +5 to +12 points with it: docs/calibration-history.md, "Fifth pass")
    assert _env({"method": "mtp", "draft_tokens": 3}, "mi355x")["spec_draft_fixed_ms"] == 0


def test_step_costs_the_drafts_and_yields_the_accepted_tokens() -> None:
    on = _env({"method": "mtp", "draft_tokens": 3})
    # one MTP layer of 61 per drafted token; 2.82 tokens a step
    assert on["spec_tpot_factor"] == pytest.approx((1 + 3 / 61) / 2.82)
    assert on["tpot_ms"] == pytest.approx(
        (on["step_fixed_ms"] + on["step_ms_per_seq"] * on["batch_served"])
        * on["spec_tpot_factor"])
    # 4 tokens per step read about 4x the experts one token does (8 of 256)
    assert on["experts_read_fraction"] == pytest.approx(1 - (1 - 8 / 256) ** 4)
    stated = _env({"method": "draft_model", "draft_tokens": 3, "acceptance_length": 2.0,
                   "draft_cost": 0.1})
    assert stated["spec_tpot_factor"] == pytest.approx(1.3 / 2.0)


def test_schema_refuses_impossible_speculation() -> None:
    with pytest.raises(ValidationError, match="cannot exceed draft_tokens"):
        Speculative(method="mtp", draft_tokens=1, acceptance_length=2.5)
    with pytest.raises(ValidationError, match="needs draft_cost"):
        Speculative(method="draft_model", draft_tokens=4, acceptance_length=2.0)
    with pytest.raises(ValidationError, match="needs acceptance_length"):
        Speculative(method="eagle", draft_tokens=3)


def test_mtp_without_a_published_figure_is_one_line(tmp_path: Path) -> None:
    text = ("schema_version: 1\naccount: {name: t}\nworkloads:\n  - name: w\n"
            "    model: llama-3.1-70b\n    concurrent_users: 10\n    prompt_tokens: 500\n"
            "    output_tokens: 300\n    targets: {tokens_per_s_per_user: 20}\n"
            "    speculative: {method: mtp, draft_tokens: 2}\n")
    with pytest.raises(InputError) as got:
        load_from_text(text, str(tmp_path / "a.yaml"))
    msg = str(got.value)
    assert "no published MTP acceptance length" in msg and "acceptance_length" in msg
    assert "\n" not in msg.strip()


def test_fidelity_reads_the_mtp_rows() -> None:
    results, skipped, _ = evaluate_file(DATA / "measured_blackwell_moe.csv")
    mtp = [r for r in results if r.point.speculative]
    # aggregated serving; the 53 disaggregated MTP rows are the disaggregated group's
    # (median 31.8 %: tests/test_fidelity_disagg.py, docs/calibration.md)
    tpot = [abs(r.error) for r in mtp if r.point.metric == "tpot_ms" and not r.point.disaggregated]
    assert len(tpot) == 62
    assert len([r for r in mtp if r.point.metric == "tpot_ms" and r.point.disaggregated]) == 53
    # measured: median |error| 19.1 % (bias -16.5 %: the InferenceX random-token runs accept
    # fewer drafts than the published 2.82); the target is 15 %
    assert quantile(tpot, 0.5) < 0.20
    assert not any("speculative" in r for s in skipped for r in s.reasons
                   if "published" not in r)
