"""What happened to one account in a batch: a row of summary.xlsx and batch.json.

Its own module so that the batch, which fills it, and the summary, which prints it, do not
import each other."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Outcome:
    """What happened to one account (also a row of summary.xlsx / batch.json)."""

    file: str
    stem: str
    status: str = "pending"  # ok | skipped | invalid input | infeasible | error
    message: str = ""
    account: str = ""
    recommendations: list[str] = field(default_factory=list)
    gpus: int = 0
    nodes: int = 0
    capex: float = 0.0
    annual_cost_onprem: float = 0.0
    annual_cost_cloud: float = 0.0
    cost_per_million_tokens_onprem: float = 0.0
    cost_per_million_tokens_cloud: float = 0.0
    currency: str = ""
    outputs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status not in ("ok", "skipped")
