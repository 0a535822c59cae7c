"""Disaggregated prefill/decode options (xPyD, issue 23 item 1): x prefill replicas of one
layout feed y decode replicas of another, on the same GPU, platform and precisions.

An xPyD option is evaluated by the calculation list like any option, with its decode layout
as the option's own and the prefill layout stated as its inputs (``disagg_*``): the decode
replicas prefill nothing and their batch has no first-token limit (a whole-answer target
limits it, leaving the prefill queue its p95 wait: ``disagg_batch_by_e2e_p95``); the prefill
replicas' count, their queue's wait, the move of a prompt's cache and the first token are
the list's ``XPYD_CALCULATIONS`` (model/calculations/disagg.py); the prefill GPUs join the
option's.

The search offers it where the platform states its network per GPU (the caches move over it
between nodes; inside one NVLink domain, e.g. an NVL72 rack, over the scale-up link), for a
generating workload of a mixture-of-experts model (the only kind the disaggregated factor
was fitted on: DeepSeek-R1 runs), unless ``policy.disaggregated: never``. Its first-token and
whole-answer percentiles are its prefill pool's queue (the aggregated replica's exponential
tail at the pool's utilisation), counted for each stated target (disagg.py). It is flagged as
resting on a fitted factor (docs/calibration.md, "Disaggregated prefill/decode") and wins
only when it costs less at the targets. This module chooses inputs only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache

from ..inputs.schema import Requirements
from ..inputs.schema_workload import Workload
from ..model.catalog import Catalog, Model
from ..model.expr import Value
from .evaluate import Choice
from .fidelity_disagg import _figure, _transfer

__all__ = ["DISAGG_GAP", "PREFILL_FIGURES", "offered", "pairs", "xpyd_inputs"]

DISAGG_GAP = ("disaggregated serving: the prefill replicas' time rests on one factor fitted "
              "on published runs (median error 22 %)")


# The option inputs of an xPyD option that are its prefill layout's calculations at the
# workload's inputs as sized (not stated facts): a workbook edit of what those read needs a
# re-run (documents/workbook/rerun_check.py reads this map).
PREFILL_FIGURES = {"disagg_prefill_ms_per_token": "prefill_ms_per_token",
                   "disagg_prefill_ms": "prefill_ms"}


def offered(req: Requirements, w: Workload, model: Model, catalog: Catalog,
            choice: Choice) -> bool:
    """Whether xPyD is tried for this workload on this option's platform."""
    return (req.policy.disaggregated == "auto" and w.kind == "generate" and model.experts > 0
            and w.measured is None and choice.prefill is None
            and catalog.platforms[choice.platform].scaleout_gb_s is not None)


def _gpus(choice: Choice) -> int:
    return _replica_gpus(choice.tp, choice.pp)


@cache
def _replica_gpus(tp: int, pp: int) -> int:
    # the figure reads nothing but these: worked out once per layout, not three times per
    # pair (a 50-workload account has ~15,000 pairs)
    return int(_figure("disagg_pool_gpus", {}, replicas_given=1, tp_given=tp, pp_given=pp))


def xpyd_inputs(catalog: Catalog, prefill: Choice, prefill_env: Mapping[str, Value],
                decode: Choice) -> dict[str, float]:
    """The option inputs that make ``decode`` the decode replicas of an xPyD option whose
    prefill replicas run ``prefill`` (evaluated as ``prefill_env``)."""
    link, efficiency = _transfer(catalog, decode, _gpus(prefill), _gpus(decode))
    out = {"disagg_prefill_gpus": float(_gpus(prefill))}
    for name, calc in PREFILL_FIGURES.items():
        value = prefill_env[calc]
        assert isinstance(value, float)
        out[name] = value
    return out | {"disagg_kv_link_gb_s": float(link), "disagg_kv_link_efficiency": efficiency}


def pairs(req: Requirements, w: Workload, model: Model, catalog: Catalog,
          evaluated: Sequence[tuple[Choice, Mapping[str, Value], str]]
          ) -> list[tuple[Choice, dict[str, float]]]:
    """Every xPyD option of the evaluated aggregated layouts ((choice, values, rejection
    code)): a prefill layout that holds the weights and one prompt's cache, paired with every
    layout of the same GPU, platform and precisions as the decode replicas; each with the
    inputs that state it."""
    prefill = [(c, env) for c, env, code in evaluated
               if code not in ("weights", "kv") and offered(req, w, model, catalog, c)]
    decode: dict[tuple[str, str, str, str], list[Choice]] = {}  # in evaluation order
    for d, _, _ in evaluated:
        if d.prefill is None:
            decode.setdefault((d.gpu, d.platform, d.weight_precision, d.kv_precision),
                              []).append(d)
    out = []
    for p, env in prefill:
        for d in decode.get((p.gpu, p.platform, p.weight_precision, p.kv_precision), ()):
            out.append((replace(d, prefill=(p.tp, p.ep, p.adp)),
                        xpyd_inputs(catalog, p, env, d)))
    return out
