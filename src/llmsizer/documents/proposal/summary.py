"""The opening pages, cover.html.j2 and summary.html.j2 (templates/partials/), the running
head of every page, and the account-level facts that requirements.html.j2, headroom.html.j2
and risks.html.j2 read too: the date (from ``SOURCE_DATE_EPOCH`` when it is set, so that
renders are deterministic), which workloads are recommended, measured, at risk or infeasible,
the account's policy and totals, and the GPU count at both ends of the model's error."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...model.catalog import Catalog
from ...sizing.deployment import purchase_unpriced as unpriced_gpus
from ...sizing.results import Result, RetrievalWorkloadResult
from .format import Formatter, catalog_note, clip, proposal_words
from .views import WorkloadView


def report_date() -> dt.date:
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC).date()
    return dt.date.today()


def _first_per_model(views: Sequence[WorkloadView]) -> list[WorkloadView]:
    first: dict[str, WorkloadView] = {}
    for wv in views:
        first.setdefault(wv.w.model, wv)
    return list(first.values())


def confidence_total(result: Result) -> dict[str, int] | None:
    """The account's GPUs at both ends of the model's error: the same plan evaluated with
    every option's throughput at its group's p10 / p90 (plan.confidence_range). ``gpus``,
    ``low``, ``high``: GPUs bought (whole servers); ``rented``, ``rented_low``,
    ``rented_high``: GPUs rented in the cloud (whole instances), what a rented plan's range
    gives (review round 21: it had none)."""
    p = result.plan
    if p.gpus_purchased_if_throughput_low is None or p.gpus_purchased_if_throughput_high is None:
        return None
    ends = {"gpus": result.totals.gpus_purchased, "low": p.gpus_purchased_if_throughput_high,
            "high": p.gpus_purchased_if_throughput_low}
    if (p.cloud_gpus_rented_if_throughput_low is not None
            and p.cloud_gpus_rented_if_throughput_high is not None):
        ends |= {"rented": result.totals.cloud_gpus_rented,
                 "rented_low": p.cloud_gpus_rented_if_throughput_high,
                 "rented_high": p.cloud_gpus_rented_if_throughput_low}
    return ends


def cover_context(result: Result, fmt: Formatter, day: dt.date) -> dict[str, Any]:
    """``result``, ``account``, ``fmt`` and ``currency`` (every partial may read them), the
    date, and the account's name for the cover and for the running head."""
    return {
        "result": result,
        "account": result.account,
        "fmt": fmt,
        "currency": result.account.currency,
        "date": f"{day.day} {day:%B %Y}",
        "iso_date": day.isoformat(),
        "footer_name": clip(result.account.name, 70),
        "cover_name": clip(result.account.name, 160),
    }


# The requirements table's percentile targets: (input, label, unit), each a row where a
# workload states it (templates/partials/requirements.html.j2).
PERCENTILE_TARGETS: tuple[tuple[str, str, str], ...] = (
    *((f"target_ttft_p{q}_s", f"Target time to first token, p{q}", "s") for q in (50, 90, 95, 99)),
    *((f"target_itl_p{q}_ms", f"Target inter-token latency, p{q}", "ms") for q in (50, 90, 95, 99)),
    ("target_e2e_p95_s", "Target whole answer, p95", "s"),
)


@dataclass(frozen=True)
class UnsizedRetrieval:
    """An embed or rerank workload no candidate GPU serves: it has no node group, so the
    plan's retrieval table cannot show it and the summary and risks must say so instead."""

    name: str
    model_name: str
    kind_text: str  # "embedding" | "reranking"
    advice: str
    closest: str  # the nearest miss in words ("" = none to show)


def unsized_retrieval(w: RetrievalWorkloadResult, cat: Catalog) -> UnsizedRetrieval:
    advice = proposal_words(w.advice or "no candidate GPU meets the targets").rstrip(".") + "."
    missed = [o for o in w.options if not o.feasible and float(o.values.get("encoder_fits", 0)) == 1]
    closest = ""
    if missed:  # the lowest latency any GPU reaches, one request per batch
        o = min(missed, key=lambda o: float(o.values["latency_p95_s"]))
        g = cat.gpus.get(o.gpu)
        closest = (f"The fastest, {g.name if g else o.gpu}, answers in "
                   f"{Formatter.number(float(o.values['latency_p95_s']) * 1000, 0)} ms at the 95th "
                   f"percentile even one request at a time, against the "
                   f"{Formatter.number(float(o.values['target_latency_p95_s']) * 1000, 0)} ms target.")
    return UnsizedRetrieval(name=w.name, model_name=w.model_name,
                            kind_text="embedding" if w.kind == "embed" else "reranking",
                            advice=advice[:1].upper() + advice[1:], closest=closest)


@dataclass(frozen=True)
class RetrievalModel:
    """An embedding or reranking model of the account, for the assumptions' Models register
    and the risks' model list (review round 22: both named only the language models)."""

    name: str
    kind_text: str  # "embedding" | "reranking"
    workloads: tuple[str, ...]  # the embed or rerank workloads that run it
    sized: tuple[str, ...]  # those of them with a recommendation (in the plan)
    params_total: float | None  # None: not in the installed catalog
    layers: int | None
    hidden_size: int | None
    attention_heads: int | None
    max_sequence: int | None
    source: str
    engine: str  # the serving engine classes its sized workloads assume, in words


def retrieval_models(result: Result, cat: Catalog) -> list[RetrievalModel]:
    """One entry per embedding or reranking model, in workload order, with its catalog shape
    and source (catalogs/embedders.yaml) and the engine its recommended workloads assume."""
    seen: dict[str, list[RetrievalWorkloadResult]] = {}
    for w in result.retrieval:
        seen.setdefault(w.model, []).append(w)
    out = []
    for model, ws in seen.items():
        m = cat.embedders.get(model)
        sized = [w for w in ws if w.best is not None]
        engines = [cat.encoder_engines.get(w.engine) for w in sized]
        names = list(dict.fromkeys(e.name if e else w.engine
                                   for e, w in zip(engines, sized, strict=True)))
        out.append(RetrievalModel(
            name=ws[0].model_name,
            kind_text="embedding" if ws[0].kind == "embed" else "reranking",
            workloads=tuple(w.name for w in ws), sized=tuple(w.name for w in sized),
            params_total=m.params_total if m else None, layers=m.layers if m else None,
            hidden_size=m.hidden_size if m else None,
            attention_heads=m.attention_heads if m else None,
            max_sequence=m.max_sequence if m else None,
            source=catalog_note(m.source) if m else "not in the installed catalog",
            engine="; ".join(names)))
    return out


def purchase_unpriced(result: Result) -> list[str]:
    """GPU ids of the plan without a purchase price, in plan order: its capital and
    on-premises figures leave them out (the PDF's cover and cards, the workbook's Summary)."""
    return unpriced_gpus(result.workloads, result.retrieval, result.plan)


def summary_context(result: Result, views: Sequence[WorkloadView],
                    cat: Catalog) -> dict[str, Any]:
    """The workload lists and the account-level policy (``models``, one view per model, is
    the model table of the assumptions)."""
    return {
        "recommended": [wv for wv in views if wv.best is not None],
        # measured mode (docs/measured.md): benchmark-sized workloads, and those whose measured
        # throughput is over 25 % from the model's (a risk)
        "measured": [wv for wv in views if wv.w.mode == "measured"],
        "gap_risks": [wv for wv in views if wv.best is not None
                      and bool(wv.best.v.get("measured_gap_risk"))],
        "shape_risks": [wv for wv in views if wv.w.measured_warnings],
        # targets inside their range but doubtful (inputs/doubts.py), sized as written
        "target_doubts": result.input_warnings,
        "models": _first_per_model(views),
        "retrieval_models": retrieval_models(result, cat),
        "infeasible": [wv for wv in views if wv.best is None],
        "percentile_targets": PERCENTILE_TARGETS,
        "retrieval_unsized": [unsized_retrieval(w, cat) for w in result.retrieval
                              if w.best is None],
        "totals": result.totals,
        "policy": result.account_inputs,
        "n_plus_one": bool(result.account_inputs.get("survive_node_loss")),
    }
