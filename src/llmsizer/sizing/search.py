"""The option search: every candidate option (GPU, precision, parallelism) of one workload,
evaluated through the calculation list (:mod:`.evaluate`), rejected with a plain reason or
ranked, with how far each option's figures lie outside the calibration data. Arithmetic is
in :mod:`llmsizer.model.calculations`; this module only searches and ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from operator import itemgetter

from ..inputs.benchpoints import BenchPoint
from ..inputs.schema import Requirements
from ..inputs.schema_workload import Workload
from ..model.calculations import CALCULATIONS, INPUTS
from ..model.calculations.inputs import PERCENTILES
from ..model.catalog import Catalog, Model
from ..model.expr import Value
from ..model.names import platform_words
from . import costs, sensitivity, xpyd
from .advice import advice as advice_for
from .evaluate import (
    Choice,
    Tables,
    account_inputs,
    build_tables,
    compute_bits,
    confidence_inputs,
    efficiency_inputs,
    error_group,
    evaluate_choice,
    workload_inputs,
)
from .measured import Pick, pick_point
from .results import Option, WorkloadResult

# Tried when the account states none. Groups past 8 (16-72, inside an NVL72 rack's NVLink
# domain) are tried only when stated: the engine's batch cap is per replica, which a 72-GPU
# replica would never fill, so offering them by default would only lengthen the list.
TP_DEGREES = (1, 2, 4, 8)
EP_MIN_LINK_GB_S = 100  # GPU-to-GPU GB/s from which expert parallelism is offered (NVLink class)
_OPTION_KEYS = tuple(i.name for i in INPUTS if i.scope == "option") + tuple(
    c.name for c in CALCULATIONS)
_option_values = itemgetter(*_OPTION_KEYS)


def choices(req: Requirements, w: Workload, catalog: Catalog,
            model: Model | None = None) -> list[Choice]:
    hw = req.hardware
    if w.measured:  # calibrated mode: the customer's benchmark fixes GPU and TP
        gid = w.measured.gpu
        plat = hw.platform if hw.platform and gid in catalog.platforms[hw.platform].gpus else (
            catalog.gpus[gid].default_platform)
        wp = hw.weight_precisions[0]
        return [Choice(gid, plat, wp, kv_precisions(hw.kv_precisions, wp, catalog)[0],
                       w.measured.gpus_per_replica)]
    moe = model is not None and model.experts > 0
    out = []
    for gid in hw.gpus or sorted(catalog.gpus):
        gpu = catalog.gpus[gid]
        for plat in platforms_for(catalog, gid, hw.platform):
            named = plat != gpu.default_platform
            for wp in hw.weight_precisions:
                for kp in kv_precisions(hw.kv_precisions, wp, catalog):
                    for tp in hw.tensor_parallel or TP_DEGREES:
                        if tp > fast_group(catalog, gid, plat):
                            if moe and _across_nodes(catalog, gid, plat, tp):
                                out.append(Choice(gid, plat, wp, kp, tp, ep=tp, adp=tp,
                                                  platform_in_id=named))
                        else:
                            out.append(Choice(gid, plat, wp, kp, tp, platform_in_id=named))
                            # how MoE models are served on scale-up fabrics (measured rows);
                            # an all-to-all per layer over PCIe is neither measured nor how
                            # it is done
                            if moe and tp > 1 and gpu.link_gb_s >= EP_MIN_LINK_GB_S:
                                out.append(Choice(gid, plat, wp, kp, tp, ep=tp,
                                                  platform_in_id=named))
                                out.append(Choice(gid, plat, wp, kp, tp, ep=tp, adp=tp,
                                                  platform_in_id=named))
    return out


def _across_nodes(catalog: Catalog, gpu: str, platform: str, n: int) -> bool:
    """Whether a stated group of ``n`` GPUs may span whole nodes as wide expert parallelism
    (each GPU an attention and expert rank, the all-to-all over the network): only where the
    platform's network per GPU is stated and the GPUs have a scale-up fabric in the node."""
    plat = catalog.platforms[platform]
    return (plat.scaleout_gb_s is not None and n % plat.gpus_per_node == 0
            and catalog.gpus[gpu].link_gb_s >= EP_MIN_LINK_GB_S)


def fast_group(catalog: Catalog, gpu: str, platform: str) -> int:
    """The largest tensor- or expert-parallel group a platform gives a GPU: its GPUs per node,
    the GPU's own limit, and past 8 GPUs the platform's NVLink domain (an NVL72 rack: 72)."""
    plat = catalog.platforms[platform]
    limit = min(plat.gpus_per_node, catalog.gpus[gpu].max_tp)
    return limit if limit <= 8 else min(limit, plat.nvlink_domain)


def platforms_for(catalog: Catalog, gpu: str, stated: str | None) -> list[str]:
    """The platforms tried for a GPU: the account's platform when it names one, else every
    catalog platform that carries the GPU (4- and 8-GPU boards, PCIe servers, rack-scale),
    its default first. A smaller node can buy fewer GPUs for the same load (issue 22:
    Mixtral on 4-GPU HGX nodes, 8 GPUs bought instead of 16)."""
    if stated:
        return [stated]
    default = catalog.gpus[gpu].default_platform
    return [default, *sorted(p for p, plat in catalog.platforms.items()
                             if gpu in plat.gpus and p != default)]


def kv_precisions(stated: Sequence[str] | None, weight_precision: str,
                  catalog: Catalog) -> list[str]:
    """The KV precisions to try with these weights: the account's list, or when it states
    none, the weight precision's default (never FP4 KV unless asked for)."""
    return list(stated) if stated else [catalog.precisions[weight_precision].default_kv_precision]


def _fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def reason_for(v: dict[str, Value]) -> tuple[str, str]:
    """(code, why) an option is rejected (('', '') when feasible). Reads computed values only."""

    def f(name: str) -> float:
        x = v[name]
        assert isinstance(x, float)
        return x

    if f("weights_gb") > f("usable_memory_gb"):
        # the replica's GPUs in words, not "TP1"/"TP2" (session 23: the option line says
        # "2 × H100 PCIe"; tensor parallelism is a glossary term, its code is not)
        n = int(f("gpus_per_replica"))
        split = "tensor parallel" if f("pp") <= 1 else "tensor and pipeline parallel"
        gpus = "1 GPU per replica" if n == 1 else f"{n} GPUs per replica ({split})"
        return "weights", (f"weights {_fmt(f('weights_gb'), 1)} GB do not fit in "
                f"{_fmt(f('usable_memory_gb'), 1)} GB usable on {gpus}")
    if f("max_sequences_by_memory") < 1:
        return "kv", (f"one full-context request needs {_fmt(f('kv_gb_per_request'), 2)} GB of KV; only "
                f"{_fmt(f('kv_budget_gb'), 2)} GB left beside the weights")
    if f("measured_tokens_per_s_per_replica") > 0:
        return "", ""  # calibrated mode: the customer's benchmark replaces the latency model
    if f("batch_by_tpot") < 1:
        got, need = f("bandwidth_ceiling_tokens_per_s"), f("required_tokens_per_s_per_user")
        # two decimals where one would print the same figure twice ("174.4 ...; target 174.4")
        digits = 1 if _fmt(got, 1) != _fmt(need, 1) else 2
        if got >= need:
            # the weights alone allow the speed: reading the prompts, spread over the answer's
            # steps, is what misses it ("even one user gets only 24.7 tok/s; target 20.0")
            one = f("tokens_per_s_per_user")
            return "speed", (f"{_prompt_read(f)}, spread over its answer, adds "
                             f"{_fmt(f('prefill_ms_per_seq_step'), 1)} ms to every step, so "
                             f"one user gets {_fmt(one, digits)} tok/s "
                             f"({_fmt(got, digits)} without it); target {_fmt(need, digits)} "
                             f"tok/s: {_PROMPT_HELP}")
        return "speed", (f"even one user gets only {_fmt(got, digits)} tok/s here (bandwidth "
                         f"ceiling); target {_fmt(need, digits)} tok/s")
    if "streams_short" in v and f("streams_short") > 0:  # not on a disaggregated pair
        # review round 22: a throughput target with the streams stated, each replica sized
        # full had assumed more requests in flight than the pipeline keeps open
        # (session 22: with the policy's headroom on the target, which is the load here)
        h = f("headroom")
        with_h = (f" with {h * 100:g} % headroom "
                  f"({_fmt(f('stream_target_load_tokens_per_s'))} tok/s)" if h > 0 else "")
        return "speed", (f"{_fmt(f('users'))} streams cannot reach "
                         f"{_fmt(f('target_system_tokens_per_s'))} tok/s{with_h} on this "
                         f"configuration even one per replica (at most "
                         f"{_fmt(f('streams_best_tokens_per_s'))} tok/s)")
    if f("disagg_prefill_gpus") > 0 and f("batch_by_ttft") < 1:
        return "ttft", (f"the whole answer misses the {f('target_e2e_p95_s'):g} s p95 "
                        "target even with one sequence per decode replica (prefill, moving the "
                        "cache, a p95 prefill wait of "
                        f"{_fmt(f('disagg_e2e_prefill_wait_p95_ms'))} ms and the answer's "
                        "steps)")
    if f("batch_by_ttft") < 1:
        return "ttft", _ttft_why(f)
    if f("disagg_prefill_gpus") > 0 and 0 < f("target_ttft_ms") < f("ttft_ms"):
        return "ttft", (f"TTFT {_fmt(f('ttft_ms'))} ms with disaggregated prefill replicas "
                        f"(prefill, moving the cache and the fitted overhead); "
                        f"{_first_token_bound(f)}")
    if f("disagg_prefill_gpus") > 0 and f("percentile_slo_met") < 1:
        # a first-token percentile the prefill pool's count cannot meet (no room for a
        # wait); the decode batch meets the whole-answer target (disagg_batch_by_e2e_p95)
        return "ttft", (f"first token p95 {_fmt(f('ttft_p95_ms'))} ms, whole answer p95 "
                        f"{_fmt(f('e2e_p95_ms'))} ms with disaggregated prefill replicas: a "
                        "percentile target is missed")
    if f("batch_by_itl") < 1:
        return "itl", ("the inter-token latency percentile target is missed even for one "
                       "request: the steps that also prefill a new prompt's chunk are too slow")
    return "", ""


def _first_token_bound(f: Callable[[str], float]) -> str:
    """The first-token bound in the customer's terms: the TTFT target, or without one the
    response time it comes from (decode.py target_ttft_ms)."""
    if f("target_ttft_s") <= 0 < f("target_response_time_s"):
        return f"no answer comes within the {f('target_response_time_s'):g} s response time"
    return f"target {_fmt(f('target_ttft_ms'))} ms"


def _ttft_why(f: Callable[[str], float]) -> str:
    """Which first-token or whole-answer target no batch meets, in its own terms (a file with
    only a whole-answer target read "TTFT 264 ms even for one request; target 0 ms")."""
    one = f"one request alone waits {_fmt(f('ttft_one_user_ms'))} ms for its first token"
    if f("target_e2e_p95_s") > 0 and f("batch_by_e2e_p95") < 1:
        return (f"the whole answer misses the {f('target_e2e_p95_s'):g} s p95 target even for "
                f"one request ({one} before the answer's steps)")
    for q in PERCENTILES:
        if f(f"target_ttft_p{q}_s") > 0 and f(f"batch_by_ttft_p{q}") < 1:
            return (f"the first-token p{q} target of {f(f'target_ttft_p{q}_s'):g} s is "
                    f"missed even for one request ({one}, before any wait)")
    if f("target_ttft_s") <= 0 < f("target_response_time_s"):
        # the bound is the response time (decode.py target_ttft_ms): say so, not "TTFT target"
        return (f"the first token alone takes {_fmt(f('ttft_one_user_ms'))} ms even for one "
                f"request, so {_first_token_bound(f)}")
    if 0 < f("target_ttft_ms") < f("prefill_ms"):
        # the prompt alone takes longer than the first token may: no batch or queue is the cause
        return (f"{_prompt_read(f)} alone takes {_fmt(f('prefill_ms'))} ms (first token "
                f"{_fmt(f('ttft_one_user_ms'))} ms even for one request); "
                f"{_first_token_bound(f)}: {_PROMPT_HELP}")
    return (f"TTFT {_fmt(f('ttft_one_user_ms'))} ms even for one request; "
            f"{_first_token_bound(f)}")


_PROMPT_HELP = "a shorter prompt, more of it from the prefix cache or a faster GPU would help"


def _prompt_read(f: Callable[[str], float]) -> str:
    """Reading the prompt, in the customer's words: its tokens, or those the prefix cache
    does not hold."""
    if f("prefill_tokens") < f("prompt_tokens"):
        return (f"reading the prompt's {_fmt(f('prefill_tokens'))} tokens not in the prefix "
                "cache")
    return f"reading each {_fmt(f('prompt_tokens'))}-token prompt"


def _model_class(model: Model) -> str:
    return "mla" if model.kv_lora_rank else "moe" if model.experts else "dense"


def calibration_gaps(catalog: Catalog, choice: Choice, model_id: str, model: Model,
                     measured: bool) -> list[str]:
    """Plain reasons why an option's modelled figures are extrapolated (empty = covered): a
    GPU, weight precision or model class (dense, MoE, MLA) with no calibration rows."""
    if measured:
        return []
    cov = catalog.coverage
    gaps = []
    if choice.gpu not in cov.gpus:
        gaps.append(f"no measured reference for {catalog.gpus[choice.gpu].name}")
    if choice.weight_precision not in cov.weight_precisions:
        gaps.append(f"no measured reference for {choice.weight_precision.upper()} weights")
    path = catalog.precisions[choice.weight_precision].compute_path
    if path in ("fp8", "fp4") and compute_bits(catalog, choice.gpu, choice.weight_precision) == (
            "16bit") and choice.weight_precision in cov.weight_precisions:
        # measured only on GPUs that compute this format natively
        gaps.append(f"no measured reference for {choice.weight_precision.upper()} weights dequantised "
                    f"to BF16 on {catalog.gpus[choice.gpu].name}")
    if (choice.ep > 1 or choice.adp > 1) and choice.gpu not in cov.expert_parallel_gpus:
        gaps.append("no measured reference for expert parallelism on "
                    f"{catalog.gpus[choice.gpu].name}")
    if choice.ep > catalog.platforms[choice.platform].gpus_per_node:
        gaps.append("no measured reference for expert parallelism across nodes")
    if choice.prefill is not None:
        gaps.append(xpyd.DISAGG_GAP)
    covered = {_model_class(catalog.models[m]) for m in cov.models if m in catalog.models}
    if model_id not in cov.models and _model_class(model) not in covered:
        kind = {"mla": "an MLA model", "moe": "an MoE model"}.get(_model_class(model),
                                                                  "this model")
        gaps.append(f"no measured reference for {kind} ({model.name})")
    return gaps


def derating(catalog: Catalog, gaps: Sequence[str]) -> float:
    """Share of its modelled throughput an uncalibrated option is credited with (constant
    ``uncalibrated_derating``, from cross-validation); 1 for a calibrated option."""
    return catalog.constant("uncalibrated_derating") if gaps else 1.0


Rank = tuple[float, ...]


def rank_key(way: str = "on_prem") -> Callable[[Option], Rank]:
    """The options' ranking for a way of running the service (:func:`_rank`)."""
    return lambda o: _rank(o.priced, o.calibration_gaps, o.values, way)


def _rank(priced: bool, gaps: Sequence[str], v: Mapping[str, Value], way: str = "on_prem"
          ) -> Rank:
    """Lowest cost; at equal cost a calibrated option before an extrapolated one (the
    recommendation must not rest on uncalibrated optimism), then fewest GPUs bought, fewest
    GPUs used (a TP1 replica beats TP8 in the same sold-full node), the lower precision that
    meets the targets, most headroom (issue 22). The cost is the way's: bought (on-premises
    per year, an option whose GPU has no purchase price last) or rented (cloud per year, an
    option whose GPU has no cloud price last, then the buying rank: equal rent is decided as
    buying decides it). Review round 18: a rented account's plan was the cheapest to buy,
    4 × H200 options renting for EUR 125 k listed above the recommendation at 213 k."""
    onprem = (0.0 if priced else 1.0, float(v["annual_cost_onprem"]),
              1.0 if gaps else 0.0, float(v["gpus_purchased"]), float(v["gpus"]),
              float(v["weight_bytes_per_param"]), float(v["kv_bytes_per_element"]),
              -float(v["headroom_achieved"]))
    # rentable: a cloud price, on an offer that holds a replica (costs.py cloud_price_known:
    # a 2-GPU replica on Lambda's 1-GPU-only H100 PCIe has no rent, not a rent of 0)
    return by_way(way, onprem, float(v["cloud_price_known"]) > 0, float(v["annual_cost_cloud"]))


def by_way(way: str, onprem: Rank, rentable: bool, annual_cost_cloud: float) -> Rank:
    """A ranking in the way of running the service: buying, ``onprem`` (the buying rank,
    its cost first); renting, the rent per year first (``rentable``: a cloud price is known,
    one without after every priced one), then the buying rank. The language-model options
    (:func:`_rank`) and the embedding and reranking servers' (sizing/retrieval.py) both."""
    if way != "cloud":
        return onprem
    return (0.0 if rentable else 1.0, annual_cost_cloud, *onprem)


def ranked(w: WorkloadResult, way: str, catalog: Catalog, model: Model) -> WorkloadResult:
    """The workload with its feasible options in the way's rank order (the rejected after
    them, as they were), the first recommended and its confidence band."""
    feasible = sorted((o for o in w.options if o.feasible), key=rank_key(way))
    best = feasible[0] if feasible else None
    conf = None
    if best is not None:
        layout = Choice(best.gpu, best.platform, best.weight_precision, best.kv_precision,
                        best.tp)
        conf = sensitivity.confidence(best, "measured" if w.mode == "measured"
                                      else error_group(catalog, layout, model))
    return w.model_copy(update={
        "options": feasible + [o for o in w.options if not o.feasible],
        "recommended": best.id if best is not None else None, "confidence": conf})


class SearchMemo:
    """What the option search works out once per account instead of once per option (issue
    #25 item 3: ~35,000 options are evaluated for 50 workloads): each GPU and weight
    precision's efficiency inputs, and each option's calibration gaps and error band for
    a model (the same layout recurs in every workload of that model)."""

    def __init__(self, req: Requirements, catalog: Catalog) -> None:
        self.req, self.catalog = req, catalog
        self._efficiency: dict[tuple[str, str], dict[str, float]] = {}
        self._calibration: dict[tuple[Choice, str, bool],
                                tuple[list[str], dict[str, float]]] = {}

    def efficiency(self, gpu: str, weight_precision: str) -> dict[str, float]:
        hit = self._efficiency.get((gpu, weight_precision))
        if hit is None:
            hit = self._efficiency[gpu, weight_precision] = efficiency_inputs(
                self.req, self.catalog, gpu, weight_precision)
        return hit

    def calibration(self, ch: Choice, model_id: str, model: Model,
                    measured: bool) -> tuple[list[str], dict[str, float]]:
        """The option's calibration gaps, and its derating and error-band inputs."""
        key = (ch, model_id, measured)
        hit = self._calibration.get(key)
        if hit is None:
            gaps = calibration_gaps(self.catalog, ch, model_id, model, measured)
            hit = self._calibration[key] = (gaps, {
                "calibration_derating": derating(self.catalog, gaps),
                **confidence_inputs(self.catalog, ch, model, measured)})
        return hit


def _nearest(priced: bool, gaps: Sequence[str], v: Mapping[str, Value]
             ) -> tuple[object, ...]:
    """How near a rejected option comes to the targets, lowest first: one that holds a
    request's cache before one that does not, then the fastest single user (bandwidth
    ceiling), then the option ranking."""
    return (float(v["max_sequences_by_memory"]) < 1,
            -float(v["bandwidth_ceiling_tokens_per_s"]), *_rank(priced, gaps, v))


def _xpyd_reason(catalog: Catalog, ch: Choice, reason: str) -> str:
    """A rejected disaggregated option's reason, naming the serving mode and the platform
    (it stands for every prefill/decode pair tried there) as an option's line names it."""
    return (f"disaggregated prefill/decode on {platform_words(catalog.platforms, ch.platform)}"
            f": {reason}")


def evaluate_pair(req: Requirements, catalog: Catalog, decode: Choice,
                  prefill: Choice) -> dict[str, Value]:
    """One stated xPyD pair for the account's only workload, evaluated as
    :func:`size_workload` evaluates the pairs it tries: a sweep of one fixed pair
    (benchmarks/xpyd_load_sweep.py, tests/test_xpyd_monotone.py)."""
    (w,) = req.workloads
    model = catalog.models[w.model_id]
    memo, tables = SearchMemo(req, catalog), build_tables(req, catalog)
    base: dict[str, Value] = {**account_inputs(req, catalog), **workload_inputs(w, model),
                              **costs.api_inputs(req, catalog, w.model_id)}

    def env(ch: Choice, stated: dict[str, float]) -> dict[str, Value]:
        _gaps, calibration = memo.calibration(ch, w.model_id, model, w.measured is not None)
        return evaluate_choice(base, ch, tables, req, catalog, {**calibration, **stated},
                               memo.efficiency(ch.gpu, ch.weight_precision))

    pair = replace(decode, prefill=(prefill.tp, prefill.ep, prefill.adp))
    return env(pair, xpyd.xpyd_inputs(catalog, prefill, env(prefill, {}), decode))


def size_workload(req: Requirements, w: Workload, model: Model, catalog: Catalog,
                  tables: Tables, acct: dict[str, float],
                  points: Sequence[BenchPoint] = (),
                  memo: SearchMemo | None = None, way: str = "on_prem") -> WorkloadResult:
    """One workload: every candidate option evaluated and either rejected (with its reason)
    or ranked for ``way`` (:func:`ranked`); the first is the workload's own recommendation.
    ``memo``: the account's (one is made when not given)."""
    return size_workload_ways(req, w, model, catalog, tables, acct, points, memo, (way,))[0]


def size_workload_ways(req: Requirements, w: Workload, model: Model, catalog: Catalog,
                       tables: Tables, acct: dict[str, float],
                       points: Sequence[BenchPoint] = (), memo: SearchMemo | None = None,
                       ways: Sequence[str] = ("on_prem",)) -> list[WorkloadResult]:
    """:func:`size_workload` for each of ``ways`` (one result per way, in order), every
    option evaluated once: the disaggregated pair kept per GPU, platform and precisions is
    the way's best (review round 18: under "cheapest" the rented plan was searched over the
    pairs cheapest to buy)."""
    memo = memo or SearchMemo(req, catalog)
    winputs = workload_inputs(w, model)
    winputs.update(costs.api_inputs(req, catalog, w.model_id))
    base: dict[str, Value] = {**acct, **winputs}
    options: list[Option] = []
    candidates = choices(req, w, catalog, model)
    pick: Pick | None = None
    if w.measured is not None and w.measured.file is not None:
        env0 = evaluate_choice(base, candidates[0], tables, req, catalog)
        pick = pick_point(w, w.measured, points, float(env0["required_tokens_per_s_per_user"]),
                          float(env0["target_ttft_ms"]))
        winputs["measured_tokens_per_s_per_replica"] = pick.tokens_per_s_per_replica
        base["measured_tokens_per_s_per_replica"] = pick.tokens_per_s_per_replica
    evaluated: list[tuple[Choice, dict[str, Value], str]] = []
    measured = w.measured is not None

    def run(ch: Choice, stated: dict[str, float]) -> tuple[dict[str, Value], str, str,
                                                            list[str]]:
        gaps, calibration = memo.calibration(ch, w.model_id, model, measured)
        env = evaluate_choice(base, ch, tables, req, catalog, {**calibration, **stated},
                              memo.efficiency(ch.gpu, ch.weight_precision))
        code, reason = reason_for(env)
        if not reason and pick is not None and pick.failure:
            code, reason = "measured", pick.failure
        evaluated.append((ch, env, code))
        return env, code, reason, gaps

    def option(ch: Choice, env: dict[str, Value], code: str, reason: str,
               gaps: list[str]) -> Option:
        return Option(id=ch.id, gpu=ch.gpu, platform=ch.platform,
                      weight_precision=ch.weight_precision, kv_precision=ch.kv_precision,
                      tp=ch.tp, feasible=not reason, reason=reason, reason_code=code,
                      priced=tables["gpus"][ch.gpu]["price"] > 0, calibration_gaps=gaps,
                      values=dict(zip(_OPTION_KEYS, _option_values(env), strict=True)))

    options = [option(ch, *run(ch, {})) for ch in candidates]
    # disaggregated: every pair of the layouts above; the best feasible one per GPU,
    # platform and precisions is kept (the others would only lengthen the list, so only
    # the kept ones become Options)
    best_xpyd: dict[str, dict[tuple[str, str, str, str],
                              tuple[Rank, Choice, tuple[dict[str, Value], str, str,
                                                        list[str]]]]] = {way: {} for way in ways}
    # and the nearest rejected one per platform, so a platform where every pair misses says
    # why (one line, not one per pair tried)
    near_xpyd: dict[str, tuple[tuple[object, ...], Choice,
                               tuple[dict[str, Value], str, str, list[str]]]] = {}
    for ch, stated in xpyd.pairs(req, w, model, catalog, list(evaluated)):
        ran = run(ch, stated)
        env, _, reason, gaps = ran
        if reason:
            near = _nearest(tables["gpus"][ch.gpu]["price"] > 0, gaps, env)
            if ch.platform not in near_xpyd or near < near_xpyd[ch.platform][0]:
                near_xpyd[ch.platform] = (near, ch, ran)
            continue
        key = (ch.gpu, ch.platform, ch.weight_precision, ch.kv_precision)
        for way, best in best_xpyd.items():
            rank = _rank(tables["gpus"][ch.gpu]["price"] > 0, gaps, env, way)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, ch, ran)
    kept = options  # with no feasible option, the aggregated ones only
    # a platform with a feasible pair has one for every way
    offered_on = {ch.platform for _, ch, _ in best_xpyd[ways[0]].values()}
    rejected = [option(ch, env, "xpyd", _xpyd_reason(catalog, ch, reason), gaps)
                for platform, (_, ch, (env, _, reason, gaps)) in near_xpyd.items()
                if platform not in offered_on]
    built: dict[Choice, Option] = {}  # a pair kept for both ways is one Option
    for best in best_xpyd.values():
        for _, ch, ran in best.values():
            if ch not in built:
                built[ch] = option(ch, *ran)
    per_way = {way: kept + [built[ch] for _, ch, _ in best.values()] + rejected
               for way, best in best_xpyd.items()}
    advice = None
    if not any(o.feasible for o in kept + list(built.values())):
        # not the nearest pairs: the advice's words ("8 × GPU") describe one kind of replica
        advice = pick.advice if pick is not None and pick.failure else advice_for(
            w, model, kept, catalog)
    note = pick.note if pick is not None else None
    if w.measured is not None and w.measured.tokens_per_s_per_replica is not None:
        note = (f"Measured: the customer's figure of {w.measured.tokens_per_s_per_replica:,.0f} "
                f"tok/s per replica of {w.measured.gpus_per_replica} × {w.measured.gpu} "
                "(requirements, measured block).")
    return [ranked(WorkloadResult(
        name=w.name, model=w.model_id, model_name=model.name,
        mode="measured" if w.measured else "modelled", inputs=winputs,
        recommended=None, advice=advice, options=per_way[way],
        measured_note=note, measured_points=pick.points if pick is not None else [],
        measured_warnings=pick.warnings if pick is not None else []), way, catalog, model)
        for way in ways]
