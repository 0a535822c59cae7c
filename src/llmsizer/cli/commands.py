"""The short commands: validate, size, catalog, serve and fidelity."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .errors import _clean_errors, _echo, _load
from .params import _Choice, _Path, _Whole


@click.command()
@click.argument("file", type=_Path(dir_okay=False, path_type=Path))
@_clean_errors
def validate(file: Path) -> None:
    """Check a requirements FILE without sizing it."""
    loaded = _load(file)
    n = len(loaded.req.workloads)
    _echo(f"{file}: valid ({n} workload{'s' if n != 1 else ''})")


@click.command(short_help="Size a requirements file: the options and the recommendation.")
@click.argument("file", type=_Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the results JSON.")
@click.option("--all", "every", is_flag=True,
              help="List every option, not only the best that meet the targets, and each "
                   "ruled-out one with its own reason.")
@_clean_errors
def size(file: Path, as_json: bool, every: bool) -> None:
    """Size the workloads in FILE and print the best options that meet their targets, why the
    others are ruled out, and the recommendation (--all: every option; exit 2: bad input,
    every problem with its line; 3: no option meets a workload's targets)."""
    from ..sizing.engine import size as run

    result = run(_load(file))
    if as_json:
        _echo(result.to_json(), nl=False)
    else:
        from ..documents.textreport import print_result

        print_result(result, every=every)
    if any(w.recommended is None for w in result.workloads) or any(
            w.recommended is None for w in result.retrieval):
        sys.exit(3)


@click.command()
@click.argument("kind", type=_Choice(["gpus", "models", "platforms"]))
@click.option("--json", "as_json", is_flag=True, help="Print the catalog entries as JSON.")
@_clean_errors
def catalog(kind: str, as_json: bool) -> None:
    """List the GPUs, models or platforms in the catalog."""
    from ..documents.textreport import print_catalog
    from ..model.catalog import load_catalog

    cat = load_catalog()
    table = getattr(cat, kind)
    if as_json:
        _echo(json.dumps({k: v.model_dump() for k, v in table.items()}, indent=2))
    else:
        print_catalog(kind, table)


@click.command(short_help="Run the presales web app on this machine.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any but this machine's own needs --token.")
@click.option("--port", type=_Whole(1, 65535), default=8000, show_default=True,
              help="Port to listen on: open http://127.0.0.1:PORT/ in a browser.")
@click.option("--token", envvar="LLMSIZER_TOKEN",
              help="Shared password every request must carry (required when --host is not "
                   "this machine; or set LLMSIZER_TOKEN).")
@_clean_errors
def serve(host: str, port: int, token: str | None) -> None:
    """Run the presales web app: the account form sized live, documents one click away.

    It listens on this machine only (127.0.0.1) unless --host says otherwise; then
    --token is required and checked on every request.
    """
    from ..web.server import serve as run

    run(host, port, token)


@click.command(short_help="Compare the model with a CSV of measured results.")
@click.argument("points", type=_Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print a document with summary and rows.")
@click.option("--summary", "summary_only", is_flag=True,
              help="Print only the summary (error per metric and regime, rows per reason).")
@_clean_errors
def fidelity(points: Path, as_json: bool, summary_only: bool) -> None:
    """Predict every interpretable row of a measured-results CSV and report the error.

    \b
    POINTS is a CSV with one measured value per row and the columns
      source, model, gpu, gpu_count, tp, precision_weights, precision_kv,
      isl, osl, concurrency, scenario, metric, value, unit, notes
    \b
    model, gpu   labels as tables print them ("B200-SXM-180GB (DGX B200)",
                 "Llama-3.3-70B-Instruct"); matched to the catalogs' aliases
    gpu_count    all GPUs of the row (may be empty when tp states replicas)
    tp           TP8 | 8 | TP1 PP4 | PP2 | TP8 EP8 | TP8 EP8 ADP | DEP4 |
                 TP1 DP8 | TP2 x4 replicas | llama.cpp layer split across N GPUs;
                 DISAGG P:1x(TP8) D:2x(TP8): the prefill and decode pools, predicted
    precision_*  fp8, fp4/nvfp4/mxfp4, bf16, fp16, int8, int4/awq/gptq, gguf ...;
                 KV auto / not stated = the weights' default KV (FP4 -> FP8)
    isl, osl     tokens; "lengths U[0.8*L, L]" in notes = the mean, 0.9 L
    concurrency  unbounded | N (users for all the GPUs) | N per GPU |
                 request rate QPS=N | 1 (batch 1)
    scenario     offline max-throughput [(concurrency-capped)], online serving
                 (fixed concurrency), all queries issued at once, Poisson
                 arrivals at N req/s, min-latency (batch 1); MTP on: the model's
                 published acceptance length, 3 drafts unless stated
    metric       output_tokens_per_s[_total|_per_gpu|_per_user], total_tokens_per_s,
                 decode_tokens_per_s_batch1, tpot_ms, ttft_ms, itl_ms, with a
                 statistic (ttft_mean, p90_tpot_ms, tpot_p99): p90/p99 TPOT through
                 a documented ratio, other tails skipped with the reason
    unit         tok/s, tok/s/gpu, tok/s/user, ms, s

    Rows it cannot predict are listed with every reason; the summary comes last.
    """
    from ..sizing.fidelity_report import run as run_fidelity

    if not run_fidelity(points, as_json=as_json, summary_only=summary_only):
        # a file of which no row could be read is a failed check, not a pass (session 24)
        click.echo("error: no row of this file could be predicted; each row's reason is "
                   "listed above", err=True)
        sys.exit(1)
