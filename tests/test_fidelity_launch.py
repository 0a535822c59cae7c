"""Engine settings the measured rows imply but do not state (issue 23; docs/calibration-history.md,
"The tail, investigated"), each pinned on its real rows of tests/data/measured_blackwell_moe.csv:

- gpt-oss on Hopper in the TensorRT-LLM 1.2 perf overview: labelled FP8, run with the Triton
  MoE backend, which serves the checkpoint's MXFP4 experts with BF16 activations
  (TensorRT-LLM examples/models/core/gpt_oss/README.md, "MoE Support Matrix"); KV "auto" is
  the checkpoint's BF16.
- TensorRT-LLM keeps a sliding-window layer's whole context in its KV cache (no
  max_attention_window in the table's options) while its attention kernel reads only the window
  (tensorrt_llm/_torch/models/modeling_gpt_oss.py passes ``attention_window_size``).
- InferenceX's launch scripts (SemiAnalysisAI/InferenceX ``benchmarks/single_node/dsr1_*.sh``):
  MTP drafts per step and SGLang's ``--mem-fraction-static``; their MTP runs send random token
  ids through the chat template (``--use-chat-template``), which accept fewer drafts than the
  published figure (``mtp_random_prompt_acceptance_share``, benchmarks/mtp_cv.py); SGLang's
  ``--chunked-prefill-size``, above every prompt, with no decode mixed into a prefill.
"""

from __future__ import annotations

import re
from statistics import median

import pytest
from helpers import DATA

from llmsizer.inputs.benchdata import BenchPoint, read_points
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.evaluate import evaluate_choice
from llmsizer.sizing.fidelity import Case, _profile, _speculative, prepare, score, tables_for

CAT = load_catalog()
POINTS, _ = read_points(DATA / "measured_blackwell_moe.csv", CAT)
CASES, _ = prepare(POINTS, CAT)


def _point(row: int) -> BenchPoint:
    return next(p for p in POINTS if p.row == row)


def _case(row: int, metric: str = "output_tokens_per_s") -> Case:
    return next(c for c in CASES if c.point.row == row and c.point.metric == metric)


def test_gpt_oss_on_hopper_reads_as_mxfp4_with_bf16_kv() -> None:
    """The 1.2 table's gpt-oss H200 rows (9: 120b DEP2, 20b TP1) say "MoE backend TRITON" and
    "kv auto": MXFP4 experts computed in BF16 and a BF16 cache. Read as the FP8 label says
    they were +39 % to +162 % (median |error| 63 %); read as run, -7 % to +70 % (median
    |error| 9.2 %; the 1k/1k rows highest). Blackwell rows of the same table stay FP4 weights
    with an FP8 cache."""
    hopper = [c for c in CASES if c.point.gpu == "h200-sxm" and "gpt-oss" in str(c.point.model)]
    assert len(hopper) == 9
    assert {(c.point.weight_precision, c.point.kv_precision) for c in hopper} == {
        ("mxfp4", "bf16")}
    assert (_point(128).weight_precision, _point(126).weight_precision) == ("mxfp4", "fp4")
    errors = [r.error for r in score(hopper, CAT)]
    assert median(abs(e) for e in errors) == pytest.approx(0.092, abs=0.01)
    assert max(errors) < 0.75


def test_tensorrt_llm_keeps_the_whole_context_of_window_layers() -> None:
    """trtllm-bench's profile keeps a window layer's whole context (``window_kv_cut`` 0):
    gpt-oss-20b at 1k/32k on B200 (row 146, 15,799 tok/s measured) fits 205 sequences
    where a window-only cache would fit 411, and is predicted at -3 % (the previous reading,
    window-only cache but every layer read in full, gave -33 %)."""
    case = _case(146)
    assert _profile(case, CAT)["window_kv_cut"] == 0.0
    result = score([case], CAT)[0]
    assert result.batch == pytest.approx(205, abs=3)
    assert result.error == pytest.approx(-0.031, abs=0.02)


def test_inferencex_mtp_drafts_from_the_launch_scripts() -> None:
    """TensorRT-LLM: num_nextn_predict_layers 1 with attention data-parallel (row 293, B200
    DEP8 MTP), 3 without (row 284, TP8 EP8 MTP); SGLang keeps the documented default 3 (row 250,
    MI355X, as its script sets; row 608, B200, whose script sets 2: not adopted, see
    fidelity_inferencex.py)."""
    drafts = {}
    for row in (608, 293, 284, 250):
        spec = _speculative(_point(row), CAT)
        assert spec is not None and not isinstance(spec, str)
        drafts[row] = spec.draft_tokens
    assert drafts == {608: 3, 293: 1, 284: 3, 250: 3}


def test_inferencex_sglang_memory_fraction_from_the_launch_script() -> None:
    """dsr1_fp8_b200.sh runs DeepSeek-R1 FP8 on four B200 (TP4, 8k/1k) with
    --mem-fraction-static 0.95, eight B200 with 0.82; dsr1_fp4_b200.sh 0.85, each a share of
    the memory the driver reports (x driver_memory_ratio 1.069; tests/test_kv_memory_s24.py).
    At the product's 0.9 of the marketed 180 GB the FP8 weights leave four B200 no KV room:
    row 620 (901 tok/s at 32 users) was predicted at 114 tok/s (-87 %); 0.95 of the marketed
    GB held 7 of the 32 sequences (-45 %); 0.95 of the driver's, 48: all 32 run (+18 %)."""
    driver = CAT.constant("driver_memory_ratio")
    assert _profile(_case(620), CAT)["gpu_memory_utilization"] == pytest.approx(0.95 * driver)
    assert _profile(_case(605), CAT)["gpu_memory_utilization"] == pytest.approx(0.82 * driver)
    assert _profile(_case(665), CAT)["gpu_memory_utilization"] == pytest.approx(0.85 * driver)
    assert "gpu_memory_utilization" not in _profile(_case(386), CAT)  # MI325X: not read
    result = score([_case(620)], CAT)[0]
    assert result.batch == 32
    assert result.error == pytest.approx(0.18, abs=0.03)


def test_inferencex_mtp_acceptance_on_random_chat_prompts() -> None:
    """InferenceX MTP rows take 0.75 of DeepSeek-R1's published extra tokens per step (TensorRT-LLM
    tech blog 1: 2.82 with 3 drafts -> 1 + 0.75 x 1.82 = 2.365), a share chosen leaving each
    source out (benchmarks/mtp_cv.py: every fold picks 0.75). The TensorRT-LLM blog's own
    batch-1 rows (235, B200; 237, H200) ran the published content and keep 2.82. On the 62
    aggregated InferenceX MTP TPOT rows the median |error| goes from 14.2 % (bias -13.5 %) at
    the published figure to 10.6 %: ATOM's MI355X FP8 1k/8k run at 8 users (row 789, 7.67 ms
    measured) from -11.2 % to +5.8 %, at 256 users (row 798) from +3.1 % to +22.5 %; SGLang on
    H200 at 64 users (row 429, 30.3 ms) stays the tail, -47.9 % to -39.0 % (-50.0 and -41.6 %
    before NVIDIA GPUs' MTP drafts paid their fixed forward cost, ``draft_forward_ms``)."""
    spec = _speculative(_point(795), CAT)
    assert spec is not None and not isinstance(spec, str)
    assert spec.acceptance_length == pytest.approx(2.365)
    blog = _speculative(_point(235), CAT)
    assert blog is not None and not isinstance(blog, str) and blog.acceptance_length is None
    mtp = [p for p in POINTS if p.speculative and not p.disaggregated]
    published = CAT.model_copy(update={"constants": {
        **CAT.constants, "mtp_random_prompt_acceptance_share":
            CAT.constants["mtp_random_prompt_acceptance_share"].model_copy(update={"value": 1.0})}})
    medians, rows = [], []
    for catalog in (published, CAT):
        cases, _ = prepare(mtp, catalog)
        tpot = [r for r in score(cases, catalog) if r.point.metric == "tpot_ms"]
        assert len(tpot) == 62
        medians.append(median(abs(r.error) for r in tpot))
        rows.append([next(r.error for r in tpot if r.point.row == row) for row in (789, 798, 429)])
    assert medians == pytest.approx([0.142, 0.106], abs=0.005)
    assert rows == [pytest.approx([-0.112, 0.031, -0.479], abs=0.01),
                    pytest.approx([0.058, 0.225, -0.390], abs=0.01)]


def test_inferencex_sglang_prefill_chunk_from_the_launch_scripts() -> None:
    """SGLang prefills a waiting prompt in a forward of its own, decode paused (no
    ``--enable-mixed-chunk`` in any InferenceX script), up to ``--chunked-prefill-size``
    tokens, which the DeepSeek-R1 scripts set to 8,192-196,608: never below InferenceX's
    longest prompt (8k). Rows: 412 MI325X FP8 MTP 8k/1k at 32 users (dsr1_fp8_mi325x_mtp.sh,
    131,072), 457 H200 (dsr1_fp8_h200_mtp.sh, 32,768), 622 four B200 FP8 (dsr1_fp8_b200.sh,
    TP4 branch, 8,192), 682 B200 FP4 (dsr1_fp4_b200.sh, 16,384), 280 MI355X FP4 8k/1k at 64
    users (dsr1_fp4_mi355x_mtp.sh, above CONC 32: 32,768) and 277 at 32 (196,608). A 7,373-token
    prompt then waits about half a step before its prefill (0.5 + 7,373 / 131,072 steps), not
    the 18 decode steps the product's 418-token chunks would spread it over; ATOM, TensorRT-LLM
    and non-InferenceX rows keep their own chunk."""
    chunks = {row: _profile(_case(row, "ttft_ms"), CAT).get("prefill_chunk_tokens")
              for row in (412, 457, 622, 682, 280, 277)}
    assert chunks == {412: 131072, 457: 32768, 622: 8192, 682: 16384, 280: 32768, 277: 196608}
    atom = next(c for c in CASES if "framework=atom" in " ".join(c.point.raw.values()))
    assert _profile(atom, CAT)["prefill_chunk_tokens"] == CAT.constant("atom_max_num_batched_tokens")
    case = _case(412, "ttft_ms")
    env = evaluate_choice(case.base, case.choice, tables_for(CAT), case.req, CAT,
                          _profile(case, CAT))
    assert env["ttft_queue_steps"] == pytest.approx(0.5 + 7373 / 131072)


def test_inferencex_trtllm_token_budget_from_the_launch_scripts() -> None:
    """InferenceX's TensorRT-LLM scripts (dsr1_fp{4,8}_b200_trt.sh, dsr1_fp8_h200_trt.sh) pass
    ``--max_num_tokens`` = round_up_64(CONC + ISL + 127), at least 8,192 from commit b0c4ed21b
    (2026-01-22), with chunked prefill off: a whole prompt rides one iteration. Rows (B200 FP8,
    lengths U[0.8 L, L]): 292, 922-token mean (L 1,024) at 64 users on 2025-12-15:
    64 + 1,024 + 127 = 1,215 -> 1,216; 283, the same lengths at 4 users on 2026-05-18: 8,192
    (the floor); 313, 7,373-token mean (L 8,192) at 4 users: 8,323 -> 8,384."""
    chunks = {row: _profile(_case(row, "ttft_ms"), CAT).get("prefill_chunk_tokens")
              for row in (292, 283, 313)}
    assert chunks == {292: 1216, 283: 8192, 313: 8384}


def test_no_inferencex_sglang_row_ran_the_prefill_delayer() -> None:
    """SGLang's prefill delayer (``--enable-prefill-delayer``, off by default; it requires
    attention DP) holds a prefill until every attention-DP rank has one, at most 30 passes.
    InferenceX passes it only in the attention-DP lane of dsr1_fp4_b200.sh (since 94d496862,
    2026-06-23) and dsr1_fp4_b200_mtp.sh (539735000, 2026-07-02). All 105 SGLang
    fixed-concurrency TTFT rows here run without attention DP, the latest dated 2026-06-11,
    so the reader models no delayer (docs/calibration-history.md, "Seventh session: SGLang's prefill
    delayer"). A row from that lane must get the hold before it is added here."""
    sglang = [p for p in POINTS if "framework=sglang" in p.raw.get("notes", "")
              and p.metric == "ttft_ms" and p.regime == "concurrency"]
    dates = sorted(m.group(1) for p in sglang
                   if (m := re.search(r"date=(\d{4}-\d{2}-\d{2})", p.raw["notes"])))
    assert len(sglang) == len(dates) == 105
    assert all(p.adp == 1 for p in sglang)
    assert dates[-1] == "2026-06-11" < "2026-06-23"
