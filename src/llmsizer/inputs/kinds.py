"""Workload kinds (issue 24): which keys a generating, embed or rerank workload takes, and the
checks of an embed or rerank workload, kept beside the schema (inputs/schema.py) that calls
them so the schema module stays within its size."""

from __future__ import annotations

from typing import Any

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

def keys_of_its_kind(data: Any, defaults: dict[str, Any]) -> Any:
    """A key of another kind of workload gets a message naming the kind it belongs to; one at
    its default (``defaults``) is no statement: the results' embedded requirements, which a
    workbook re-read validates again, state every field with its default."""
    if not isinstance(data, dict):
        return data
    kind = data.get("kind", "generate")
    if kind not in _TAKES:
        return data  # the Literal's own message lists the kinds
    if kind == "generate" and data.get("engine") is not None:
        raise ValueError("engine is for kind: embed and kind: rerank workloads (the encoder's "
                         "serving engine); this workload is kind: generate, which takes "
                         f"{_TAKES['generate']} (delete engine)")
    owners = {"generate": _GENERATE_ONLY, "embed": _EMBED_ONLY, "rerank": _RERANK_ONLY}
    for other, keys in owners.items():
        if other == kind:
            continue
        for key in keys:
            if data.get(key, defaults.get(key)) != defaults.get(key):
                raise ValueError(
                    f"{key} is for kind: {other} workloads; this workload is kind: {kind}, "
                    f"which takes {_TAKES[kind]} (delete {key}, or set kind: {other})")
    return data

def retrieval_consistent(self: Any) -> None:
    """Embed: an online load with its shape and latency, a corpus with its window, or both.
    Rerank: an online load, its shape and latency. Load forms as for generating ones."""
    online = self.requests_per_s is not None or self.named_users is not None
    if self.requests_per_s is not None and self.named_users is not None:
        raise ValueError("state the load one way: requests_per_s (peak arrivals per second) "
                         "or named_users with requests_per_user_per_hour and "
                         "peak_to_average; found both")
    t = self.targets
    if t is not None:
        wrong = [k for k in _GENERATE_TARGETS if getattr(t, k) is not None]
        if wrong:
            raise ValueError(f"targets.{wrong[0]} is for kind: generate workloads; a kind: "
                             f"{self.kind} workload states targets.latency_p95_s")
    latency = t is not None and t.latency_p95_s is not None
    if self.kind == "rerank":
        need = [k for k, given in (("requests_per_s or named_users", online),
                                   ("candidates_per_request",
                                    self.candidates_per_request is not None),
                                   ("tokens_per_pair", self.tokens_per_pair is not None),
                                   ("targets.latency_p95_s", latency)) if not given]
        if need:
            raise ValueError(f"a kind: rerank workload needs {', '.join(need)} "
                             "(e.g. requests_per_s: 20, candidates_per_request: 50, "
                             "tokens_per_pair: 320, targets: {latency_p95_s: 0.2})")
        return
    corpus = (self.corpus_tokens is not None, self.reindex_within_hours is not None)
    if corpus[0] != corpus[1]:
        raise ValueError("corpus_tokens and reindex_within_hours go together: the corpus "
                         "and the time to embed it again")
    if not online and not corpus[0]:
        raise ValueError("a kind: embed workload needs an online load (requests_per_s or "
                         "named_users, with tokens_per_request and targets.latency_p95_s), "
                         "a corpus (corpus_tokens and reindex_within_hours), or both")
    if online and (self.tokens_per_request is None or not latency):
        raise ValueError("an online embed load needs tokens_per_request and "
                         "targets.latency_p95_s too (e.g. tokens_per_request: 64, "
                         "targets: {latency_p95_s: 0.1})")
    if not online and (self.tokens_per_request is not None or latency):
        raise ValueError("tokens_per_request and targets.latency_p95_s describe online "
                         "requests: add requests_per_s (or named_users), or delete them")

def population_keys(self: Any) -> None:
    """The population keys go with named_users, and only with it."""
    population = ("requests_per_user_per_hour", "peak_to_average")
    if self.named_users is not None:
        missing = [n for n in population if getattr(self, n) is None]
        if missing:
            raise ValueError(f"named_users needs {' and '.join(missing)} too (e.g. "
                             "requests_per_user_per_hour: 6, peak_to_average: 3)")
    else:
        extra = [n for n in population if getattr(self, n) is not None]
        if extra:
            raise ValueError(f"{' and '.join(extra)} describe a user population: use them "
                             "with named_users (or delete them)")
