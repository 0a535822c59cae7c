"""Review round 22, found by the sizing review (tests/test_review_sizing_r22.py's accounts):

- Ledgerline rents on demand, yet its proposal said "confirm it with a benchmark before
  buying": a rented or hosted recommendation is committed to, not bought.
- The university's overnight batch job has only a throughput target (1,500 tok/s for 64
  streams); its summary line gave the users and the configuration but not the target it is
  sized for.
"""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from llmsizer.documents.proposal.render import render_html
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

DATA = Path(__file__).parent / "data"


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]*>", " ", html)).replace("\u00a0", " ").split())


def test_a_rented_recommendation_is_benchmarked_before_committing_not_buying() -> None:
    result = size(load(DATA / "usd-ondemand-mtp-r22.yaml"))
    assert result.deployment is not None and result.deployment.recommended == "cloud"
    text = _text(render_html(result))
    assert "before buying" not in text
    assert "before committing" in text


def test_a_bought_recommendation_still_says_before_buying() -> None:
    result = size(load(DATA / "gbp-university-r22.yaml"))
    assert result.deployment is None or result.deployment.recommended == "on_prem"
    assert "before buying" in _text(render_html(result))


def test_a_throughput_target_is_in_its_workloads_summary_line() -> None:
    """The batch job's file: 64 streams, targets.system_tokens_per_s 1500."""
    text = _text(render_html(size(load(DATA / "gbp-university-r22.yaml"))))
    assert ("Transcript summarisation (overnight batch) 64 users of Llama 3.3 70B, "
            "≥ 1,500 tok/s in all:") in text
