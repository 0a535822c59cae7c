"""An xPyD option's size never jumps with the load: more load (concurrent users, a rate or
named users) never buys fewer GPUs, 1 % more load at most one more replica per pool beyond
its 1 % (and the tangent solve's one), and a tighter whole-answer target never fewer GPUs
but for one replica per pool where it switches the split's share.

Run on the engine's own rows for fixed prefill/decode pairs of two shipped accounts
(inputs/frontier-moe-rack.yaml, DeepSeek-R1 on GB300 NVL72; tests/data/frontier-kimi-p95.yaml,
Kimi K2), as the search evaluates them, with or without a whole-answer target, at headroom
0, 10 % and 25 %. Until the whole answer's split between the prefill queue and the decode
steps was chosen for cost (disagg.py, ``disagg_e2e_prefill_busy``), a stated rate just under
a whole number of prefill replicas took the decode pool from 320 to 15,632 GPUs for 1 % more
load, and concurrent users without headroom could leave the prefill pool 19 -> 71 replicas
(docs/queueing.md).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from support.hunting import property_settings

from llmsizer.inputs.loader import load_from_text
from llmsizer.model.catalog import load_catalog
from llmsizer.sizing.evaluate import Choice
from llmsizer.sizing.search import evaluate_pair, reason_for

ROOT = Path(__file__).resolve().parents[1]
CAT = load_catalog()
_NVL72 = ("gb300", "gb300-nvl72", "fp4", "fp8")
# account: (file, decode layout, prefill layout, the shipped load as users and as a rate
# (the option's own Little's law at the shipped load), the whole-answer targets tried (s))
ACCOUNTS: dict[str, tuple[Path, Choice, Choice, float, float, tuple[float, float]]] = {
    "rack": (ROOT / "inputs" / "frontier-moe-rack.yaml",
             Choice(*_NVL72, 16, ep=16, adp=16), Choice(*_NVL72, 8, ep=8, adp=8),
             4000, 124, (34.5, 45.0)),
    "kimi": (ROOT / "tests" / "data" / "frontier-kimi-p95.yaml",
             Choice(*_NVL72, 8, ep=8, adp=8), Choice(*_NVL72, 4, ep=4, adp=4),
             503, 30, (15.0, 25.0)),
}
SETTINGS = property_settings(25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _doc(account: str, form: str, load: float, headroom: float,
         e2e_s: float | None) -> dict[str, Any]:
    path, _d, _p, users, rate, _t = ACCOUNTS[account]
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    w = doc["workloads"][0]
    for k in ("concurrent_users", "requests_per_s"):
        w.pop(k, None)
    if form == "users":
        w["concurrent_users"] = max(1, math.ceil(users * load))
    elif form == "rate":
        w["requests_per_s"] = round(rate * load, 6)
    else:  # 60 requests an hour each, the busiest hour twice the average
        w.update(named_users=max(1, math.ceil(rate * load * 30)),
                 requests_per_user_per_hour=60, peak_to_average=2)
    if e2e_s is not None:
        w["targets"].pop("ttft_p95_s", None)
        w["targets"]["e2e_p95_s"] = e2e_s
    doc.setdefault("policy", {})["headroom"] = headroom
    return doc


def _pair(account: str, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The account's xPyD pair evaluated as the search evaluates it (None if rejected)."""
    _path, decode, prefill, *_ = ACCOUNTS[account]
    req = load_from_text(yaml.safe_dump(doc), "monotone.yaml", CAT).req
    env = evaluate_pair(req, CAT, decode, prefill)
    return None if reason_for(env)[1] else env


def _pools(env: dict[str, Any]) -> tuple[float, float, float]:
    """Prefill replicas, decode replicas and GPUs (both pools, spares included)."""
    prefill = float(env["disagg_prefill_replicas_for_load"]) + float(
        env["disagg_prefill_spare_replicas"])
    return prefill, float(env["replicas"]), float(env["gpus"])


_account = st.sampled_from(sorted(ACCOUNTS))
_form = st.sampled_from(["users", "rate", "named"])
_headroom = st.sampled_from([0.0, 0.1, 0.25])


@SETTINGS
@given(_account, _form, st.floats(0.1, 3.0), _headroom, st.booleans(), st.floats(0, 1),
       st.floats(0.001, 0.5))
def test_more_load_never_buys_fewer_gpus_and_one_percent_more_adds_at_most_a_replica(
        account: str, form: str, load: float, headroom: float, whole_answer: bool,
        where: float, more: float) -> None:
    """For a fixed pair: more load never fewer GPUs; 1 % more load at most 1 % more
    replicas in each pool + 2 (the count's rounding up and the tangent solve's one over the
    fewest, disagg.py), so the GPUs at most 1.5 x where each pool has 4 or more replicas
    (below that one replica is the step)."""
    lo_t, hi_t = ACCOUNTS[account][5]
    e2e = lo_t + where * (hi_t - lo_t) if whole_answer else None
    base = _pair(account, _doc(account, form, load, headroom, e2e))
    if base is None:
        return
    near = _pair(account, _doc(account, form, load * 1.01, headroom, e2e))
    far = _pair(account, _doc(account, form, load * (1 + more), headroom, e2e))
    b = _pools(base)
    for other in (near, far):
        assert other is not None  # a pair meeting the targets still meets them with more load
        assert _pools(other)[2] >= b[2]
    n = _pools(near)
    assert n[0] <= 1.01 * b[0] + 2 and n[1] <= 1.01 * b[1] + 2
    if min(b[0], b[1]) >= 4:
        assert n[2] <= 1.5 * b[2]


@SETTINGS
@given(_account, _form, st.floats(0.1, 3.0), _headroom, st.floats(0, 1),
       st.floats(0.001, 0.2))
def test_a_tighter_whole_answer_target_never_buys_fewer_gpus_but_a_switch_s_rounding(
        account: str, form: str, load: float, headroom: float, where: float,
        tighter: float) -> None:
    """A tighter whole-answer target leaves each split's decode batch no larger, so the
    cheapest split's GPUs per request/s never fall; the share is chosen on that continuous
    cost, and where a tighter target switches it the two splits cost the same before each
    pool's count is rounded up: the GPUs bought may then fall by at most one replica of
    each pool (measured: 2 of 2,460 steps of 40 targets, both at headroom 0, DeepSeek-R1
    on GB300 at 700 users: 320 -> 296 GPUs, 12 -> 11 prefill and 14 -> 13 decode
    replicas)."""
    lo_t, hi_t = ACCOUNTS[account][5]
    e2e = lo_t + where * (hi_t - lo_t)
    loose = _pair(account, _doc(account, form, load, headroom, e2e))
    tight = _pair(account, _doc(account, form, load, headroom, e2e * (1 - tighter)))
    if loose is None or tight is None:
        assert tight is None or loose is not None  # what meets a tighter target meets a looser
        return
    cheapest = {name: min(float(env[c]) for c in env if c.startswith("disagg_e2e_split_gpus_")
                          and not c.endswith("_first"))  # not the MoE first solve's copies
                for name, env in (("loose", loose), ("tight", tight))}
    assert cheapest["tight"] >= cheapest["loose"]
    step = float(loose["disagg_prefill_gpus"]) + float(loose["gpus_per_replica"])
    assert _pools(tight)[2] >= _pools(loose)[2] - step
