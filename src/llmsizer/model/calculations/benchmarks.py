"""What measured benchmarks need beyond the sizing: the figures a benchmark reports that
``llmsizer fidelity`` reproduces (``FIGURES``, docs/calibration.md), and what
llmsizer.inputs.benchfiles derives from a benchmark result file (``BENCH_*``,
docs/measured.md). None of them is printed into the workbook.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..expr import IF, MAX, MIN, POWER, Expr, gt, ref
from .core import r
from .load import SLOT_FIXED_MS, SLOT_MS_PER_SEQ
from .queueing import (
    adp_balance_wait_ms,
    burst_wait_ms,
    recv_poll_wait_ms,
)


# ---- benchmark reproduction (``llmsizer fidelity``, docs/calibration.md) -----------------
# What a measured benchmark reports that the sizing itself does not need. Each combines the
# list's calculations with a count the benchmark states (a ``*_given`` name): the replicas
# sharing the load, the closed-loop users or the offered request rate per replica.
@dataclass(frozen=True)
class Figure:
    name: str
    unit: str
    expr: Expr
    note: str


# a prompt waiting for its prefill holds no batch slot yet: the cycle leaves its wait out
_cycle = r("request_cycle_ms")
_occupied = MAX(1, r("batch_per_replica"))
# Little's law: a request's cycle = c0 + K x B (ttft_ms + (output - 1) x tpot_ms, K = steps x b
# less the prefill share beyond one prefill), the slot time the sizing solves (queueing.py).
_per_seq = SLOT_MS_PER_SEQ
_c0 = SLOT_FIXED_MS
_rate_ms = r("request_rate_given") / 1000

FIGURES: tuple[Figure, ...] = (
    Figure("per_replica_given", "x", r("group_given") / r("replicas_given"),
           "A load the benchmark states for the whole group (users, requests/s), shared evenly "
           "by its replicas."),
    Figure("single_stream_itl_ms", "ms", 1000 / r("bandwidth_ceiling_tokens_per_s"),
           "Time per token of one stream alone (batch 1)."),
    Figure("closed_loop_output_tokens_per_s", "tok/s",
           ref("replicas_given") * MIN(r("concurrency_given"), _occupied) * r("output_tokens")
           * 1000 / _cycle,
           "Fixed concurrency C per replica (closed loop): MIN(C, batch) requests in flight, "
           "each producing its output once per request cycle."),
    Figure("closed_loop_ttft_ms", "ms",
           (1 - r("first_wave_share_given"))
           * (r("ttft_ms")
              + adp_balance_wait_ms(MIN(r("concurrency_given"), _occupied), _cycle,
                                    r("tpot_ms"), r("adp"), r("adp_balance_timeout_given"))
              + recv_poll_wait_ms(r("recv_interval_given"), r("tpot_ms")))
           + r("first_wave_share_given")
           * (burst_wait_ms(r("concurrency_given"), _occupied, _cycle, r("prefill_ms"))
              + r("ttft_overhead_ms")),
           "TTFT at a fixed concurrency, its closed-loop wait included (the calculation list's "
           "closed_loop_wait_ms, as the sizing: evaluate with fixed_users_per_replica = C), "
           "+ the attention-DP balance hold and the scheduler's request polling where the "
           "benchmark's harness turns them on; the harness's first wave (C prompts sent at "
           "once, share C / prompts sent) is a burst: the mean of burst_ttft_ms over C "
           "(queueing.py)."),
    Figure("burst_ttft_ms", "ms",
           burst_wait_ms(r("requests_given"), _occupied, _cycle, r("prefill_ms"))
           + r("ttft_overhead_ms"),
           "N requests at once (request rate inf): the mean of floor(i / B) request cycles "
           "for a slot plus (i mod B) + 1 prefills, prompts prefilled first (queueing.py)."),
    Figure("rate_batch_per_replica", "sequences",
           IF(gt(1 - _rate_ms * _per_seq, 0),
              MIN(r("max_batch_per_replica"),
                  _rate_ms * _c0 / (1 - _rate_ms * _per_seq)),
              r("max_batch_per_replica")),
           "Open loop at rate L per replica: B = L x (ttft_ms + (output - 1) x tpot_ms), both "
           "linear in B, solved for B (Little's law, closed form); no steady state "
           "(saturated) = the engine's cap."),
    Figure("decode_only_tpot_ms", "ms",
           r("tpot_ms") - r("prefill_ms_per_seq_step") * _occupied * r("spec_tpot_factor"),
           "TPOT when prompts are not interleaved with decode (a burst whose prefill ran "
           "first): t(B) without the amortised prefill share."),
    Figure("served_rate_per_s", "requests/s",
           MIN(r("request_rate_given"), r("replica_output_tokens_per_s") / r("output_tokens")),
           "Requests/s a replica serves: the offered rate, or its saturated capacity when the "
           "rate exceeds it (evaluate at the saturated batch)."),
    # Under Poisson arrivals the batch itself fluctuates: with (nearly) fixed request times
    # the number in service is Poisson (M/G/inf), and a request's own TPOT averages the batch
    # over its life, whose variance is 2/3 x the mean batch (the covariance of the count is
    # triangular over one request time). Its p99 request therefore sees the step at
    # B + 2.326 x sqrt(2/3 x B). The measured p99/mean ratio (fixed-concurrency runs, where
    # the batch is fixed) multiplies on top: the step's own jitter.
    Figure("tpot_p99_from_mean_ms", "ms",
           (r("tpot_ms") + 2.326 * POWER(2 / 3 * MAX(0, r("batch_served")), 0.5)
            * r("step_ms_per_seq") * r("spec_tpot_factor")) * r("tpot_p99_over_mean_given"),
           "p99 over requests of the time per output token under Poisson arrivals: the step "
           "at the batch + 2.326 x sqrt(2/3 x batch) (the batch a request sees over its life "
           "varies: M/G/inf), x the measured p99/mean ratio of a fixed batch; MLPerf Server / "
           "Interactive rows hold it to the scenario's limit."),
    Figure("rate_output_tokens_per_s", "tok/s",
           ref("replicas_given") * r("served_rate_given") * r("output_tokens"),
           "Steady state at a request rate: requests served x output."),
    Figure("finite_run_output_tokens_per_s", "tok/s",
           ref("replicas_given") * r("requests_given") * r("output_tokens") * 1000
           / (r("requests_given") * 1000 / r("served_rate_given") + r("request_cycle_ms_given")),
           "A run of N requests per replica: N x output over the time the last one arrives "
           "(N / served rate) plus its own request cycle."),
    Figure("total_tokens_per_s", "tok/s",
           r("output_tokens_per_s_given") * (r("prompt_tokens") + r("output_tokens"))
           / r("output_tokens"),
           "Input + output tokens/s from output tokens/s (requests carry prompt + output)."),
)
FIGURE_EXPRS: dict[str, Expr] = {f.name: f.expr for f in FIGURES}


# ---- benchmark result files (``measured: {file: ...}``, docs/measured.md) -----------------
# What llmsizer.inputs.benchfiles derives from a benchmark's recorded figures. A ``*_given`` name is a
# figure read from the file (or the measured block); each expression is evaluated once per
# benchmark point, never printed into the workbook (the chosen point's throughput per replica
# is the workload input ``measured_tokens_per_s_per_replica``).
BENCH_TO_MS = ref("value_given") * ref("ms_per_unit_given")
BENCH_MEAN = ref("total_given") / ref("count_given")
BENCH_REPLICAS = ref("gpu_count_given") / ref("gpus_per_replica_given")
BENCH_TOKENS_PER_S_PER_REPLICA = ref("output_tokens_per_s_given") / ref("replicas_given")
BENCH_TOKENS_PER_S_PER_USER = 1000 / ref("tpot_ms_given")
# How far a point is from the workload's targets: the larger of required / achieved speed
# and achieved / allowed TTFT; a point meets the targets when this is at most 1.
BENCH_SHORTFALL = MAX(
    IF(gt(ref("required_tokens_per_s_per_user"), 0),
       ref("required_tokens_per_s_per_user") / ref("tokens_per_s_per_user_given"), 0),
    IF(gt(ref("target_ttft_ms"), 0), ref("ttft_ms_given") / ref("target_ttft_ms"), 0))
BENCH_GROUP_GPUS = ref("tp_given") * ref("pp_given")
BENCH_LENGTH_RATIO = ref("bench_tokens_given") / ref("workload_tokens_given")
