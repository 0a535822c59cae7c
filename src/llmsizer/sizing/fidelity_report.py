"""``llmsizer fidelity``'s output: the per-row table, the rows not interpreted with every
reason, the summary with coverage per scenario, and the ``--json`` document. The
predictions are :mod:`.fidelity`'s; this module only prints them."""

from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import click

from ..base.textsafe import terminal_text
from ..inputs.benchdata import BenchPoint, Skipped
from ..model.catalog import Catalog
from .fidelity import evaluate_file
from .fidelity_stats import RowResult, quantile, summarise


def _row_doc(r: RowResult) -> dict[str, object]:
    p = r.point
    return {"row": p.row, "model": p.model, "gpu": p.gpu, "gpu_count": p.gpu_count, "tp": p.tp,
            "pp": p.pp, "ep": p.ep, "adp": p.adp,
            "replicas": p.replicas, "weight_precision": p.weight_precision,
            "kv_precision": p.kv_precision, "isl": p.isl, "osl": p.osl,
            "concurrency": p.concurrency,
            "request_rate": None if p.request_rate is None or math.isinf(p.request_rate)
            else p.request_rate, "regime": p.regime, "engine": r.engine, "metric": p.metric,
            "statistic": p.statistic, "measured": p.value, "measured_tail": p.tail_value,
            "per_gpu": p.per_gpu, "random_lengths_from": p.random_lengths,
            "kv_assumption": p.kv_assumption,
            "predicted": r.predicted, "batch_per_replica": r.batch,
            "error": r.error, "source": p.source}


def document(path: str | Path, catalog: Catalog | None = None) -> dict[str, object]:
    """The ``--json`` document: summary, predicted rows and rows not interpreted."""
    return _document(path, *evaluate_file(path, catalog))


def _document(path: str | Path, results: list[RowResult], skipped: list[Skipped],
              n_rows: int) -> dict[str, object]:
    return {
        "file": str(path),
        "input_rows": n_rows,
        "error_definition": "predicted / measured - 1",
        "summary": [vars(s) for s in summarise(results)],
        "rows": [_row_doc(r) for r in results],
        "skipped": [{"row": s.row, "reason": s.reason, "reasons": list(s.reasons)}
                    for s in skipped],
    }


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def _parallel_text(p: BenchPoint) -> str:
    """tp8ep8a8x1: TP, then PP/EP/attention-DP where used, x replicas."""
    parts = [f"tp{p.tp}"] + [f"{name}{n}" for name, n in (("pp", p.pp), ("ep", p.ep), ("a", p.adp))
                             if n > 1]
    return "".join(parts) + f"x{p.replicas}"


def _reason_kind(reason: str) -> str:
    """A reason without its details: labels, a trailing remark, what follows a colon."""
    kind = re.sub(r" \(.*\)$", "", re.sub(r"'[^']*'", "'...'", reason))
    return kind.split(": ", 1)[0]


def _reason_kinds(skipped: Iterable[Skipped]) -> list[tuple[str, int]]:
    """How many skipped rows give each kind of reason (its text up to the first detail)."""
    counts: dict[str, int] = {}
    for k in skipped:
        for reason in dict.fromkeys(_reason_kind(r) for r in k.reasons):
            counts[reason] = counts.get(reason, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _echo_summary(results: list[RowResult], skipped: list[Skipped], n_rows: int) -> None:
    _prose("error = predicted / measured - 1, per metric and regime (batch1 rows: single "
           "streams, llama.cpp in the reference set; keep them apart)")
    _say(f"{'metric':21} {'regime':13} {'count':>5} {'median |e|':>10} {'p90 |e|':>8} {'bias':>7}")
    for s in summarise(results):
        _say(f"{s.metric:21} {s.regime:13} {s.count:>5} {s.median_abs_error * 100:>9.1f}% "
             f"{s.p90_abs_error * 100:>7.1f}% {_pct(s.median_signed_error):>7}")
    _say("")
    _prose("coverage per scenario: rows read / rows in file, median |e| of the rows read")
    errors: dict[str, list[float]] = {}
    for r in results:
        errors.setdefault(_group_of(r.point.raw), []).append(abs(r.error))
    for group, (read, total) in coverage(results, skipped).items():
        median = f"{quantile(errors[group], 0.5) * 100:9.1f}%" if group in errors else ""
        _say(f"  {group:40} {read:>5} / {total:<5} {read / total * 100:5.1f}% {median}")
    kinds = _reason_kinds(skipped)
    listed = sum(count for _, count in kinds)
    # a row with several reasons counts under each: say so where the counts add up to more
    per = (f"rows per reason (a row with several reasons counts under each: {listed} in "
           "all):" if listed > len(skipped) else "rows per reason:")
    _say("")
    _prose(f"{len(results)} of {n_rows} rows predicted; {len(skipped)} not interpreted.")
    if skipped:
        _prose(per)
    for reason, count in kinds:  # folded under the reason, past its count
        _say(textwrap.fill(f"{count:>5}  {reason}", PROSE_WIDTH, subsequent_indent=" " * 7,
                           break_on_hyphens=False, break_long_words=False))


def _group_of(raw: Mapping[str, str]) -> str:
    """A row's group for coverage: its scenario as the table prints it (first 40 characters)."""
    return " ".join(raw.get("scenario", "").split())[:40] or "(no scenario)"


def coverage(results: Iterable[RowResult], skipped: Iterable[Skipped]
             ) -> dict[str, tuple[int, int]]:
    """(rows predicted, rows in the file) per scenario group; a skipped row counts in its
    group's total with its reasons listed below the table."""
    counts: dict[str, list[int]] = {}
    for raw, read in [(r.point.raw, 1) for r in results] + [(k.raw, 0) for k in skipped]:
        entry = counts.setdefault(_group_of(raw), [0, 0])
        entry[0], entry[1] = entry[0] + read, entry[1] + 1
    return {group: (read, total) for group, (read, total) in sorted(counts.items())}


# the summary's sentences fold to this width (session 23: its first line was 134 columns);
# the tables keep their columns
PROSE_WIDTH = 79


def _prose(text: str) -> None:
    """A sentence of the summary, folded at spaces to :data:`PROSE_WIDTH` columns, later
    lines indented by two."""
    _say(textwrap.fill(text, PROSE_WIDTH, subsequent_indent="  ", break_on_hyphens=False,
                       break_long_words=False))


def _say(text: str) -> None:
    """A line out, escape-safe: labels and reasons quote the CSV's own text (issue 25, F2)."""
    click.echo(terminal_text(text))


def run(path: str | Path, *, as_json: bool = False, summary_only: bool = False) -> int:
    """The CLI command: per-row predictions, the rows not interpreted with every reason, and
    the summary last (``summary_only``: the summary alone); the rows predicted. An embedding file
    (tests/data/embedding_points.csv's columns) goes to :mod:`.fidelity_embed`."""
    from .fidelity_embed import is_embedding_file
    from .fidelity_embed import run as run_embed

    if is_embedding_file(path):
        return run_embed(path, as_json=as_json, summary_only=summary_only)
    results, skipped, n_rows = evaluate_file(path)
    if as_json:
        _say(json.dumps(_document(path, results, skipped, n_rows), indent=2))
        return len(results)
    if not summary_only:
        _say(f"{'row':>4} {'model':15} {'gpu':9} {'parallel':12} {'w/kv':9} {'isl/osl':>11} "
                   f"{'regime':13} {'metric':20} {'measured':>10} {'predicted':>10} {'error':>7}")
        for r in results:
            p = r.point
            shape = f"{p.isl}/{p.osl}"
            prec = f"{p.weight_precision}/{p.kv_precision}"
            _say(f"{p.row:>4} {str(p.model)[:15]:15} {str(p.gpu)[:9]:9} "
                       f"{_parallel_text(p)[:12]:12} {prec:9} {shape:>11} {p.regime:11} "
                       f"{p.metric:20} {p.value:>10,.2f} {r.predicted:>10,.2f} "
                       f"{_pct(r.error):>7}")
        if skipped:
            _say(f"\n{len(skipped)} {'row' if len(skipped) == 1 else 'rows'} not interpreted (every reason):")
            # "row 4: ..." (review round 25: "   4  unknown metric" read as the summary's
            # "rows per reason" counts below it, "  27  GPU ... is not in the catalog")
            for k in skipped:
                _say(f"  row {k.row}: {k.reason}")
        _say("")
    _echo_summary(results, skipped, n_rows)
    return len(results)
