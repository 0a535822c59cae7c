"""The production debugger's figures (sizing/debugger.py) are edges the engine itself agrees
with: re-evaluating the calculation list at the stated context or batch puts the option just
inside, and one step further just outside. Acme's example account (inputs/example.yaml)."""

from __future__ import annotations

from pathlib import Path

from llmsizer.inputs.loader import load
from llmsizer.model.calculations import program
from llmsizer.model.expr import Value
from llmsizer.sizing.debugger import figures, roofline
from llmsizer.sizing.engine import estimate, size

ROOT = Path(__file__).resolve().parents[1]


def _env(result, w, **override: float) -> dict[str, Value]:  # type: ignore[no-untyped-def]
    o = w.best
    env: dict[str, Value] = {**result.account_inputs, **w.inputs, **o.values, **override}
    program()(env, result.tables)
    return env


def test_oom_context_and_ttft_limit_are_the_engines_edges() -> None:
    result = size(load(ROOT / "inputs" / "example.yaml"))
    for w, d in zip(result.workloads, figures(result), strict=True):
        batch = d.planned_batch
        assert d.oom_context_tokens > d.planned_context_tokens  # the plan fits
        inside = _env(result, w, max_context_tokens=d.oom_context_tokens,
                      max_batch_per_replica=batch)
        outside = _env(result, w, max_context_tokens=d.oom_context_tokens * 1.01,
                       max_batch_per_replica=batch)
        assert float(inside["max_sequences_by_memory"]) >= batch
        assert float(outside["max_sequences_by_memory"]) < batch
        # the TTFT limit: at that many sequences per replica the first token still meets the
        # stated target (2 s and 3 s in the file); one more sequence per replica does not
        per = d.ttft_limit_users / float(w.best.values["replicas"])
        # users = the batch: the replica then runs that many sequences (batch_served is
        # the users present, at most the batch per replica)
        ok = _env(result, w, target_ttft_s=0, target_tokens_per_s_per_user=0,
                  target_response_time_s=0, max_batch_per_replica=per, users=per)
        late = _env(result, w, target_ttft_s=0, target_tokens_per_s_per_user=0,
                    target_response_time_s=0, max_batch_per_replica=per + 1, users=per + 1)
        assert d.ttft_target_stated
        assert float(ok["ttft_ms"]) <= d.ttft_target_s * 1000
        if d.ttft_limit_users < d.memory_limit_users:
            assert d.ttft_target_s * 1000 < float(late["ttft_ms"])
        assert 1 <= d.low_utilisation_batch < batch


def test_roofline_of_llama_70b_decode_at_batch_1_is_about_2_flop_per_byte() -> None:
    """Decode at batch 1 reads every weight once for 2 FLOPs per parameter: with FP8 (1 byte
    a weight) the intensity is about 2 FLOP/B, far below H200's ridge (1,979 dense FP8
    TFLOP/s / 4.8 TB/s = 412 FLOP/B, NVIDIA's H200 datasheet); it rises with the batch."""
    env: dict[str, Value] = {}
    estimate(model_id="llama-3.1-70b", gpu="h200-sxm", tp=1, replicas=1,
             weight_precision="fp8", kv_precision="fp8", prompt_tokens=1024,
             output_tokens=128, concurrency=1, with_env=env)
    r1 = roofline(env)
    assert 1.9 < r1.intensity_flop_per_byte < 2.1
    assert round(r1.ridge_flop_per_byte) == 412
    assert r1.achieved_tflops < r1.bandwidth_tb_s * r1.intensity_flop_per_byte
    env64: dict[str, Value] = {}
    estimate(model_id="llama-3.1-70b", gpu="h200-sxm", tp=1, replicas=1,
             weight_precision="fp8", kv_precision="fp8", prompt_tokens=1024,
             output_tokens=128, concurrency=64, with_env=env64)
    assert roofline(env64).intensity_flop_per_byte > 30 * r1.intensity_flop_per_byte
    assert max(y for _, y in r1.roof) == r1.peak_tflops == 1979.0
