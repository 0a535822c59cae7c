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
