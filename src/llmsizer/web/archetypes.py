"""The quick start: the source article's workload archetypes ("GenAI Physics, Capacity
Planning, and Throughput Estimation", its Golden Defaults table) as prefilled requirements.

The article gives, per archetype, the batch, the context and the KV precision: chat API
8-16 at 4K with FP8; RAG / agent 16-32 at 32K with FP8; batch 64-256 at 8K with INT4 / FP8.
The batch becomes the engine's cap (the top of the range), the context the KV reserved per
request, the KV precision the precisions tried. What the article does not give (the model,
the users, how the context splits into prompt and answer, the targets) is a starting point
the user is expected to change; the first-token target is the article's "High TTFT (>2
seconds)" line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Archetype:
    key: str
    title: str
    goal: str  # the article's words
    batch: str  # the article's range, as shown
    workload: dict[str, Any]
    max_batch: int
    weight_precisions: tuple[str, ...]
    kv_precisions: tuple[str, ...]


ARCHETYPES = (
    Archetype("chat", "Chat API", "Keep ITL low (human reading speed)", "8–16",
              {"name": "Chat API", "model": "llama-3.1-70b", "concurrent_users": 200,
               "prompt_tokens": 3000, "output_tokens": 500, "max_context_tokens": 4096,
               "targets": {"tokens_per_s_per_user": 20, "ttft_s": 2}},
              16, ("fp8",), ("fp8",)),
    Archetype("rag", "RAG / agent", "Optimize TTFT (fast response)", "16–32",
              {"name": "RAG agent", "model": "llama-3.1-70b", "concurrent_users": 100,
               "prompt_tokens": 24000, "output_tokens": 800, "max_context_tokens": 32768,
               "prefix_cache_hit": 0.3, "targets": {"tokens_per_s_per_user": 20, "ttft_s": 2}},
              32, ("fp8",), ("fp8",)),
    Archetype("batch", "Batch", "Max throughput (ignore latency)", "64–256",
              {"name": "Batch jobs", "model": "llama-3.1-8b", "concurrent_users": 256,
               "prompt_tokens": 6000, "output_tokens": 1000, "max_context_tokens": 8192,
               "targets": {"system_tokens_per_s": 20000}},
              256, ("fp8", "int4"), ("fp8",)),
)
BY_KEY = {a.key: a for a in ARCHETYPES}


def requirements(key: str) -> dict[str, Any]:
    """A new account with one workload of the archetype ``key``."""
    a = BY_KEY[key]
    return {
        "schema_version": 1,
        "account": {"name": "New account", "currency": "USD"},
        "workloads": [dict(a.workload)],
        "hardware": {"weight_precisions": list(a.weight_precisions),
                     "kv_precisions": list(a.kv_precisions)},
        "policy": {"max_batch_per_replica": a.max_batch},
    }


def workload(key: str) -> dict[str, Any]:
    return dict(BY_KEY[key].workload)
