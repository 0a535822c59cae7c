"""What happened to one account in a batch: a row of summary.xlsx and batch.json.

Its own module so that the batch, which fills it, and the summary, which prints it, do not
import each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """What happened to one account (also a row of summary.xlsx / batch.json)."""

    file: str
    stem: str
    status: str = "pending"  # ok | skipped | invalid input | infeasible | error
    message: str = ""
    account: str = ""
    recommendations: list[str] = field(default_factory=list)

    gpus: int = 0  # GPUs bought (Totals.gpus_purchased), as the proposal's cover
    nodes: int = 0
    cloud_gpus_rented: int = 0
    capex: float = 0.0
    annual_cost_onprem: float = 0.0
    # None: a GPU of the account's plan has no cloud price (results Totals)
    annual_cost_cloud: float | None = 0.0
    cost_per_million_tokens_onprem: float = 0.0
    cost_per_million_tokens_cloud: float | None = 0.0
    currency: str = ""
    outputs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # what the file's checks doubt but size as written (a target in the other unit, a name's
    # quotes), each naming its file and line as `validate` prints it
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status not in ("ok", "skipped")

    def warnings_told(self, quiet: bool) -> str:
        """The account's input warnings under its batch line, one a line and indented (each
        names the file and line, escaped: it cannot pass for another account's line); with
        --quiet their count on the line itself."""
        from ..base.textsafe import printable

        n = len(self.warnings)
        if n and quiet:
            return f" ({n} input warning{'s' if n > 1 else ''}: see batch.json)"
        return "".join(f"\n    warning: {printable(w)}" for w in self.warnings)


def recommendation_words(name: str, recommended: str | None,
                         options: list[dict[str, Any]]) -> str:
    """A workload's recommendation as the proposal words it ("Chat: 2 × NVIDIA H100 SXM 80GB,
    FP8 weights, FP8 KV cache on Dell PowerEdge XE8640"), never its option id: with its
    layout beyond TP where the option's ``values`` give it (format.option_label: experts spread
    over GPUs, attention data-parallel, the prefill replicas of disaggregated serving; review
    round 21: a disaggregated recommendation read as a plain TP16 one)."""
    from ..documents.proposal.format import option_label
    from ..model.catalog import load_catalog
    from ..model.names import short_name

    o = next((x for x in options if x["id"] == recommended), None)
    if o is None:
        return f"{name}: no feasible option"
    cat = load_catalog()
    gpu = cat.gpus[o["gpu"]].name if o["gpu"] in cat.gpus else o["gpu"]
    plat = cat.platforms.get(o["platform"])
    words = option_label(gpu, o["tp"], o["weight_precision"], o["kv_precision"],
                         o.get("values") or {})
    return f"{name}: {words}" + (f" on {short_name(plat.name)}" if plat else "")


def _count(n: float, one: str, many: str) -> str:
    """``4 GPUs``, ``1 node``; a share of a pool shared with other workloads keeps one decimal
    (``1.5 GPUs``) so the rows still add up to the account's totals."""
    whole = abs(n - round(n)) < 0.05
    text = f"{round(n):,}" if whole else f"{n:,.1f}"
    return f"{text} {one if whole and round(n) == 1 else many}"


def _sizes(bought: float, nodes: float, rented: float | None, platform: str) -> str:
    from ..documents.proposal.bom import unit_word

    # the summary's "Nodes" column's word; an NVL72 platform's node is a rack, as the BOM says
    unit = "rack" if unit_word(platform) == "rack" else "node"
    words = f"{_count(bought, 'GPU', 'GPUs')} bought, {_count(nodes, unit, unit + 's')}"
    shared = any(abs(n - round(n)) >= 0.05 for n in (bought, nodes, rented or 0.0))
    if rented is not None:
        words += f"; {_count(rented, 'GPU', 'GPUs')} rented"
    return ("its share: " if shared else "") + words


def _platform_of(w: dict[str, Any]) -> str:
    o = next((x for x in w["options"] if x["id"] == w["recommended"]), None)
    return str(o["platform"]) if o else ""


def account_recommendations(doc: dict[str, Any]) -> list[str]:
    """Every recommended workload of an account as the proposal words it, the embed and
    rerank ones included, each with its part of the plan: GPUs bought and nodes (its share of
    a shared pool, the plan's per-workload rows), and the GPUs rented where the cloud is
    recommended, so the rows add up to the account's totals (review round 25: Wide World's
    summary listed its assistant alone beside the 16 GPUs and 3 nodes of all three).
    ``doc`` is the results document (Result.to_json's shape)."""
    from ..model.catalog import load_catalog
    from ..model.names import short_name

    plan = doc.get("plan") or {}
    rents = (doc.get("deployment") or {}).get("recommended") == "cloud"
    shares: dict[int, dict[str, float]] = {}
    for pool in plan.get("pools") or []:
        for i, s in zip(pool.get("workload_indices") or [], pool.get("shares") or [],
                        strict=False):
            shares[i] = s
    out = []
    for i, w in enumerate(doc.get("workloads") or []):
        words = recommendation_words(w["name"], w["recommended"], w["options"])
        s = shares.get(i)
        if w["recommended"] is not None and s is not None:
            words += " — " + _sizes(s.get("plan_gpus_purchased", 0.0), s.get("plan_nodes", 0.0),
                                   s.get("plan_cloud_gpus_rented", 0.0) if rents else None,
                                   _platform_of(w))
        out.append(words)
    groups = {g["workload"]: g for g in plan.get("retrieval_groups") or []}
    cat = load_catalog()
    for w in doc.get("retrieval") or []:
        g = groups.get(w["name"])
        if w.get("recommended") is None or g is None:
            out.append(f"{w['name']}: no feasible option")
            continue
        gpu = cat.gpus[g["gpu"]].name if g["gpu"] in cat.gpus else g["gpu"]
        plat = cat.platforms.get(g["platform"])
        replicas = int(g.get("replicas", 0))
        words = (f"{w['name']}: {replicas} × {gpu}"
                 + (f" on {short_name(plat.name)}" if plat else ""))
        if g.get("shares_with"):
            words += " (on idle GPUs of servers counted above)"
        words += " — " + _sizes(g.get("gpus_purchased", 0), g.get("nodes", 0),
                               g.get("cloud_gpus", 0) if rents else None, g["platform"])
        out.append(words)
    return out
