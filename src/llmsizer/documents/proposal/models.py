"""Model alternatives in the executive summary (templates/partials/models.html.j2): a workload
that lists 2 to 4 models gets them side by side (GPUs, cost, per-user speed, first token, model
size) with what the customer gives up or gains against the one recommended, and the reminder
that model quality is the customer's call. The figures are the engine's
(``Result.model_alternatives``); this module only words them."""

from __future__ import annotations

from typing import Any

from ...model.names import short_name
from ...sizing.results import ModelAlternative, ModelAlternatives, Result
from .format import Formatter, option_words

WAY = {"on_prem": "on-premises", "cloud": "in the cloud", "api": "through the hosted API"}

QUALITY = ("Which model answers the users better is the customer's call: this proposal sizes "
           "hardware for the stated load and speed, not answer quality. Try the alternatives on "
           "the customer's own tasks before deciding.")


def _size_words(row: ModelAlternative, rec: ModelAlternative, fmt: Formatter) -> str:
    """'a model 2.2 times the size (70.6 billion parameters against 32.5 billion)'."""
    ratio = row.params_total / rec.params_total
    if 0.95 <= ratio <= 1.05:
        size = "a model of about the same size"
    elif ratio > 1:
        size = f"a model {ratio:.1f} times the size"
    else:
        size = f"a model {1 / ratio:.1f} times smaller"
    return (f"{size} ({fmt.params(row.params_total)} parameters against "
            f"{fmt.params(rec.params_total)})")


def _trade(row: ModelAlternative, rec: ModelAlternative, fmt: Formatter) -> str:
    """What choosing ``row`` instead of the recommendation gains or gives up, in one sentence."""
    name = short_name(row.model_name)
    if not row.meets_targets:
        return (f"{name} ({fmt.params(row.params_total)} parameters) meets the targets on none "
                "of the configurations tried.")
    # a difference, not a sizing figure: both costs are the engine's
    cost = round(row.annual_cost - rec.annual_cost)
    gpus = row.gpus_purchased - rec.gpus_purchased
    money = (f"{fmt.money(abs(cost))} a year more" if cost > 0 else
             f"{fmt.money(abs(cost))} a year less" if cost < 0 else "the same cost a year")
    more = (f"{fmt.count_of(abs(gpus), 'GPU')} {'more' if gpus > 0 else 'fewer'}" if gpus
            else "the same number of GPUs")
    return (f"Choosing {name} instead gives {_size_words(row, rec, fmt)} for {money} and "
            f"{more} bought.")


def _table(t: ModelAlternatives, fmt: Formatter) -> dict[str, Any]:
    rec = next(r for r in t.alternatives if r.chosen)
    rows = []
    ttft_unit = fmt.ms_unit(r.ttft_ms for r in t.alternatives)  # one unit for the column
    for r in t.alternatives:
        rows.append({
            "chosen": r.chosen, "name": short_name(r.model_name),
            "params": fmt.params(r.params_total),
            "active": fmt.params(r.params_active) if r.params_active < r.params_total else "",
            "config": (option_words(r.gpu_name, r.tp, r.weight_precision, r.kv_precision)
                       if r.meets_targets and r.gpu_name and r.tp and r.weight_precision
                       and r.kv_precision else "none meets the targets"),
            "weights": fmt.gb(r.weights_gb) if r.weights_gb is not None else "—",
            "speed": fmt.tok_s(r.tokens_per_s_per_user) if r.tokens_per_s_per_user else "—",
            "ttft": fmt.ms(r.ttft_ms, ttft_unit) if r.ttft_ms is not None else "—",
            "gpus": fmt.count(r.gpus_purchased) if r.meets_targets else "—",
            "capex": fmt.money(r.capex) if r.meets_targets else "—",
            "annual": fmt.money(r.annual_cost) if r.meets_targets else "—",
        })
    if not rec.meets_targets:
        return {"workload": t.workload, "rows": rows, "trades": [],
                "lead": (f"None of the models meets the targets on the hardware tried; the rest "
                         f"of this proposal shows {short_name(rec.model_name)}, the first listed, "
                         "and what would have to change.")}
    lead = (f"{short_name(rec.model_name)} is recommended: {t.rule}. The plan, the walk-through "
            f"and the costs of this proposal use it; each row sizes the whole account with that "
            f"model, under the same load, targets and hardware, and is costed "
            f"{WAY.get(rec.way, 'as recommended')}.")
    return {"workload": t.workload, "rows": rows, "lead": lead,
            "trades": [_trade(r, rec, fmt) for r in t.alternatives if not r.chosen]}


def models_context(result: Result, fmt: Formatter) -> dict[str, Any]:
    """``model_choices``: per workload with alternatives, ``workload``, ``rows`` (formatted
    figures; ``chosen`` marks the recommendation), ``lead`` (the rule), ``trades`` (one sentence
    per other model); ``model_quality``: the sentence that leaves quality to the customer;
    ``model_others``: workload index -> the names of the models not chosen (requirements)."""
    return {"model_choices": [_table(t, fmt) for t in result.model_alternatives],
            "model_quality": QUALITY, "model_others": {
                t.workload_index: [short_name(a.model_name) for a in t.alternatives
                                   if not a.chosen] for t in result.model_alternatives}}
