"""The proposal's context: everything the templates may use (documented in docs/proposal.md),
assembled from one module per section of the proposal.

Numbers come only from the :class:`~llmsizer.sizing.results.Result`; the section modules
select, label and format them (one :class:`~.format.Formatter`, also used by the tests), and
the templates only lay them out. Charts are SVG from :mod:`llmsizer.documents.charts`,
inlined as ``data:`` images (text stays text, and nothing in a chart can reach the HTML).
"""

from __future__ import annotations

from typing import Any

from ...model.catalog import Catalog, load_catalog
from ...sizing.results import Result
from .alternatives import memory_svg, shown_headrooms
from .appendix import formula_context
from .assumptions import assumptions_context
from .bom import bom_context
from .debugger import debugger_context
from .deployment import deployment_context
from .format import Formatter
from .glossary import glossary_context
from .models import models_context
from .plan import plan_context
from .sensitivity import sensitivity_context
from .summary import confidence_total, cover_context, report_date, summary_context
from .tco import cost_svg, tco_context
from .views import SHORTLIST, WorkloadView
from .walkthrough import workload_view


def _uses(result: Result, views: list[WorkloadView]) -> frozenset[str]:
    """The glossary's ``only_when`` terms this proposal may print: disaggregated serving in
    the plan, attention data-parallel ranks in an option it lists (format.option_label),
    embedding and reranking servers in the plan, speculative decoding in a workload, GPUs
    bought that do not serve (format.gpu_split: on standby or idle)."""
    uses = {"disaggregated"} if any(p.prefill_replicas for p in result.plan.pools) else set()
    if result.plan.retrieval_groups:
        uses.add("retrieval")
    if any(w.inputs.get("spec_draft_tokens", 0) > 0 for w in result.workloads):
        uses.add("speculative")
    if any(float(a.option.values.get("adp", 1.0) or 1.0) > 1
           for wv in views for a in wv.alternatives):
        uses.add("data-parallel")
    if result.totals.gpus_standby or result.totals.gpus_idle or any(
            g.values.get("group_standby_gpus") or g.values.get("group_idle_gpus")
            for g in result.plan.node_groups) or any(
            r.shares_with for r in result.plan.retrieval_groups):
        # a retrieval group on another's servers is told as using "GPUs they leave idle"
        uses.add("standby-idle")
    return frozenset(uses)


def build_context(result: Result, catalog: Catalog | None = None,
                  detail: bool = False) -> dict[str, Any]:
    """Everything the templates may use (documented in docs/proposal.md); each section's
    module says which partial reads what. Only the detailed proposal (``detail``: `report
    --appendix`) draws the memory, throughput, break-even and tornado charts: the lean one
    leaves them out, and drawing them is a tenth of its CPU (docs/benchmarks.md)."""
    cat = catalog or load_catalog()
    fmt = Formatter(result.account.currency)
    views = [workload_view(result, i, cat, fmt, chart=detail)
             for i in range(len(result.workloads))]
    day = report_date()
    # one precision for every headroom the document shows (plan, alternatives, prose), as the
    # terminal and the web page show them
    dep = deployment_context(result, fmt)
    fmt.for_headrooms(shown_headrooms(result, cat))
    return {
        **cover_context(result, fmt, day),
        "workloads": views,
        **summary_context(result, views, cat),
        **dep,  # partials/deployment.html.j2
        **models_context(result, fmt),  # partials/models.html.j2
        **assumptions_context(result, views, cat, fmt),
        **formula_context(),
        "catalog_current": result.catalog_digest == cat.digest,
        "shortlist": SHORTLIST,  # alternatives per workload in the lean proposal
        "memory_chart": memory_svg(views, fmt) if detail else None,
        "cost_chart": cost_svg(views, result, fmt),
        **plan_context(result, cat),
        # costs: dated prices (stale ones flagged), break-even by load, sensitivity, confidence
        **tco_context(result, views, cat, fmt, day, charts=detail),
        **bom_context(result, fmt),  # partials/bom.html.j2
        **sensitivity_context(result, views, fmt, chart=detail),
        "confidence_total": confidence_total(result),
        **debugger_context(result, fmt),  # partials/debugger.html.j2
        **glossary_context(_uses(result, views)),
    }
