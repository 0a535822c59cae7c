"""Workload kinds (issue 24): which keys a generating, embed or rerank workload takes, and the
checks of an embed or rerank workload; each check returns every finding (inputs/rules.py
says who reads them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.calculations.load import RATE_CALCULATIONS
from ..model.expr import evaluate

# Keys that only one kind of workload takes: a key of another kind is named in the message.
_GENERATE_ONLY = ("concurrent_users", "output_tokens", "prompt_tokens", "max_context_tokens",
                  "prefix_cache_hit", "measured")
_EMBED_ONLY = ("tokens_per_request", "corpus_tokens", "reindex_within_hours",
               "search_latency_s")
_RERANK_ONLY = ("candidates_per_request", "tokens_per_pair")
_GENERATE_TARGETS = ("tokens_per_s_per_user", "response_time_s", "ttft_s", "system_tokens_per_s")
_TAKES = {"generate": "prompt_tokens, output_tokens, a load and targets (tokens_per_s_per_user, "
                      "response_time_s or system_tokens_per_s)",
          "embed": "requests_per_s or named_users, tokens_per_request and targets.latency_p95_s "
                   "(online), and/or corpus_tokens and reindex_within_hours (offline)",
          "rerank": "requests_per_s or named_users, candidates_per_request, tokens_per_pair and "
                    "targets.latency_p95_s"}

def other_kinds_keys(kind: object) -> frozenset[str]:
    """The keys only another kind of workload takes (a generating workload: the embed and
    rerank keys and ``engine``): what an unknown key's "allowed here" leaves out (session 23:
    a chat workload's list named corpus_tokens and candidates_per_request)."""
    if not isinstance(kind, str) or kind not in _TAKES:
        return frozenset()
    owners = {"generate": _GENERATE_ONLY, "embed": _EMBED_ONLY, "rerank": _RERANK_ONLY}
    return frozenset(k for other, keys in owners.items() if other != kind for k in keys) | (
        {"engine"} if kind == "generate" else set())


def keys_of_its_kind(data: Mapping[str, Any], defaults: Mapping[str, Any]) -> list[str]:
    """A key of another kind of workload gets a message naming the kind it belongs to; one at
    its default (``defaults``) is no statement: the results' embedded requirements, which a
    workbook re-read validates again, state every field with its default."""
    kind = data.get("kind", "generate")
    if not isinstance(kind, str) or kind not in _TAKES:
        return []  # the Literal's own message lists the kinds
    found = []
    if kind == "generate" and data.get("engine") is not None:
        found.append("engine is for kind: embed and kind: rerank workloads (the encoder's "
                     "serving engine); this workload is kind: generate, which takes "
                     f"{_TAKES['generate']} (delete engine)")
    owners = {"generate": _GENERATE_ONLY, "embed": _EMBED_ONLY, "rerank": _RERANK_ONLY}
    for other, keys in owners.items():
        if other == kind:
            continue
        found += [f"{key} is for kind: {other} workloads; this workload is kind: {kind}, "
                  f"which takes {_TAKES[kind]} (delete {key}, or set kind: {other})"
                  for key in keys if data.get(key, defaults.get(key)) != defaults.get(key)]
    return found

def retrieval_consistent(w: Mapping[str, Any]) -> list[str]:
    """Embed: an online load with its shape and latency, a corpus with its window, or both.
    Rerank: an online load, its shape and latency. Load forms as for generating ones.
    ``w``: the workload's keys (inputs/rules.py)."""
    found = []
    given = {k for k, v in w.items() if v is not None}
    online = bool(given & {"requests_per_s", "named_users"})
    if {"requests_per_s", "named_users"} <= given:
        found.append("state the load exactly one way: requests_per_s (peak arrivals per "
                     "second) or named_users with requests_per_user_per_hour and "
                     "peak_to_average; found both")
    t = w.get("targets")
    t = t if isinstance(t, Mapping) else {}
    found += [f"targets.{k} is for kind: generate workloads; a kind: {w.get('kind')} "
              "workload states targets.latency_p95_s"
              for k in _GENERATE_TARGETS if t.get(k) is not None]
    latency = t.get("latency_p95_s") is not None
    if w.get("kind") == "rerank":
        need = [k for k, ok in (("requests_per_s or named_users", online),
                                ("candidates_per_request", "candidates_per_request" in given),
                                ("tokens_per_pair", "tokens_per_pair" in given),
                                ("targets.latency_p95_s", latency)) if not ok]
        if need:
            found.append(f"a kind: rerank workload needs {', '.join(need)} "
                         "(e.g. requests_per_s: 20, candidates_per_request: 50, "
                         "tokens_per_pair: 320, targets: {latency_p95_s: 0.2})")
        return found
    corpus = ("corpus_tokens" in given, "reindex_within_hours" in given)
    if corpus[0] != corpus[1]:
        found.append("corpus_tokens and reindex_within_hours go together: the corpus "
                     "and the time to embed it again")
    if not online and not any(corpus):
        found.append("a kind: embed workload needs an online load (requests_per_s or "
                     "named_users, with tokens_per_request and targets.latency_p95_s), "
                     "a corpus (corpus_tokens and reindex_within_hours), or both")
    elif online and ("tokens_per_request" not in given or not latency):
        found.append("an online embed load needs tokens_per_request and "
                     "targets.latency_p95_s too (e.g. tokens_per_request: 64, "
                     "targets: {latency_p95_s: 0.1})")
    elif not online and ("tokens_per_request" in given or latency):
        found.append("tokens_per_request and targets.latency_p95_s describe online "
                     "requests: add requests_per_s (or named_users), or delete them")
    return found

def population_keys(w: Mapping[str, Any]) -> list[str]:
    """The population keys go with named_users, and only with it."""
    population = ("requests_per_user_per_hour", "peak_to_average")
    if w.get("named_users") is not None:
        missing = [n for n in population if w.get(n) is None]
        if missing:
            return [f"named_users needs {' and '.join(missing)} too (e.g. "
                    "requests_per_user_per_hour: 6, peak_to_average: 3)"]
        return _population_rate(w)
    extra = [n for n in population if w.get(n) is not None]
    if extra:
        return [f"{' and '.join(extra)} describe a user population: use them "
                "with named_users (or delete them)"]
    return []


# the most a workload may state directly (schema: requests_per_s)
MAX_REQUESTS_PER_S = 1_000_000


def _population_rate(w: Mapping[str, Any]) -> list[str]:
    """A population whose peak rate is beyond what requests_per_s may state: each key is
    within its own range, but their product sized 712,466,573 GPUs (a per-day or per-month
    figure written as per hour)."""
    keys = ("named_users", "requests_per_user_per_hour", "peak_to_average")
    values = [w.get(k) for k in keys]
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(keys):
        return []  # the schema reports the key itself
    # the peak rate by the calculation list's own formula (queueing.py), as the sizing reads it
    load = dict(zip(keys, numbers, strict=True)) | {"requests_per_s": 0.0}
    rate = float(evaluate(RATE_CALCULATIONS[0].expr, load))
    if rate <= MAX_REQUESTS_PER_S:
        return []
    return [f"named_users x requests_per_user_per_hour x peak_to_average / 3600 = "
            f"{rate:,.0f} requests/s at peak, above the {MAX_REQUESTS_PER_S:,} that "
            "requests_per_s allows; check the figures (requests_per_user_per_hour is per user "
            "per hour, peak_to_average the busiest hour over the average)"]
