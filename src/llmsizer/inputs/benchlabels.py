"""The free-text cells of a calibration_points.csv row in llmsizer terms: parallelism
("TP8 EP8 ADP", "DEP4", "TP2 x4 replicas", disaggregated), precisions ("gguf Q4_K_M"), the
load regime ("request rate QPS=8 (rate-driven)"), metric names and units. A cell that cannot
be read raises :class:`_RowError` with the reason; :mod:`.benchdata` collects every reason of
a row. GPU and model labels resolve through the catalogs' ``aliases`` (:class:`LabelIndex`).

Conventions (each one is a choice a reader should know about):

- Parallelism (``tp`` column), one model instance = ``tp x pp`` GPUs:
  ``TP4``, ``4``, ``TP4 PP2``, ``PP2`` (TP1), ``TP8 EP8`` (experts spread over 8 GPUs),
  ``TP8 EP8 ADP`` (attention data-parallel over the 8 GPUs: ``adp`` = 8), ``DEP4``
  (= ``TP4 EP4 ADP``), ``TP1 DP8`` / ``TP1 x8 replicas`` / ``TP2 x4 replicas``
  (independent replicas; ``DPn`` together with ``EPm`` is attention data-parallel inside
  one instance of ``tp x n`` GPUs, as vLLM counts it), llama.cpp "layer split across N
  GPUs" (``pp`` N).
  ``DISAGG P:ax(...) D:bx(...)`` (disaggregated prefill/decode) is read into
  ``disaggregated`` (the decode side fills tp/ep/adp); ``MTP on`` / speculative decoding
  sets ``speculative``. A side labelled ``TP1 ADP`` whose pool the notes state with more
  GPUs ("4 prefill GPUs + 16 decode GPUs") is a placeholder: InferenceX's run configs for
  its Dynamo-SGLang GB200 DeepSeek runs say "tp, ep, and dp-attn do nothing because they
  are hardcoded" in the launch script, and name the layouts DEP4/DEP8/DEP32/DEP48 (the
  nodes' GPUs split over the workers); such a side reads as DEPn, n = stated GPUs /
  workers (SemiAnalysisAI/InferenceX@c4cde0370 .github/configs/nvidia-master.yaml).
  Where the notes cite the launch script itself with ``launch layouts P:(...) D:(...)``,
  those layouts replace the placeholders (the script is what ran; the comments are not),
  a ``TP1 ADP`` side or a ``TP1`` one (the same hardcoded values with dp-attn false).
- Regimes: ``offline`` (``unbounded`` queue, saturated throughput), ``concurrency``
  (closed loop with a fixed number of users for all ``gpu_count`` GPUs; "N per GPU" is
  multiplied out), ``batch1`` (single stream), and ``rate`` (open loop at a request rate:
  ``request_rate`` in requests/s, ``inf`` for "QPS=INF (all at once)", Poisson arrivals
  with a stated rate). ``concurrency`` is ``None`` for offline and rate rows.
- Metrics: names in :data:`METRIC_FORMS`, units in :data:`UNITS`; the statistic is ``mean``
  unless the name says another (``p90_tpot_ms``, ``ttft_p99``).
- KV precision ``auto``/"not stated" takes the weight precision's ``default_kv_precision``
  (catalogs/precisions.yaml: FP4 weights are served with FP8 KV); GGUF weights take fp16
  KV (llama.cpp default).
- GGUF quantisations map to the nearest plain precision by bytes per weight
  (Q4_0 4.5 bits, Q4_K_M ~4.8 bits -> ``int4``; Q8_0 8.5 bits -> ``int8``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..model.catalog import Catalog

REGIMES: tuple[str, ...] = ("offline", "concurrency", "batch1", "rate")


@dataclass(frozen=True)
class Parallelism:
    """How one row's GPUs are used (see the module docstring)."""

    tp: int = 1
    pp: int = 1
    ep: int = 1
    adp: int = 1
    replicas: int | None = None
    disaggregated: str | None = None


# --- label tables -------------------------------------------------------------------
# GPU and model labels resolve through the catalogs' ``aliases`` (catalog.LabelIndex):
# one place for every alias. Precision labels stay here: they name storage formats,
# not catalog entries.

PRECISIONS: dict[str, str] = {
    "fp8": "fp8",
    "bf16": "bf16",
    "fp16": "fp16",
    "f16": "fp16",
    "fp32": "fp32",
    "int8": "int8",
    "int4": "int4",
    "fp4": "fp4",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
    "w4a16": "int4",
    "w8a8": "int8",
    "bfloat16": "bf16",
    "float16": "fp16",
    "awq": "int4",
    "gptq": "int4",
    # GGUF: nearest plain precision by bytes per weight.
    "gguf q4_0": "int4",
    "gguf q4_k_m": "int4",
    "gguf q4_k_s": "int4",
    "gguf q8_0": "int8",
    "gguf f16": "fp16",
    "gguf fp16": "fp16",
}

# Throughput metric names: [output|total|decode]_tokens_per_s[_total|_per_gpu|_per_user|_batch1]
_RATE_METRIC = re.compile(
    r"^(?P<what>output|total|decode)?_?(?P<core>(?:tokens?|tok)_per_s(?:ec)?|throughput|tps)"
    r"(?:_(?P<per>total|per_gpu|per_user|batch1))?$")
# Latency metric names: [mean|median|pNN_]{ttft|tpot|itl|e2el}[_mean|_median|_pNN][_ms|_s]
_LATENCY_METRIC = re.compile(
    r"^(?:(?P<pre>mean|avg|median|p\d+(?:\.\d+)?)_)?(?P<what>ttft|tpot|itl|e2el)"
    r"(?:_(?P<post>mean|avg|median|p\d+(?:\.\d+)?))?(?:_(?P<unit>ms|s))?$")
METRIC_FORMS = (
    "output_tokens_per_s[_total]", "output_tokens_per_s_per_gpu", "total_tokens_per_s[_per_gpu]",
    "output_tokens_per_s_per_user", "decode_tokens_per_s_batch1", "tpot_ms", "ttft_ms",
    "itl_ms", "with a statistic: ttft_mean, p90_tpot_ms, tpot_p99, median_ttft_ms")

# Unit -> factor to the metric's unit (tokens/s for rates, ms for times). A rate unit may
# say what it is per ("tok/s/gpu", "tok/s/user").
UNITS: dict[str, dict[str, float]] = {
    "rate": {"tokens/s": 1.0, "tok/s": 1.0, "tokens/sec": 1.0, "tok/s/gpu": 1.0,
             "tokens/s/gpu": 1.0, "tok/s/user": 1.0, "tokens/s/user": 1.0},
    "time": {"ms": 1.0, "s": 1000.0, "us": 0.001},
}

_PAREN = re.compile(r"\([^)]*\)")
_RATE_UNIT_SPELLING = re.compile(r"^(?:output)?(?:tokens?|tok)/s(?:ec)?(?=/|$)")
_LAYER_SPLIT = re.compile(r"layer split across (\d+) gpus?")
_PAR_PART = re.compile(
    r"x\s*(?P<rep>\d+)(?:\s*replicas?)?|(?P<rep2>\d+)\s*replicas?"
    r"|(?P<name>dep|tp|pp|ep|dp)\s*[=:]?\s*(?P<n>\d+)"
    r"|(?P<adp>\badp(?P<adpn>\d+)?\b|attention[-_ ]dp|dp[-_ ]attention)")
_PAR_FILLER = re.compile(r"^[\s,;+/x×&()_-]*$")
_STATED_POOLS = re.compile(r"(\d+)\s*prefill gpus?\s*\+\s*(\d+)\s*decode gpus?")
# a TensorRT-LLM disaggregated recipe's name (srt-slurm): [c{C}_]ctx{x}_gen{y}_{dep|tep|tp}{n}_
# batch{N}_..., N the decode worker's max_batch_size (per attention-DP rank under DEP)
_RECIPE_DECODE_BATCH = re.compile(
    r"(?<![a-z0-9])ctx(\d+)_gen(\d+)_(dep|tep|tp)(\d+)_batch(\d+)_")
_PLACEHOLDER_SIDE = "tp1 adp"  # see the module docstring (InferenceX Dynamo-SGLang)
# the sides a cited launch script replaces: the same hardcoded "tp: 1, ep: 1" with or without
# dp-attn (InferenceX@c4cde0370 dsr1-fp4-gb200-dynamo-sglang 8k/1k: prefill dp-attn false)
_LAUNCHED_SIDES = (_PLACEHOLDER_SIDE, "tp1")
# the layouts the cited launch script sets, where a label holds placeholders
_LAUNCH_LAYOUTS = re.compile(r"launch layouts p:\s*\((?P<p>[^)]*)\)\s*d:\s*\((?P<d>[^)]*)\)")
_DISAGG_SIDE = re.compile(r"\b(?P<side>[pd])\s*:\s*(?P<n>\d+)\s*x\s*\((?P<spec>[^)]*)\)")
_QPS = re.compile(r"\bqps\s*=\s*(inf|\d+(?:\.\d+)?)")
_RATE_UNIT = re.compile(r"req(?:uests)?\s*/\s*s\b|\brps\b|requests per second")
_RATE_TEXT = re.compile(
    r"(\d+(?:\.\d+)?)\s*(?:req(?:uests)?\s*/\s*s|qps|rps|requests per second)"
    r"|(?:qps|rate)\s*[=:]?\s*(\d+(?:\.\d+)?)")
_PER_GPU_USERS = re.compile(r"^(\d+)\s*(?:/|per)\s*gpu\b")
_LEADING_INT = re.compile(r"^(\d+)\b")
_SPECULATIVE = re.compile(r"\bmtp\s*(?:=\s*)?(?:on|enabled)\b|speculative decoding\s*(?:on|enabled)"
                          r"|\beagle\d*\b|\bdraft model\b")
# MLPerf Inference scenarios as its results print them: Server and Interactive send Poisson
# arrivals and hold p99 TTFT/TPOT limits; Offline issues every query at once.
MLPERF_LATENCY_SCENARIOS = ("server", "interactive")
_OFFLINE_WORDS = ("offline", "max-throughput", "max throughput", "all queries issued at once",
                  "all requests queued")


class _RowError(Exception):
    """A reason to skip one row (internal)."""


def _precision(text: str, what: str) -> str:
    key = re.sub(r"\s+", " ", _PAREN.sub(" ", text).strip().lower())
    first = re.split(r"[\s_/-]", key, maxsplit=1)[0]  # "fp8_e4m3", "awq int4"
    if key not in PRECISIONS and first not in PRECISIONS:
        raise _RowError(f"unknown {what} precision {text!r}")
    return PRECISIONS.get(key) or PRECISIONS[first]


KV_NOT_STATED = ("", "not stated", "unknown", "auto", "default", "engine default")


def kv_assumed(text: str) -> bool:
    """Whether a KV precision cell leaves the choice to the engine ("auto", "engine default
    (not stated)"): the reading then assumes the weights' default (see :func:`_kv_precision`)."""
    return _PAREN.sub(" ", text).strip().lower() in KV_NOT_STATED


def _kv_precision(text: str, weights_raw: str, weights: str, catalog: Catalog) -> str:
    if kv_assumed(text):
        if weights_raw.strip().lower().startswith("gguf"):
            return "fp16"
        prec = catalog.precisions.get(weights)
        return prec.default_kv_precision if prec else weights
    return _precision(text, "KV")


def _positive_int(text: str, what: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise _RowError(f"{what} is not a whole number: {text!r}") from None
    if value < 1:
        raise _RowError(f"{what} must be at least 1, got {value}")
    return value


def _spec(text: str) -> Parallelism:
    """One serving instance's parallelism ("TP8 EP8 ADP", "DEP4", "TP2 x4 replicas").
    A remark in parentheses is the table's gloss, not a figure: "DEP4 (attention-DP +
    expert-parallel)" reads as DEP4, "TP1 (one die)" as TP1. Parentheses that hold a figure
    ("TP8-EP8 (ADP)") are read first."""
    try:
        return _spec_key(text.strip().lower(), text)
    except _RowError:
        glossless = re.sub(r"\s+", " ", _PAREN.sub(" ", text)).strip().lower()
        if glossless == text.strip().lower():
            raise
        return _spec_key(glossless, text)


def _spec_key(key: str, text: str) -> Parallelism:
    if key.isdigit():
        return Parallelism(tp=int(key))
    split = _LAYER_SPLIT.search(key)
    if split:
        return Parallelism(tp=1, pp=int(split.group(1)))
    found: dict[str, int] = {}
    adp_flag = False

    def take(match: re.Match[str]) -> str:
        nonlocal adp_flag
        if match.group("adp"):
            adp_flag = True
            if match.group("adpn"):
                found["adp"] = int(match.group("adpn"))
            return " "
        name, number = (("replicas", match.group("rep") or match.group("rep2"))
                        if match.group("name") is None else (match.group("name"), match.group("n")))
        if name in found:
            raise _RowError(f"{name.upper()} given twice in {text!r}")
        found[name] = int(number)
        return " "

    rest = _PAR_PART.sub(take, key)
    if not (found or adp_flag) or not _PAR_FILLER.match(rest):
        raise _RowError(f"cannot read tensor/pipeline parallelism from {text!r}")
    if any(n < 1 for n in found.values()):
        raise _RowError(f"parallelism must be at least 1: {text!r}")
    ep, pp, replicas = found.get("ep", 1), found.get("pp", 1), found.get("replicas")
    tp, adp = found.get("tp", 1), 1
    if "dp" in found:
        if ep > 1:  # with experts: attention data-parallel inside one instance (vLLM)
            tp, adp = tp * found["dp"], found["dp"]
        elif replicas is not None:
            raise _RowError(f"both DP and a replica count in {text!r}")
        else:
            replicas = found["dp"]
    # the instance spans the experts' GPUs ("EP8" alone, or "TP1 EP8 ADP": attention on
    # one GPU per rank, experts over eight)
    if ep > tp:
        if ep % tp:
            raise _RowError(f"EP{ep} is not a multiple of the TP in {text!r}")
        tp = ep
    if "dep" in found:  # DEPn: attention data-parallel and expert-parallel over n GPUs
        dep = found["dep"]
        if found.get("tp", dep) != dep or found.get("ep", dep) != dep:
            raise _RowError(f"DEP{dep} disagrees with the TP/EP in {text!r}")
        tp, ep, adp = dep, dep, dep
    if adp_flag:
        adp = found.get("adp", tp)
        if tp % adp:
            raise _RowError(f"ADP{adp} does not divide the {tp} GPUs of one instance in {text!r}")
    if tp % ep:
        raise _RowError(f"EP{ep} does not divide the {tp} GPUs of one instance in {text!r}")
    return Parallelism(tp=tp, pp=pp, ep=ep, adp=adp, replicas=replicas)


def stated_pools(notes: str) -> tuple[int, int] | None:
    """(prefill GPUs, decode GPUs) as a row's notes state them ("4 prefill GPUs + 16
    decode GPUs"), or None."""
    found = _STATED_POOLS.search(notes.lower())
    return (int(found.group(1)), int(found.group(2))) if found else None


def launch_layouts(notes: str) -> tuple[str, str] | None:
    """(prefill layout, decode layout) the launch script a row's notes cite sets ("launch
    layouts P:(TP4) D:(TP4)"), or None."""
    found = _LAUNCH_LAYOUTS.search(notes.lower())
    return (found.group("p"), found.group("d")) if found else None


def decode_batch_limit(notes: str) -> int | None:
    """The decode worker's ``max_batch_size`` (per attention-DP rank) where a row's notes cite
    the TensorRT-LLM recipe it ran (``..._gen1_dep16_batch256_...yaml``), else None."""
    found = _RECIPE_DECODE_BATCH.search(notes.lower())
    return int(found.group(5)) if found else None


def _side(workers: int, text: str, stated: int | None, launched: str | None = None
          ) -> Parallelism:
    """One pool's layout; a ``TP1 ADP`` placeholder whose stated pool is wider reads as
    the layout the cited launch script sets (``launched``), else as DEPn over the GPUs each
    worker holds (module docstring)."""
    layout = _spec(text)
    if launched is not None and re.sub(r"\s+", " ", text.strip().lower()) in _LAUNCHED_SIDES:
        return _spec(launched)
    if (stated is not None and re.sub(r"\s+", " ", text.strip().lower()) == _PLACEHOLDER_SIDE
            and stated != workers and stated % workers == 0):
        width = stated // workers  # label reading, as "TP2 x4" -> 8 GPUs
        return Parallelism(tp=width, ep=width, adp=width)
    return layout


def _parallelism(text: str, scenario: str, notes: str = "") -> tuple[Parallelism, int | None]:
    """(parallelism, GPUs a disaggregated deployment uses, else None)."""
    key = text.strip().lower()
    if key.startswith("disagg") or "disaggregated" in scenario.lower():
        sides = {m.group("side"): (int(m.group("n")), m.group("spec"))
                 for m in _DISAGG_SIDE.finditer(key)}
        if "p" in sides and "d" in sides:
            (n_p, p_text), (n_d, d_text) = sides["p"], sides["d"]
            stated = stated_pools(notes) or (None, None)
            launched = launch_layouts(notes) or (None, None)
            prefill = _side(n_p, p_text, stated[0], launched[0])
            decode = _side(n_d, d_text, stated[1], launched[1])
            gpus = n_p * prefill.tp * prefill.pp + n_d * decode.tp * decode.pp
            what = f"prefill {n_p}x ({p_text}), decode {n_d}x ({d_text}), {gpus} GPUs"
            return Parallelism(tp=decode.tp, pp=decode.pp, ep=decode.ep, adp=decode.adp,
                               replicas=1, disaggregated=what), gpus
        return Parallelism(replicas=1, disaggregated=text.strip() or "stated in the scenario"), None
    return _spec(text), None


def disagg_pools(text: str, notes: str = ""
                 ) -> tuple[int, Parallelism, int, Parallelism] | None:
    """(prefill replicas, their layout, decode replicas, their layout) of a
    ``DISAGG P:ax(...) D:bx(...)`` label, placeholders resolved with the pools the
    ``notes`` state; None when it does not state both pools."""
    sides = {m.group("side"): (int(m.group("n")), m.group("spec"))
             for m in _DISAGG_SIDE.finditer(text.strip().lower())}
    if "p" not in sides or "d" not in sides:
        return None
    stated = stated_pools(notes) or (None, None)
    launched = launch_layouts(notes) or (None, None)
    try:
        return (sides["p"][0], _side(*sides["p"], stated[0], launched[0]),
                sides["d"][0], _side(*sides["d"], stated[1], launched[1]))
    except _RowError:
        return None


def serving_features(raw: Mapping[str, str]) -> tuple[str | None, bool]:
    """(disaggregated prefill/decode description or None, speculative decoding on), read
    from the text alone so that a row skipped for other reasons still says so."""
    try:
        disaggregated = _parallelism(raw.get("tp", ""), raw.get("scenario", ""))[0].disaggregated
    except _RowError:
        disaggregated = None
    text = " ".join(raw.get(k, "") for k in ("tp", "scenario", "notes")).lower()
    return disaggregated, bool(_SPECULATIVE.search(text))


def _length(text: str, what: str, regime: str) -> int:
    key = text.strip()
    if key.isdigit():
        return int(key)
    if regime == "batch1":
        return 0
    if key.lower() == "dataset":  # MLPerf: the benchmark dataset's mean, read by fidelity
        return 0
    raise _RowError(f"{what} is not a number of tokens: {text!r}")


def _regime(concurrency: str, scenario: str, metric: str, gpu_count: int | None
            ) -> tuple[str, int | None, float | None]:
    """(regime, concurrency for all the row's GPUs, offered request rate)."""
    key = concurrency.strip().lower()
    scen = scenario.strip().lower()
    qps = _QPS.search(key)
    if qps:
        rate = math.inf if qps.group(1) == "inf" else float(qps.group(1))
        return "rate", None, rate
    if "poisson" in key or "poisson" in scen or _RATE_UNIT.search(key):
        stated = _RATE_TEXT.search(key) or _RATE_TEXT.search(scen)
        if not stated and scen in MLPERF_LATENCY_SCENARIOS:
            # MLPerf Server / Interactive: the result is the largest rate that met the
            # scenario's p99 limits; the rate itself is the prediction (rate None)
            return "rate", None, None
        if not stated:
            raise _RowError("Poisson arrivals without a stated request rate (requests/s)")
        return "rate", None, float(stated.group(1) or stated.group(2))
    # unbounded queue ("-1": trtllm-bench's --concurrency -1), or no number for an
    # offline scenario
    if (key.startswith("unbounded") or key in ("inf", "infinite", "unlimited", "-1")
            or any(key.startswith(w) for w in _OFFLINE_WORDS)
            or (not key and any(w in scen for w in _OFFLINE_WORDS))):
        return "offline", None, None
    if "batch 1" in key or "batch 1" in scen or metric == "decode_tokens_per_s_batch1":
        return "batch1", 1, None
    per_gpu = _PER_GPU_USERS.match(key)
    if per_gpu:
        if gpu_count is None:
            raise _RowError(f"concurrency {concurrency!r} is per GPU but the GPU count is unknown")
        return "concurrency", int(per_gpu.group(1)) * gpu_count, None
    lead = _LEADING_INT.match(key)
    if lead:
        users = int(lead.group(1))
        if users < 1:
            raise _RowError(f"concurrency must be at least 1, got {users}")
        return "concurrency", users, None
    raise _RowError(f"cannot tell the load regime from concurrency {concurrency!r}")


@dataclass(frozen=True)
class _Metric:
    name: str  # llmsizer metric
    family: str  # "rate" or "time"
    statistic: str = "mean"
    per_gpu: bool = False
    unit: str = ""  # a unit the metric name carries ("tpot_ms")


def _metric(text: str) -> _Metric:
    key = re.sub(r"\s+", "", _PAREN.sub(" ", text).strip().lower())
    if key in ("interactivity", "tokens_per_s_per_user"):  # InferenceX: tok/s per user
        return _Metric("tokens_per_s_per_user", "rate")
    rate = _RATE_METRIC.match(key)
    if rate and rate.group("core") in ("throughput", "tps") and not rate.group("what"):
        raise _RowError(f"metric {text.strip()!r} does not say output or total tokens")
    if rate:
        what, per = rate.group("what"), rate.group("per")
        if per in ("per_user", "batch1") and what != "total":
            return _Metric("tokens_per_s_per_user", "rate")
        if per in (None, "total", "per_gpu"):
            name = "total_tokens_per_s" if what == "total" else "output_tokens_per_s"
            return _Metric(name, "rate", per_gpu=per == "per_gpu")
    latency = _LATENCY_METRIC.match(key)
    if latency and not (latency.group("pre") and latency.group("post")):
        stat = latency.group("pre") or latency.group("post") or "mean"
        stat = {"avg": "mean", "p50": "median"}.get(stat, stat)
        return _Metric(f"{latency.group('what')}_ms", "time", stat, unit=latency.group("unit") or "")
    raise _RowError(f"unknown metric {text.strip()!r}")


def _value(text: str, unit: str, metric: _Metric) -> tuple[float, bool]:
    """(value in the metric's unit, whether the unit says it is per GPU)."""
    try:
        number = float(text.replace(",", "").strip())
    except ValueError:
        raise _RowError(f"value is not a number: {text!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise _RowError(f"value must be a positive finite number, got {text!r}")
    factors = UNITS[metric.family]
    key = re.sub(r"\s+", "", unit.strip().lower().replace(" per ", "/")) or metric.unit
    key = _RATE_UNIT_SPELLING.sub("tok/s", key)
    if key not in factors:
        raise _RowError(f"unit {unit!r} does not fit a {metric.family} metric")
    per_gpu_unit = key.endswith("/gpu")
    if key.endswith("/user") and metric.name != "tokens_per_s_per_user":
        raise _RowError(f"unit {unit!r} is per user, the metric is not")
    if per_gpu_unit and metric.name == "tokens_per_s_per_user":
        raise _RowError(f"unit {unit!r} is per GPU, the metric is per user")
    return number * factors[key], per_gpu_unit
