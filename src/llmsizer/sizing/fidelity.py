"""``llmsizer fidelity``: predict measured benchmark rows and report the error.

Every prediction goes through the engine's own calculation list
(:func:`llmsizer.sizing.evaluate.evaluate_choice`) and the benchmark figures named in
:mod:`llmsizer.model.calculations` (``FIGURES``); this module only decides which inputs
describe a benchmark row and does no sizing arithmetic of its own.

How a row becomes inputs (docs/calibration.md explains why):

- **Engine profile** from the row's source/scenario text. TensorRT-LLM sizes its KV pool
  as a fraction of the memory the driver reports (``driver_memory_ratio`` x marketed GB)
  less the weights and a runtime reserve (``trtllm_runtime_reserve_gb``), with batch cap
  ``trtllm_max_batch``; the fraction is 0.95 under trtllm-bench
  (``trtllm_kv_cache_fraction``) and the library default 0.9 behind a server (Triton,
  NIM: ``trtllm_serving_kv_cache_fraction``). An offline run's request holds a fitted share
  of its output in KV (``trtllm_kv_output_occupancy``, ``trtllm_pytorch_kv_output_occupancy``),
  and a sliding-window layer's cache the whole context (``window_kv_cut`` 0).
  InferenceX rows take the server flags of their launch scripts (:mod:`.fidelity_inferencex`);
  SGLang's stated memory fraction is of the driver's memory too (x ``driver_memory_ratio``).
  llama.cpp is a separate engine with its own bandwidth efficiency and per-token overhead
  (``llamacpp_*``). Other engines take the product's defaults (vLLM-like).
- **Regime** (from :mod:`llmsizer.inputs.benchdata`): ``offline`` = batch limited by KV memory and
  the engine cap, no latency targets; ``concurrency`` = C users per replica in a closed loop;
  ``rate`` = an offered request rate, batch by Little's law, or a burst when the rate is at
  or above capacity ("QPS=INF": every request at once); ``batch1`` = one stream.
- **Shape** from :mod:`llmsizer.inputs.benchdata`: the option gets the row's TP, PP, EP and
  attention-DP degree (``Choice.pp/ep/adp``), the case its replica count; a disaggregated
  row (``DISAGG P:.. D:..``) its decode pool, the prefill pool evaluated beside it
  (:mod:`.fidelity_disagg`). A row the model does not represent (tail TTFT, a label the
  catalog lacks, a pool's tensor parallelism across nodes) is skipped with every reason
  that applies, never silently.
- The error of a row is ``predicted / measured - 1``; the summary gives per (metric, regime)
  the count, median and 90th percentile of its absolute value and the signed median.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from ..inputs.benchdata import BenchPoint, Skipped, read_points
from ..inputs.benchlabels import serving_features
from ..inputs.schema import Policy, Requirements
from ..inputs.schema_words import said
from ..inputs.schema_workload import Account, Speculative, Targets, Workload
from ..model.calculations import FIGURE_EXPRS, GROUP_OUTPUT_TOKENS_PER_S
from ..model.catalog import Catalog, LabelIndex, load_catalog
from ..model.expr import Value, evaluate
from .evaluate import Choice, Tables, account_inputs, build_tables, evaluate_choice, workload_inputs
from .fidelity_checks import contradicted_rows
from .fidelity_disagg import disagg_reasons, predict_disagg
from .fidelity_inferencex import (
    framework,
    mtp_acceptance,
    mtp_drafts,
    sglang_chunked_prefill_tokens,
    sglang_memory_utilization,
    trtllm_max_num_tokens,
)
from .fidelity_mlperf import Limits, dataset_lengths, limits_of, server_output_tokens_per_s
from .fidelity_stats import RowResult as RowResult
from .fidelity_stats import SummaryRow as SummaryRow
from .fidelity_stats import quantile as quantile
from .fidelity_stats import relative_error as relative_error
from .fidelity_stats import summarise as summarise

TRTLLM_BENCH = "trtllm-bench"  # TensorRT-LLM's benchmark tool (offline perf tables)
TRTLLM_SERVING = "trtllm-serving"  # TensorRT-LLM behind a server (Triton backend, NIM)
LLAMACPP = "llama.cpp"
DEFAULT = "default"
DATACENTER_ENGINES = frozenset({TRTLLM_BENCH, TRTLLM_SERVING})

# the metrics each regime can predict
_PREDICTABLE: dict[str, frozenset[str]] = {
    "offline": frozenset({"output_tokens_per_s", "total_tokens_per_s"}),
    "concurrency": frozenset({"output_tokens_per_s", "total_tokens_per_s", "itl_ms", "tpot_ms",
                              "ttft_ms", "tokens_per_s_per_user"}),
    "rate": frozenset({"output_tokens_per_s", "total_tokens_per_s", "itl_ms", "tpot_ms",
                       "ttft_ms"}),
    "batch1": frozenset({"tokens_per_s_per_user", "itl_ms", "tpot_ms"}),
}


@dataclass(frozen=True)
class Case:
    """A benchmark row turned into llmsizer inputs (everything but the constants)."""

    point: BenchPoint
    engine: str
    prompt_tokens: int
    output_tokens: int
    choice: Choice  # with the row's pp / ep / adp
    base: dict[str, Value]
    req: Requirements
    replicas: int = 1  # independent copies of ``choice`` the row's GPUs hold


def row_text(point: BenchPoint) -> str:
    """Every text column of a measured row, lower-cased: a table states its engine and release
    wherever its authors put it (``scenario``, ``notes``, the source), not in one column."""
    return " ".join((point.source, *point.raw.values())).lower()


def engine_of(point: BenchPoint) -> str:
    text = row_text(point)
    if "llama.cpp" in text:
        return LLAMACPP
    if "trtllm-bench" in text or "gptmanagerbenchmark" in text:
        return TRTLLM_BENCH
    # InferenceX's ``framework=trt`` is trtllm-serve (its scripts; a row may state no image)
    if any(word in text for word in ("tensorrt", "trt-llm", "trtllm", "nim ", "triton")) or (
            framework(text) == "trt"):
        return TRTLLM_SERVING
    return DEFAULT


def _lengths(point: BenchPoint, engine: str, catalog: Catalog) -> tuple[int, int] | str:
    raw_isl, raw_osl = point.raw.get("isl", "").strip(), point.raw.get("osl", "").strip()
    lengths = []
    for raw, value, what in ((raw_isl, point.isl, "prompt"), (raw_osl, point.osl, "output")):
        if raw.isdigit():
            lengths.append(max(1, value))
        elif raw.lower() == "dataset":  # MLPerf: the benchmark dataset's means
            return dataset_lengths(point.raw)
        elif engine == LLAMACPP:
            lengths.append(int(catalog.constant(f"llamacpp_unstated_{what}_tokens")))
        else:
            return f"{what} length not stated ({raw!r})"
    return lengths[0], lengths[1]


def _closest(names: list[str]) -> str:
    return f" (closest: {', '.join(names)})" if names else ""


def label_reasons(raw: Mapping[str, str], catalog: Catalog, labels: LabelIndex) -> list[str]:
    """Why a row's model or GPU label names nothing in the catalog (empty = both known)."""
    reasons = []
    model, gpu = raw.get("model", ""), raw.get("gpu", "")
    if labels.model(model) not in catalog.models:
        reasons.append(f"model {model!r} is not in the llmsizer catalog"
                       f"{_closest(labels.closest_models(model))}")
    if labels.gpu(gpu) not in catalog.gpus:
        reasons.append(f"GPU {gpu!r} is not in the llmsizer catalog"
                       f"{_closest(labels.closest_gpus(gpu))}")
    return reasons


def unmodelled_reasons(disaggregated: str | None, speculative: bool) -> list[str]:
    """Serving features the model does not represent."""
    reasons = []
    if disaggregated:
        reasons.append(f"disaggregated prefill/decode serving is not modelled ({disaggregated})")
    del speculative  # MTP rows are predicted with the model's published acceptance length
    return reasons


# Why a latency statistic other than the mean is not predicted (TPOT p90/p99 are: benchdata
# compares them through tpot_p90_over_mean / tpot_p99_over_mean).
_TAIL_REASONS = {
    "ttft_ms": "TTFT tails are queueing, not a fixed multiple of the mean (p99/mean 1.5-7.9 "
               "across InferenceX runs)",
    "itl_ms": "ITL tails are steps that carry a prefill chunk (p99/mean 1.1-7 across "
              "InferenceX runs)",
}


def _statistic_reason(point: BenchPoint) -> str | None:
    if point.statistic == "mean" or point.tail_value is not None:
        return None
    why = _TAIL_REASONS.get(point.metric, "only means (and p90/p99 TPOT) are predicted")
    return f"{point.statistic} {point.metric} is not predicted: {why}"


def interpret(point: BenchPoint, catalog: Catalog, labels: LabelIndex | None = None
              ) -> Case | Skipped:
    """The inputs that describe ``point``, or every reason it cannot be predicted."""
    reasons = label_reasons(point.raw, catalog, labels or LabelIndex(catalog))
    for prec in dict.fromkeys((point.weight_precision, point.kv_precision)):
        if prec not in catalog.precisions:
            reasons.append(f"precision {prec!r} is not in the llmsizer catalog")
    # disaggregated rows: predicted with both pools' layouts where the label states them
    reasons += (disagg_reasons(point, catalog) if point.disaggregated
                else unmodelled_reasons(None, point.speculative))
    engine = engine_of(point)
    if point.pp > 1 and (engine == LLAMACPP or "layer split" in point.raw.get("tp", "").lower()):
        reasons.append(f"pipeline (layer-split) parallelism over {point.pp} GPUs is not modelled")
    if point.metric not in _PREDICTABLE[point.regime]:
        reasons.append(f"metric {point.metric} is not predicted in the {point.regime} regime")
    stat = _statistic_reason(point)
    if stat:
        reasons.append(stat)
    if point.with_context:
        reasons.append("per-user throughput that includes context and queueing time "
                       "(trtllm-bench 'w/ ctx') is not the per-user decode speed the model gives")
    limits = limits_of(point) if point.regime == "rate" and point.request_rate is None else None
    if isinstance(limits, str):  # MLPerf Server / Interactive: the rate meeting its p99 limits
        reasons.append(limits)
    if point.regime == "rate" and point.request_rate == math.inf and point.requests is None:
        reasons.append("burst (QPS=INF) with an unknown number of requests")
    lengths = _lengths(point, engine, catalog)
    if isinstance(lengths, str):
        reasons.append(lengths)
    elif point.raw.get("isl", "").strip().lower() == "dataset":  # MLPerf: show the means
        point = replace(point, isl=lengths[0], osl=lengths[1])
    gpu = catalog.gpus.get(point.gpu or "")
    if gpu and point.tp > gpu.max_tp and not point.disaggregated:
        reasons.append(f"TP{point.tp} is more than the largest TP group in the catalog for "
                       f"{point.gpu} ({gpu.max_tp})")
    if reasons or gpu is None or point.model is None or isinstance(lengths, str):
        return Skipped(point.row, tuple(reasons), point.raw)
    prompt, output = lengths
    spec = _speculative(point, catalog)
    if isinstance(spec, str):
        return Skipped(point.row, (spec,), point.raw)
    try:  # lengths past the schema's ranges skip the row with the schema's words (F19)
        req = Requirements(
            schema_version=1, account=Account(name="fidelity"),
            workloads=[Workload(name="row", model=point.model, concurrent_users=1,
                                prompt_tokens=prompt, output_tokens=output, speculative=spec,
                                targets=Targets(system_tokens_per_s=1.0))],
            policy=Policy(headroom=0))
    except ValidationError as exc:
        named = {"prompt_tokens": "isl", "output_tokens": "osl"}
        return Skipped(point.row, tuple(
            f"{named.get(str(e['loc'][-1]), str(e['loc'][-1]))} "
            f"{said(dict(e))}"
            for e in exc.errors(include_input=False, include_url=False)), point.raw)
    base: dict[str, Value] = {**account_inputs(req, catalog),
                              **workload_inputs(req.workloads[0], catalog.models[point.model])}
    choice = Choice(point.gpu or "", gpu.default_platform, point.weight_precision,
                    point.kv_precision, point.tp, pp=point.pp, ep=point.ep, adp=point.adp)
    return Case(point, engine, prompt, output, choice, base, req, replicas=point.replicas)


_NEXTN = re.compile(r"\b(\d+)\s*(?:nextn|mtp)\s*layers?\b|\bmtp\s*(\d+)\b|nextn\s*=\s*(\d+)")


def _speculative(point: BenchPoint, catalog: Catalog) -> Speculative | str | None:
    """An MTP row's drafted tokens (stated, '3 nextn layers', or the documented default) with
    the model's published acceptance length; None when the row does not speculate; the reason
    when the model has no published figure."""
    if not point.speculative or point.model is None:
        return None
    text = row_text(point)
    found = _NEXTN.search(text)
    drafts = (int(next(g for g in found.groups() if g)) if found
              else mtp_drafts(point, text)
              or int(catalog.constant("mtp_unstated_draft_tokens")))
    published = catalog.models[point.model].mtp_acceptance_length(drafts)
    if published is None:
        return (f"speculative decoding (MTP, {drafts} drafted tokens) on a model without a "
                "published acceptance length")
    return Speculative(method="mtp", draft_tokens=drafts,
                       acceptance_length=mtp_acceptance(point, published, text, catalog))


def pytorch_backend(case: Case) -> bool:
    # InferenceX launches every TensorRT-LLM run with ``trtllm-serve --backend=pytorch``
    # (benchmarks/dsr1_*_trt*.sh from 2025-09-15 on), also the rows that name no image
    text = row_text(case.point)
    return ("pytorch backend" in text or "tensorrt-llm/release:1." in text
            or framework(text) == "trt")


def _compiled_runtime(case: Case) -> bool:
    """The engine's request path is compiled C++ (llama.cpp; TensorRT-LLM's engine backend
    behind Triton or NIM 1.x): no whole engine steps before the first token."""
    return case.engine == LLAMACPP or (case.engine in DATACENTER_ENGINES
                                       and not pytorch_backend(case))


def _adp_balance_timeout(case: Case, catalog: Catalog) -> float:
    """Iterations TensorRT-LLM holds a prompt for attention-DP balance: InferenceX's harness
    runs its PyTorch backend with attention DP and ``enable_balance`` on (constant
    ``trtllm_inferencex_adp_balance_iters``, with its source); the engine's default is off."""
    if (case.point.adp > 1 and case.engine in DATACENTER_ENGINES and pytorch_backend(case)
            and "inferencex" in row_text(case.point)):
        return catalog.constant("trtllm_inferencex_adp_balance_iters")
    return 0.0


def _inferencex(case: Case) -> bool:
    return "inferencex" in row_text(case.point)


def _atom(case: Case) -> bool:
    """ROCm's ATOM engine (InferenceX ``framework=atom``, image ``rocm/atom``)."""
    return re.search(r"\batom\b", row_text(case.point)) is not None


def _recv_interval(case: Case, catalog: Catalog) -> float:
    """Decode steps between SGLang's polls for new requests (``--scheduler-recv-interval``):
    InferenceX sets it in its SGLang DeepSeek-R1 scripts for NVIDIA Blackwell (B200, B300),
    30 from 16 users up (10 below, and at TP4 in FP8); the engine's default is 1, no wait
    (constants ``sglang_inferencex_recv_interval*``, with their source)."""
    p = case.point
    gpu = catalog.gpus.get(p.gpu or "")
    if not (_inferencex(case) and "framework=sglang" in row_text(p) and gpu is not None
            and (gpu.vendor, gpu.architecture) == ("NVIDIA", "Blackwell")):
        return 0.0
    k = catalog.constant
    low = (p.concurrency or 1) < k("sglang_inferencex_recv_interval_from_users") or (
        p.tp == 4 and p.weight_precision == "fp8")
    return k("sglang_inferencex_recv_interval_low" if low else "sglang_inferencex_recv_interval")


_LOCK_STEP = re.compile(r"random-range-ratio 1\b.*request-rate inf")


def lock_step(case: Case) -> bool:
    """A closed loop that stays in rounds: every prompt and every answer the same length
    (SGLang's bench_serving ``--random-range-ratio 1``, the answers' published total = requests
    x length) at request rate "inf". The first C prompts arrive at once, are prefilled before
    any decodes, decode together and end at the same step, so their successors arrive at once
    again: every request is in a burst of C, not only the first wave."""
    return case.point.regime == "concurrency" and bool(
        _LOCK_STEP.search(row_text(case.point)))


def harness_givens(case: Case, catalog: Catalog, users: float) -> dict[str, float]:
    """What a fixed-concurrency row's benchmark harness adds to its first token (the
    ``closed_loop_ttft_ms`` givens), none of it part of a customer's deployment: the users per
    replica, TensorRT-LLM's attention-DP balance hold, SGLang's request polling, and the
    first wave's share. InferenceX sends ``inferencex_prompts_per_user`` x C prompts at request
    rate "inf" with at most C in flight, after warm-up: its first C arrive at once (its lengths
    U[0.8 L, L] spread the later rounds). A :func:`lock_step` run is a burst every round."""
    wave = (1.0 if lock_step(case) else
            (1 / catalog.constant("inferencex_prompts_per_user")) if _inferencex(case) else 0.0)
    return {"concurrency_given": users,
            "adp_balance_timeout_given": _adp_balance_timeout(case, catalog),
            "recv_interval_given": _recv_interval(case, catalog),
            "first_wave_share_given": wave}


def _profile(case: Case, catalog: Catalog) -> dict[str, float]:
    """Engine-profile inputs (memory policy, batch cap, llama.cpp efficiencies)."""
    k = catalog.constant
    if case.engine in DATACENTER_ENGINES:
        fraction = "trtllm_kv_cache_fraction" if case.engine == TRTLLM_BENCH else (
            "trtllm_serving_kv_cache_fraction")
        # the PyTorch backend (v0.19 on; the default from 1.0) keeps a different runtime
        # reserve outside its KV pool than the TensorRT-engine backend of the v0.17 tables
        pytorch = pytorch_backend(case)
        reserve = "trtllm_pytorch_runtime_reserve_gb" if pytorch else "trtllm_runtime_reserve_gb"
        # offline runs (trtllm-bench): the share of its output a request's KV holds, fitted
        # per backend; behind a server the product's default (no offline rows to fit)
        held = ({"kv_output_occupancy": k("trtllm_pytorch_kv_output_occupancy" if pytorch
                                          else "trtllm_kv_output_occupancy")}
                if case.engine == TRTLLM_BENCH else {})
        # an InferenceX run's token budget per iteration (fidelity_inferencex.py)
        budget = trtllm_max_num_tokens(case.point, row_text(case.point), catalog)
        return {"gpu_memory_utilization": k("driver_memory_ratio"),
                **({} if budget is None else {"prefill_chunk_tokens": budget}),
                "runtime_reserve_gb": k(reserve),
                "kv_cache_fraction": k(fraction),
                **held,
                "max_batch_per_replica": k("trtllm_max_batch"),
                # no two-batch overlap in TensorRT-LLM 1.x: expert parallelism over nodes
                # (Hopper: the recipes force DeepEP's normal kernels) waits for the exchange
                "alltoall_overlap": 0.0,
                # a sliding-window layer's cache keeps the whole context unless
                # kv_cache_config.max_attention_window is set (llm_args.KvCacheConfig; no
                # table sets it); only the attention kernel stops at the window
                "window_kv_cut": 0.0,
                # the TensorRT engine backend's request path is compiled C++ (Triton, NIM
                # 1.x): no whole engine steps before the first token; the PyTorch backend's
                # Python scheduler has them, like vLLM and SGLang (docs/queueing.md)
                "scheduler_steps": k("first_token_engine_steps") if pytorch else 0.0}
    if case.engine == LLAMACPP:
        return {"mbu_weights": k("llamacpp_mbu"), "mbu_kv": k("llamacpp_mbu"),
                "step_overhead_ms": k("llamacpp_step_overhead_ms"),
                "max_batch_per_replica": 1.0, "scheduler_steps": 0.0}
    if _atom(case):  # prefill-first, whole prompts up to its token budget, no chunk mixing
        return {"max_batch_per_replica": k("max_batch_per_replica"),
                "prefill_chunk_tokens": k("atom_max_num_batched_tokens")}
    # an InferenceX SGLang run's stated memory fraction and prefill chunk: SGLang prefills a
    # prompt in one forward of its own, not in chunks riding decode steps (fidelity_inferencex).
    # --mem-fraction-static is a share of the memory the driver reports, as TensorRT-LLM's
    # fraction is (sglang_memory_utilization: x driver_memory_ratio), not of marketed GB
    text = row_text(case.point)
    memory = sglang_memory_utilization(case.point, text, catalog)
    chunk = sglang_chunked_prefill_tokens(case.point, text)
    return {"max_batch_per_replica": k("max_batch_per_replica"),
            **({} if memory is None else {"gpu_memory_utilization": memory}),
            **({} if chunk is None else {"prefill_chunk_tokens": chunk})}


def _num(env: Mapping[str, Value], name: str) -> float:
    value = env[name]
    if not isinstance(value, float | int):
        raise TypeError(f"{name} is not a number: {value!r}")
    return float(value)


def _figure(name: str, env: Mapping[str, Value], **given: float) -> float:
    value = evaluate(FIGURE_EXPRS[name], {**env, **given})
    assert isinstance(value, float | int)
    return float(value)


class _Row:
    """Evaluates one case's inputs through the engine with a given set of constants."""

    def __init__(self, case: Case, catalog: Catalog, tables: Tables) -> None:
        self.case, self.catalog, self.tables = case, catalog, tables
        self.profile = _profile(case, catalog)
        self.replicas = float(case.replicas)

    def env(self, **extra: float) -> dict[str, Value]:
        c = self.case
        return evaluate_choice(c.base, c.choice, self.tables, c.req, self.catalog,
                               {**self.profile, **extra})

    def open_env(self, rate: float, **extra: float) -> dict[str, Value]:
        """Random (Poisson) arrivals at ``rate`` requests/s per replica: the open-arrival
        wait, not the closed loop's (queueing.py reads a stated rate as open)."""
        return self.env(requests_per_s=rate, burstiness=1.0, **extra)

    def per_replica(self, group: float) -> float:
        return _figure("per_replica_given", {}, group_given=group, replicas_given=self.replicas)

    def group_output(self, env: Mapping[str, Value]) -> float:
        return float(evaluate(GROUP_OUTPUT_TOKENS_PER_S, {**env, "replicas_given": self.replicas}))


def _offline(row: _Row) -> tuple[float, dict[str, Value]]:
    env = row.env()
    return row.group_output(env), env


def _batch1(row: _Row) -> tuple[float, dict[str, Value]]:
    env = row.env(max_batch_per_replica=1.0)
    if row.case.point.metric in ("itl_ms", "tpot_ms"):
        return _figure("single_stream_itl_ms", env), env
    return _num(env, "bandwidth_ceiling_tokens_per_s"), env


def _closed_loop_env(row: _Row) -> tuple[float, dict[str, Value]]:
    users = row.per_replica(float(row.case.point.concurrency or 1))
    # each user sends its next prompt when its answer ends: paced, not random, arrivals
    # (arrival CV 0), so the prompt queue's Allen-Cunneen wait is 0; the closed-loop wait
    # (queueing.py) sees the row's users on each replica, as `estimate --concurrency`
    return users, row.env(max_batch_per_replica=users, burstiness=0.0,
                          fixed_users_per_replica=users)


def _closed_loop(row: _Row) -> tuple[float, dict[str, Value]]:
    """C users per replica, each sending its next request when the last one finished."""
    p = row.case.point
    users, env = _closed_loop_env(row)
    if p.metric in ("itl_ms", "tpot_ms"):
        return _num(env, "tpot_ms"), env
    if p.metric == "tokens_per_s_per_user":
        return _num(env, "tokens_per_s_per_user"), env
    if p.metric == "ttft_ms":
        return _figure("closed_loop_ttft_ms", env,
                       **harness_givens(row.case, row.catalog, users)), env
    return _figure("closed_loop_output_tokens_per_s", env, concurrency_given=users,
                   replicas_given=row.replicas), env


def _open_loop(row: _Row) -> tuple[float, dict[str, Value]]:
    """An offered request rate; at or above capacity (or all at once) a burst."""
    p = row.case.point
    limits = limits_of(p) if p.request_rate is None else None
    if isinstance(limits, Limits):  # MLPerf Server / Interactive (fidelity_mlperf.py)
        return server_output_tokens_per_s(row, limits)
    sent = row.per_replica(float(p.requests or 0))  # a run of N requests caps the batch
    rate = row.per_replica(float(p.request_rate or 0.0))
    offered = rate if 0 < rate < math.inf else 1.0  # all at once: an open loop too
    saturated = (row.open_env(offered, max_batch_per_replica=sent) if sent > 0
                 else row.open_env(offered))
    capacity = _figure("served_rate_per_s", saturated, request_rate_given=math.inf)
    if rate >= capacity:  # no steady state: the batch fills, prompts are prefilled first
        if p.metric in ("itl_ms", "tpot_ms"):
            return _figure("decode_only_tpot_ms", saturated), saturated
        if p.metric == "ttft_ms" and p.request_rate == math.inf:
            return _figure("burst_ttft_ms", saturated, requests_given=sent), saturated
        if p.metric == "ttft_ms":
            return _num(saturated, "ttft_ms"), saturated
        return row.group_output(saturated), saturated
    env = row.open_env(rate, max_batch_per_replica=_figure("rate_batch_per_replica", saturated,
                                                            request_rate_given=rate))
    if p.metric in ("itl_ms", "tpot_ms", "ttft_ms"):
        return _num(env, "tpot_ms" if p.metric != "ttft_ms" else "ttft_ms"), env
    if sent > 0:
        return _figure("finite_run_output_tokens_per_s", env, requests_given=sent,
                       served_rate_given=rate,
                       request_cycle_ms_given=_num(env, "request_cycle_ms"),
                       replicas_given=row.replicas), env
    return _figure("rate_output_tokens_per_s", env, served_rate_given=rate,
                   replicas_given=row.replicas), env


_REGIMES = {"offline": _offline, "batch1": _batch1, "concurrency": _closed_loop,
            "rate": _open_loop}


def predict(case: Case, catalog: Catalog, tables: Tables) -> tuple[float, float]:
    """(predicted value of the row's metric, batch per replica) with ``catalog``'s constants."""
    if case.point.disaggregated:
        return predict_disagg(case.point, case.choice, case.base, case.req, catalog, tables,
                              _profile(case, catalog))
    value, env = _REGIMES[case.point.regime](_Row(case, catalog, tables))
    if case.point.metric == "total_tokens_per_s":  # requests carry prompt + output tokens
        value = _figure("total_tokens_per_s", env, output_tokens_per_s_given=value)
    return value, _num(env, "batch_per_replica")


def prepare(points: Iterable[BenchPoint], catalog: Catalog) -> tuple[list[Case], list[Skipped]]:
    labels = LabelIndex(catalog)
    points = list(points)
    contradicted = contradicted_rows(points)  # a run's own figures disagree (fidelity_checks)
    got = [interpret(p, catalog, labels) if p.row not in contradicted
           else Skipped(p.row, (contradicted[p.row],), p.raw) for p in points]
    return ([c for c in got if isinstance(c, Case)], [k for k in got if isinstance(k, Skipped)])


def tables_for(catalog: Catalog) -> Tables:
    req = Requirements(schema_version=1, account=Account(name="fidelity"),
                       workloads=[Workload(name="row", model=next(iter(catalog.models)),
                                           concurrent_users=1, prompt_tokens=1, output_tokens=1,
                                           targets=Targets(system_tokens_per_s=1.0))])
    return build_tables(req, catalog)


def score(cases: Sequence[Case], catalog: Catalog, tables: Tables | None = None) -> list[RowResult]:
    tables = tables or tables_for(catalog)
    out = []
    for case in cases:
        predicted, batch = predict(case, catalog, tables)
        out.append(RowResult(case.point, case.engine, predicted, batch,
                             relative_error(predicted, case.point.value)))
    return out


def evaluate_file(path: str | Path, catalog: Catalog | None = None
                  ) -> tuple[list[RowResult], list[Skipped], int]:
    """(scored rows, rows not interpreted with the reason, number of data rows read)."""
    cat = catalog or load_catalog()
    points, unreadable = read_points(path, cat)
    cases, skipped = prepare(points, cat)
    results = score(cases, cat)
    labels = LabelIndex(cat)
    # a row benchdata could not read also gets the reasons its labels and features give
    unreadable = [Skipped(u.row, u.reasons + tuple(_raw_reasons(u.raw, cat, labels)), u.raw)
                  for u in unreadable]
    return results, sorted(unreadable + skipped, key=lambda s: s.row), len(points) + len(unreadable)


def _raw_reasons(raw: Mapping[str, str], catalog: Catalog, labels: LabelIndex) -> list[str]:
    if not any(value.strip() for value in raw.values()):
        return []
    return label_reasons(raw, catalog, labels) + unmodelled_reasons(*serving_features(raw))
