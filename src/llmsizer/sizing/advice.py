"""What to change when no option meets a workload's targets: which stated target no option
meets, even one request at a time, and the best any option reaches for that target, in the
unit the requirements file wrote it (``itl_p95_ms: 2`` is answered in ms, ``e2e_p95_s: 3``
in s). Every figure is an option's calculation row at one request (a rejected option serves
a batch of one: ``batch_served``); the test of each target is the row its batch limit reads
(``batch_by_itl_p95`` and the like), so the advice and each option's reason agree. Used by
:mod:`.search`; review round 18 found the advice saying "Best achievable ... 99.0 tok/s ...
Relax the latency target" whatever target had failed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..inputs.schema_workload import Workload
from ..model.calculations.inputs import PERCENTILES
from ..model.catalog import Catalog, Model
from .results import Option

_ELSE = "use a faster GPU, a lower precision or a smaller model"


@dataclass(frozen=True)
class _Target:
    key: str  # its name under ``targets`` in the requirements file
    words: str  # the target as the file states it ("the 2 ms p95 inter-token target")
    unit: str  # the unit of its figure: the file's ("ms", "s") or "tok/s" for a speed
    met: Callable[[Option], bool]  # this option meets it with one request
    value: Callable[[Option], float]  # this option's figure at one request, in ``unit``
    higher_is_better: bool = False


def _f(o: Option, name: str) -> float:
    return float(o.values[name])


def _row(name: str, to_s: bool = False) -> Callable[[Option], float]:
    """A row's value in the target's unit (a row in ms answers a target written in s)."""
    return (lambda o: _f(o, name) / 1000) if to_s else (lambda o: _f(o, name))


def _at_least_one(name: str) -> Callable[[Option], bool]:
    return lambda o: _f(o, name) >= 1


def _targets(w: Workload, any_option: Option) -> list[_Target]:
    """The workload's stated generation targets, each with the rows that test it."""
    t = w.targets
    out: list[_Target] = []
    if t is None:
        return out
    speed, first = _at_least_one("batch_by_tpot"), _at_least_one("batch_by_ttft_exact")
    if t.tokens_per_s_per_user:
        out.append(_Target("tokens_per_s_per_user",
                           f"the {t.tokens_per_s_per_user:,g} tok/s per-user speed target",
                           "tok/s", speed, _row("tokens_per_s_per_user"), True))
    elif t.response_time_s:
        need = _f(any_option, "required_tokens_per_s_per_user")
        out.append(_Target("response_time_s",
                           f"the {need:,.1f} tok/s per user that the {t.response_time_s:,g} s "
                           "response time asks for", "tok/s", speed,
                           _row("tokens_per_s_per_user"), True))
    if t.ttft_s and (not t.response_time_s or t.ttft_s < t.response_time_s):
        out.append(_Target("ttft_s", f"the {t.ttft_s:,g} s mean first-token target", "s", first,
                           _row("ttft_one_user_ms", to_s=True)))
    elif t.response_time_s:
        out.append(_Target("response_time_s",
                           f"a first token within the {t.response_time_s:,g} s response time",
                           "s", first, _row("ttft_one_user_ms", to_s=True)))
    for q in PERCENTILES:
        stated = getattr(t, f"ttft_p{q}_s")
        if stated:
            out.append(_Target(f"ttft_p{q}_s", f"the {stated:,g} s p{q} first-token target", "s",
                               _at_least_one(f"batch_by_ttft_p{q}"),
                               _row(f"ttft_p{q}_ms", to_s=True)))
    for q in PERCENTILES:
        stated = getattr(t, f"itl_p{q}_ms")
        if stated:
            out.append(_Target(f"itl_p{q}_ms", f"the {stated:,g} ms p{q} inter-token target",
                               "ms", _at_least_one(f"batch_by_itl_p{q}"),
                               _row(f"itl_p{q}_ms")))
    if t.e2e_p95_s:
        out.append(_Target("e2e_p95_s", f"the {t.e2e_p95_s:,g} s p95 whole-answer target", "s",
                           _at_least_one("batch_by_e2e_p95"), _row("e2e_p95_ms", to_s=True)))
    return out


def _digits(x: float) -> int:
    """Decimals that keep two significant figures of a figure below 10 (9.8, 0.24), none
    from 10 up (11 ms, 1,502 ms)."""
    return max(0, 1 - math.floor(math.log10(x))) if x > 0 else 0


def _number(x: float, digits: int) -> str:
    return f"{x:,.{digits}f}"


def _best_words(t: _Target, x: float) -> str:
    return f"{_number(x, _digits(x) + 1)} {t.unit}"


def _relaxed(t: _Target, x: float) -> str:
    """The loosest value of the target that the best option meets, rounded the safe way (up
    for a time, down for a speed) at two significant figures."""
    d = _digits(x)
    scale = 10 ** d
    edge = (math.floor(x * scale + 1e-9) if t.higher_is_better
            else math.ceil(x * scale - 1e-9)) / scale
    return f"{_number(edge, d)} {t.unit}"


def option_words(o: Option, catalog: Catalog) -> str:
    """An option in the words the proposal uses for a configuration, never its id: the
    advice reaches the batch summary workbook and the terminal."""
    gpu = catalog.gpus[o.gpu].name if o.gpu in catalog.gpus else o.gpu
    return (f"{o.tp} × {gpu}, {o.weight_precision.upper()} weights, "
            f"{o.kv_precision.upper()} KV cache")


def advice(w: Workload, model: Model, options: Sequence[Option], catalog: Catalog) -> str:
    """Why no option is recommended and what to change, naming the stated target(s) no
    option meets and the best each reaches."""
    if not options:
        return ("No configuration to try: the tensor-parallel degrees listed in "
                "hardware.tensor_parallel exceed what every listed GPU's platform allows (GPUs per "
                "node and the GPU's own limit). Allow a smaller tensor-parallel degree or another "
                "GPU.")
    fitting = [o for o in options if _f(o, "max_sequences_by_memory") >= 1]
    if not fitting:
        smallest = min(_f(o, "weights_gb") for o in options)
        biggest = max(_f(o, "usable_memory_gb") for o in options)
        return (f"{model.name} does not fit on any single node tried: the smallest weights are "
                f"{smallest:,.0f} GB against at most {biggest:,.0f} GB usable by one replica within a node. "
                "Use a lower precision (FP8, INT4, FP4), a GPU with more memory (H200, B200, "
                "MI300X), or multi-node tensor/pipeline parallelism (“How fast does it serve?”, "
                "'When the model is too big').")
    missed = [t for t in _targets(w, fitting[0]) if not any(t.met(o) for o in fitting)]
    if not missed:
        # each target alone is met somewhere, never all on one option: the nearest miss
        near = max(fitting, key=lambda o: _f(o, "bandwidth_ceiling_tokens_per_s"))
        return (f"No option meets all the targets at once, though each is met by some option. "
                f"The fastest, {option_words(near, catalog)}: {near.reason}. Relax one of the "
                f"targets, or {_ELSE}.")
    parts, relax = [], []
    for t in missed:
        pick = max if t.higher_is_better else min
        best = pick(fitting, key=t.value)
        x = t.value(best)
        parts.append(f"{t.words}: the best is {_best_words(t, x)} "
                     f"({option_words(best, catalog)}, one request at a time)")
        if t.key == "response_time_s" and t.higher_is_better:
            relax.append(f"response_time_s so that output_tokens / response_time_s is at most "
                         f"{_relaxed(t, x)} per user")
        else:
            relax.append(f"{t.key} to at {'most' if t.higher_is_better else 'least'} "
                         f"{_relaxed(t, x)}")
    return (f"No option meets {'; nor '.join(parts)}. Relax {' and '.join(relax)}, or "
            f"{_ELSE}.")
