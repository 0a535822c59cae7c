"""``llmsizer fidelity`` for embedding and reranking rows (tests/data/embedding_points.csv):
published encoder throughputs predicted with the retrieval calculations
(:mod:`llmsizer.model.calculations.retrieval`), the same rows the proposal sizes with.

A row names a model (an embedders.yaml Hugging Face id or name), a GPU (a gpus.yaml label),
the sequences of one batch and the tokens of one sequence. Where the table's own label names
no catalog entry, ``catalog_model`` / ``catalog_gpu`` give the entry of the same shape (BERT
Large = bge-large-en-v1.5's BertModel; an A100 40GB whose form factor the table omits = the
40 GB A100 of the same 16-bit peak), and the notes say why. The retrieval list is evaluated
as for an offline corpus whose largest batch is the row's (``encode_max_batch_tokens`` =
sequences x tokens), so its full-batch rate is the row's prediction:

- ``forward pass only`` rows (inputs already tokenised on the GPU) are the GPU rate
  (``gpu_tokens_per_s_full``);
- server rows (``host_cores`` given) pass through the host's tokeniser too, so the
  prediction is the replica's corpus rate (``replica_tokens_per_s_corpus``: the lower of
  the GPU and the tokeniser ceiling on that many cores). A server batches up to its own
  limit: the row's batch capped by the catalog's ``encode_max_batch_tokens``.

Every row's engine label goes to an encoder engine class (embedders.yaml
``encoder_engines``); the class's constants predict it. A fit gives each class with at least
``MIN_CLASS_ROWS`` rows its own pair and the rest the pair fitted on every row.

Measured values become tokens per second: ``sequences_per_s`` x tokens per sequence,
``requests_per_s`` x sequences per request x tokens per sequence, or sequences x tokens per
``batch_latency_ms`` (the mean time of one batch). FP32 rows are skipped:
the model sizes 16-bit weights on the 16-bit peak.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median

import click

from ..inputs.benchdata import check_regular
from ..model.calculations.retrieval import RETRIEVAL_INPUTS, retrieval_program
from ..model.catalog import Catalog, LabelIndex, load_catalog
from ..model.expr import Value

COLUMNS = ("source", "model", "catalog_model", "gpu", "catalog_gpu", "gpu_count", "engine",
           "precision", "batch_sequences", "seq_tokens", "host_cores", "scenario", "metric",
           "value", "unit", "notes")
METRICS = ("sequences_per_s", "requests_per_s", "batch_latency_ms")
# the constants a fit may change (the others keep their catalog values)
FITTED = ("mfu_encode", "encode_batch_overhead_ms")  # per engine class


@dataclass(frozen=True)
class EmbedCase:
    """One interpretable row: its catalog ids, batch shape and measured tokens per second."""

    row: int
    source: str
    model: str
    gpu: str
    engine: str
    engine_class: str
    batch_sequences: float
    seq_tokens: float
    host_cores: float | None
    measured: float


@dataclass(frozen=True)
class EmbedResult:
    case: EmbedCase
    predicted: float

    @property
    def error(self) -> float:
        return self.predicted / self.case.measured - 1


def is_embedding_file(path: str | Path) -> bool:
    """True when the CSV has this module's columns (``batch_sequences``, ``seq_tokens``).
    Only a regular file is looked at, and only its first 64 kB: a device or a pipe is left to
    the measured-results reader, which refuses it by name (issue 25, F18)."""
    p = Path(path)
    try:
        if not p.is_file():
            return False
        with p.open("rb") as f:
            head = f.read(64_000)
    except OSError:
        return False
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    header = next(csv.reader([first]), [])
    return "batch_sequences" in header and "seq_tokens" in header


def _embedder_id(label: str, catalog: Catalog) -> str | None:
    want = label.strip().lower()
    return next((eid for eid, e in catalog.embedders.items()
                 if want in (eid, e.name.lower(), e.hf_id.lower())), None)


def interpret(row: int, raw: Mapping[str, str], catalog: Catalog, labels: LabelIndex
              ) -> EmbedCase | list[str]:
    """The row as a case, or every reason it cannot be predicted."""
    reasons = []
    model_label = raw.get("catalog_model", "").strip() or raw["model"]
    model = _embedder_id(model_label, catalog)
    if model is None:
        reasons.append(f"model {model_label!r} is not in the embedding catalog")
    gpu_label = raw.get("catalog_gpu", "").strip()
    gpu = (gpu_label if gpu_label in catalog.gpus else None) if gpu_label else labels.gpu(raw["gpu"])
    if gpu is None:
        reasons.append(f"GPU {gpu_label or raw['gpu']!r} is not in the GPU catalog")
    if "fp32" in raw["precision"].lower():
        reasons.append("FP32 weights: the model sizes 16-bit weights on the 16-bit peak")
    if raw["metric"] not in METRICS:
        reasons.append(f"metric {raw['metric']!r} is not one of {', '.join(METRICS)}")
    if (raw.get("gpu_count") or "1").strip() != "1":
        reasons.append("more than one GPU: a retrieval replica is one GPU")
    engine = catalog.engine_class(raw["engine"])
    if engine is None:
        reasons.append(f"engine {raw['engine']!r} matches no encoder engine class")
    if reasons or model is None or gpu is None or engine is None:
        return reasons
    batch, seq, value = (float(raw["batch_sequences"]), float(raw["seq_tokens"]),
                         float(raw["value"]))
    if raw["metric"] == "batch_latency_ms":
        measured = batch * seq * 1000 / value
    else:
        measured = value * seq * (batch if raw["metric"] == "requests_per_s" else 1.0)
    cores = raw.get("host_cores", "").strip()
    return EmbedCase(row=row, source=raw["source"].split("@")[0], model=model, gpu=gpu,
                     engine=raw["engine"], engine_class=engine, batch_sequences=batch,
                     seq_tokens=seq,
                     host_cores=float(cores) if cores else None, measured=measured)


def load(path: str | Path, catalog: Catalog) -> tuple[list[EmbedCase], list[tuple[int, str]]]:
    """Every row of the file: the cases and the skipped rows with their reasons."""
    labels = LabelIndex(catalog)
    cases: list[EmbedCase] = []
    skipped: list[tuple[int, str]] = []
    check_regular(Path(path), str(path))  # the measured-results reader's size bound
    with open(path, newline="", encoding="utf-8") as f:
        for i, raw in enumerate(csv.DictReader(f), start=2):  # row 1 is the header
            got = interpret(i, raw, catalog, labels)
            if isinstance(got, EmbedCase):
                cases.append(got)
            else:
                skipped.append((i, "; ".join(got)))
    return cases, skipped


Constants = dict[str, float]
# per encoder engine class, the retrieval constants it predicts with
EngineTable = dict[str, Constants]
# a class with fewer rows than this has no fit of its own (two constants need several shapes)
MIN_CLASS_ROWS = 5


def catalog_constants(catalog: Catalog) -> Constants:
    """The retrieval constants as the catalog states them (the every-row fit)."""
    return {k: c.value for k, c in catalog.retrieval_constants.items()}


def catalog_table(catalog: Catalog) -> EngineTable:
    """Each engine class's constants as the catalog states them (its own or the fallback)."""
    base = catalog_constants(catalog)
    return {e: {**base, **catalog.engine_constants(e)} for e in catalog.encoder_engines}


def predict(case: EmbedCase, catalog: Catalog, constants: Mapping[str, float]) -> float:
    """Tokens per second for the row, by the retrieval calculation list."""
    m, g = catalog.embedders[case.model], catalog.gpus[case.gpu]
    batch_tokens = case.batch_sequences * case.seq_tokens
    server = case.host_cores is not None
    values: dict[str, Value] = {
        "params": m.params_total, "layers": float(m.layers), "hidden": float(m.hidden_size),
        "seq_tokens": case.seq_tokens, "sequences_per_request": 1.0,
        "request_rate_per_s": 0.0, "target_latency_p95_s": 0.0, "corpus_tokens": 0.0,
        "reindex_hours": 0.0, "weight_bytes": 2.0, "gpu_tflops": g.bf16_tflops,
        "gpu_memory_gb": g.memory_gb, "gpus_per_node": 1.0, "headroom": 0.0,
        "survive_node_loss": 0.0, "gpu_memory_utilization": 0.9, "llm_free_gpus": 0.0,
        "llm_idle_cloud_gpus": 0.0, "llm_free_slots": 0.0, "llm_host_nodes": 0.0,
        "platform_sold_full": 0.0,
        **{k: float(v) for k, v in constants.items()},
    }
    values["encode_max_batch_tokens"] = (min(batch_tokens, constants["encode_max_batch_tokens"])
                                         if server else batch_tokens)
    if server:
        values["host_cores_per_gpu"] = float(case.host_cores or 0)
    assert {i.name for i in RETRIEVAL_INPUTS} <= set(values)
    retrieval_program()(values, {})
    return float(values["replica_tokens_per_s_corpus" if server else "gpu_tokens_per_s_full"])


def score(cases: Iterable[EmbedCase], catalog: Catalog,
          table: Mapping[str, Mapping[str, float]] | None = None) -> list[EmbedResult]:
    """Each case predicted with its engine class's constants (the catalog's by default)."""
    t = catalog_table(catalog) if table is None else table
    return [EmbedResult(c, predict(c, catalog, t[c.engine_class])) for c in cases]


def median_abs_error(results: Sequence[EmbedResult]) -> float:
    return median(abs(r.error) for r in results) if results else float("nan")


# the grid a fit searches: MFU 0.10-0.80 by 0.01, fixed time per batch 0-4 ms by 0.05 ms
MFU_GRID = tuple(round(0.10 + 0.01 * i, 2) for i in range(71))
OVERHEAD_GRID = tuple(round(0.05 * i, 2) for i in range(81))


def source_balanced_error(results: Sequence[EmbedResult]) -> float:
    """The mean over sources of each source's median |error|: every source counts once,
    however many rows its table has (one vendor's 120-row sweep must not outvote the rest)."""
    by: dict[str, list[EmbedResult]] = {}
    for r in results:
        by.setdefault(r.case.source, []).append(r)
    return sum(median_abs_error(rs) for rs in by.values()) / len(by) if by else float("nan")


def fit_pair(cases: Sequence[EmbedCase], catalog: Catalog) -> tuple[Constants, float]:
    """The (MFU, fixed time per batch) pair with the least source-balanced error on
    ``cases``, all predicted with that one pair (ties: the lower MFU, then the lower
    overhead); returns the constants and that error."""
    base = catalog_constants(catalog)
    best: tuple[float, Constants] | None = None
    for mfu in MFU_GRID:
        for overhead in OVERHEAD_GRID:
            k = {**base, "mfu_encode": mfu, "encode_batch_overhead_ms": overhead}
            err = source_balanced_error([EmbedResult(c, predict(c, catalog, k)) for c in cases])
            if best is None or err < best[0] - 1e-12:
                best = (err, k)
    assert best is not None
    return best[1], best[0]


def fit(cases: Sequence[EmbedCase], catalog: Catalog) -> tuple[EngineTable, list[str]]:
    """The pair fitted on every case (the fallback), then each engine class with at least
    ``MIN_CLASS_ROWS`` cases refitted on its own; returns the table and the classes that got
    a fit of their own."""
    every, _ = fit_pair(cases, catalog)
    table: EngineTable = {e: every for e in catalog.encoder_engines}
    own = []
    for e in catalog.encoder_engines:
        mine = [c for c in cases if c.engine_class == e]
        if len(mine) >= MIN_CLASS_ROWS:
            table[e], _ = fit_pair(mine, catalog)
            own.append(e)
    return table, own


def cross_validate(cases: Sequence[EmbedCase], catalog: Catalog, by: str
                   ) -> list[tuple[str, EngineTable, list[EmbedResult]]]:
    """Leave one group out (``by`` = "source" or "gpu"): fit on the other groups, predict
    the held-out one. A group alone in the data cannot be held out (nothing to fit on)."""
    groups = sorted({getattr(c, by) for c in cases})
    out = []
    for held in groups:
        train = [c for c in cases if getattr(c, by) != held]
        if not train:
            continue
        table, _ = fit(train, catalog)
        out.append((held, table, score([c for c in cases if getattr(c, by) == held], catalog,
                                       table)))
    return out


def _say(text: str) -> None:
    click.echo(text)


def run(path: str | Path, *, as_json: bool = False, summary_only: bool = False) -> int:
    """The CLI command for an embedding file: per-row predictions with the catalog's
    constants, the skipped rows with every reason, then the summary; the rows predicted."""
    catalog = load_catalog()
    cases, skipped = load(path, catalog)
    results = score(cases, catalog)
    summary = {"rows": len(cases) + len(skipped), "predicted": len(results),
               "skipped": len(skipped), "median_abs_error": median_abs_error(results),
               "sources": len({c.source for c in cases}), "gpus": len({c.gpu for c in cases})}
    # "catalog GPUs": an A100 80GB SXM and an A100 40GB are two entries but one chip
    if as_json:
        _say(json.dumps({"summary": summary, "rows": [
            {"row": r.case.row, "model": r.case.model, "gpu": r.case.gpu,
             "engine": r.case.engine, "engine_class": r.case.engine_class,
             "measured_tokens_per_s": r.case.measured,
             "predicted_tokens_per_s": r.predicted, "error": r.error} for r in results],
            "skipped": [{"row": i, "reason": why} for i, why in skipped]}, indent=2))
        return len(results)
    if not summary_only:
        _say(f"{'row':>4} {'model':18} {'gpu':9} {'engine':28} {'batch':>6} {'tokens':>7} "
             f"{'measured tok/s':>15} {'predicted':>12} {'error':>7}")
        for r in results:
            c = r.case
            _say(f"{c.row:>4} {c.model[:18]:18} {c.gpu[:9]:9} {c.engine[:28]:28} "
                 f"{c.batch_sequences:>6,.0f} {c.seq_tokens:>7,.0f} {c.measured:>15,.0f} "
                 f"{r.predicted:>12,.0f} {r.error:>+7.0%}")
        if skipped:
            _say(f"\n{len(skipped)} {'row' if len(skipped) == 1 else 'rows'} not interpreted (every reason):")
            for i, why in skipped:
                _say(f"  row {i}: {why}")  # as fidelity_report's list (review round 25)
        _say("")
    _say(f"Embedding throughput: {summary['predicted']} of {summary['rows']} rows predicted "
         f"({summary['sources']} sources, {summary['gpus']} catalog GPUs);\nmedian |error| "
         f"{summary['median_abs_error']:.0%} with the catalog's constants; median by engine "
         "class, GPU and source:")
    by: dict[tuple[str, str, str], list[EmbedResult]] = {}
    for r in results:
        source = "/".join(r.case.source.removeprefix("github:").split("/")[:2])
        by.setdefault((r.case.engine_class, r.case.gpu, source), []).append(r)
    for (engine, gpu, source), rs in sorted(by.items()):
        signed = median(r.error for r in rs)
        _say(f"  {engine:17} {gpu:14} {source[:26]:26} {len(rs):>3} rows, |error| "
             f"{median_abs_error(rs):>4.0%} (signed {signed:+.0%})")
    return len(results)
