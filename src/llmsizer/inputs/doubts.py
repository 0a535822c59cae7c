"""Latency targets inside their allowed range but doubtful: most likely a time typed in the
other unit (`ttft_s: 45` for 45 ms). Told as warnings, never refused: a long-prompt or batch
workload may mean them. The hard ranges are the schema's (:mod:`.schema_workload`).

Typical targets: first token 0.2–10 s, gaps between tokens 10–200 ms (the MLPerf Inference
p99 limits, model/catalogs/mlperf_datasets.yaml: first token 2 s for Llama 2 70B, 6 s for
Llama 3.1 405B, 0.45 s interactive; between tokens 200 ms, 40 ms interactive)."""

from __future__ import annotations

from dataclasses import dataclass

from .schema import Requirements

# First-token wait that a short prompt does not explain: 20 s plus a prefill of 2,000 prompt
# tokens/s, several times slower than any GPU prefills (a 128k-token prompt may ask for 60 s).
TTFT_DOUBT_S = 20.0
TTFT_DOUBT_PREFILL_TOKENS_PER_S = 2000.0
# Gaps between tokens beyond 500 ms stream under 2 tokens/s, slower than anyone reads.
ITL_DOUBT_MS = 500.0
# A whole answer slower than 2 tokens/s on average (the same reading speed).
ANSWER_DOUBT_TOKENS_PER_S = 2.0
# Embed/rerank: a query waits 0.05–1 s for its vectors or scores; beyond 5 s it is not a query.
RETRIEVAL_DOUBT_S = 5.0

_TTFT = ("ttft_s", "ttft_p50_s", "ttft_p90_s", "ttft_p95_s", "ttft_p99_s")
_ITL = ("itl_p50_ms", "itl_p90_ms", "itl_p95_ms", "itl_p99_ms")
_ANSWER = ("response_time_s", "e2e_p95_s")


@dataclass(frozen=True)
class Doubt:
    """One doubtful target: ``text`` in the customer's words (the PDF prints it), ``fix``
    the line to write if the other unit was meant (the command line adds it)."""

    workload: int  # index in the file's workloads
    name: str  # the workload's name
    key: str  # the key under targets
    text: str
    fix: str


def _n(x: float) -> str:
    return f"{x:,.3g}" if x < 1000 else f"{x:,.0f}"


def target_doubts(req: Requirements) -> list[Doubt]:
    """Every doubtful latency target of the file, in workload then key order."""
    found: list[Doubt] = []
    for i, w in enumerate(req.workloads):
        t = w.targets
        if t is None:
            continue
        for key in _TTFT:
            value = getattr(t, key)
            limit = TTFT_DOUBT_S + (w.prompt_tokens or 0) / TTFT_DOUBT_PREFILL_TOKENS_PER_S
            if value is not None and value > limit:
                prompt = f" for a {w.prompt_tokens:,}-token prompt" if w.prompt_tokens else ""
                found.append(Doubt(
                    i, w.name, key,
                    f"{_n(value)} s before the first token is far beyond the usual 0.2–10 s"
                    f"{prompt}: check it was not meant in milliseconds ({_n(value / 1000)} s)",
                    f"{key}: {value / 1000:g}"))
        for key in _ITL:
            value = getattr(t, key)
            if value is not None and value > ITL_DOUBT_MS:
                found.append(Doubt(
                    i, w.name, key,
                    f"{_n(value)} ms between tokens streams {_n(1000 / value)} tokens/s, "
                    "slower than anyone reads (usual targets: 10–200 ms); check the unit "
                    "(milliseconds)", f"{key}: {value / 1000:g}" if value >= 1000 else ""))
        for key in _ANSWER:
            value = getattr(t, key)
            if value is None or not w.output_tokens:
                continue
            speed = w.output_tokens / value
            if speed < ANSWER_DOUBT_TOKENS_PER_S:
                found.append(Doubt(
                    i, w.name, key,
                    f"{_n(value)} s for a {w.output_tokens:,}-token answer is {_n(speed)} "
                    "tokens/s, slower than anyone reads: check it was not meant in "
                    f"milliseconds ({_n(value / 1000)} s)", f"{key}: {value / 1000:g}"))
        value = t.latency_p95_s
        if value is not None and value > RETRIEVAL_DOUBT_S:
            found.append(Doubt(
                i, w.name, "latency_p95_s",
                f"{_n(value)} s for a query's vectors or scores is far beyond the usual "
                f"0.05–1 s: check it was not meant in milliseconds ({_n(value / 1000)} s)",
                f"latency_p95_s: {value / 1000:g}"))
    return found
