"""Command line. Heavy libraries are imported inside commands so ``--help`` starts fast.

Exit codes: 0 ok; 1 some accounts of a batch failed; 2 bad input or arguments;
3 infeasible (nothing fits / meets the target); 130 interrupted (Ctrl-C); 143 stopped by
SIGTERM (128 + 15: `timeout`, a CI runner, a scheduler shutting down).
"""

from __future__ import annotations

import os
import signal


def _interrupted_early(signum: int, frame: object) -> None:
    """Ctrl-C while Python and click import, before a command runs: nothing is written
    yet, so exit 130 at once instead of a traceback from inside an import."""
    os.write(2, b"interrupted\n")
    os._exit(130)


# First thing: the imports below take 50-300 ms (ruff's E402 is off for this file).
if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if inherited ignored
    signal.signal(signal.SIGINT, _interrupted_early)

import functools
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def _echo(message: str, err: bool = False, nl: bool = True) -> None:
    """Every line the command line prints, escape-safe (issue 25, F2): a name read from a
    file (a workbook's embedded data, a CSV label) could otherwise clear the screen or ring
    the bell. JSON output is unchanged by it: ``json.dumps`` escapes control characters."""
    from .base.textsafe import terminal_text

    click.echo(terminal_text(message), err=err, nl=nl)


def _clean_errors(fn: F) -> F:
    """Turn the user-fixable errors into one line and an exit code; bugs keep tracebacks."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .base.errors import LlmsizerError

        try:
            return fn(*args, **kwargs)
        except LlmsizerError as exc:
            _echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]


class _Choice(click.Choice):  # type: ignore[type-arg]
    """A choice whose error names the closest allowed value (``gpu`` -> ``gpus``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            from .model.catalog import suggest

            hint = suggest(str(value), [str(c) for c in self.choices])
            if not hint:
                raise
            raise click.BadParameter(f"{exc.message}{hint}", ctx=ctx, param=param) from None


class _Whole(click.IntRange):
    """A whole-number range whose parse error says what to type (`500tok`, `1,000`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from .inputs.options import number_fix
        if isinstance(value, str) and (fix := number_fix(value, whole=True)):
            self.fail(fix, param, ctx)
        return super().convert(value, param, ctx)


class _FiniteRange(click.FloatRange):
    """A float range that refuses NaN: NaN compares false with both bounds, so click's own
    range check lets it through (issue 25, F17); a parse error says what to type (`80%`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from .inputs.options import number_fix
        if isinstance(value, str) and (fix := number_fix(value, whole=False)):  # nan parses
            self.fail(fix, param, ctx)
        x = super().convert(value, param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a number; give a value in {self._describe_range()}",
                      param, ctx)
        return x


class _Path(click.Path):
    """A path that is not empty: ``Path("")`` is ``.``, so `--out ""` (an unset shell
    variable) would write into the current folder, and `report ""` would read it
    (issue 25, F9). ``.`` written out stays allowed."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("is empty (an unset variable?); name a folder or file, or write . for "
                      "the current folder", param, ctx)
        return super().convert(value, param, ctx)


_HELP_ERRORS: tuple[type[click.UsageError], ...] = tuple(
    e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e is not None)


def _exit_interrupted(message: str, code: int = 130) -> NoReturn:
    _echo(message, err=True)
    # Not sys.exit: CPython 3.11 remembers a Ctrl-C that escaped code a C extension ran
    # through PyRun_String while importing, and after our SystemExit kills itself with
    # SIGINT (returncode -2, seen in CI). Our own clean-up has run in `finally` blocks.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class _Main(click.Group):
    """Usage errors as one line (``error: …``, exit 2) like every other bad input, and Ctrl-C
    as exit 130: click's standalone mode prints usage around the error and exits 1 on an
    interrupt, and the README reserves 1 for "some accounts of a batch failed"."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        if signal.getsignal(signal.SIGINT) is _interrupted_early:  # from here, clean-up runs
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            code = super().main(*args, **kwargs)
        except _HELP_ERRORS as exc:  # a bare `llmsizer`: the help, as click shows it
            _echo(exc.format_message(), err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            _echo(f"error: {exc.format_message()}{where}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            _echo(f"error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            _exit_interrupted("interrupted")
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="llmsizer")
def main() -> None:
    """Size GPU deployments for LLM serving from a requirements YAML file."""


@main.command()
@click.argument("file", type=_Path(dir_okay=False, path_type=Path))
@_clean_errors
def validate(file: Path) -> None:
    """Check a requirements FILE without sizing it."""
    loaded = _load(file)
    n = len(loaded.req.workloads)
    _echo(f"{file}: valid ({n} workload{'s' if n != 1 else ''})")


def _load(file: Path) -> Any:
    """FILE's Loaded; a doubtful target (inputs/doubts.py) is sized as written, told on stderr."""
    from .inputs.loader import load

    loaded = load(file)
    for w in loaded.warnings:
        _echo(f"warning: {w}", err=True)
    return loaded


@main.command(short_help="Size a requirements file: the options and the recommendation.")
@click.argument("file", type=_Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the results JSON.")
@_clean_errors
def size(file: Path, as_json: bool) -> None:
    """Size the workloads in FILE and print the options and the recommendation (exit 2: bad
    input, every problem with its line; 3: no option meets a workload's targets)."""
    from .sizing.engine import size as run

    result = run(_load(file))
    if as_json:
        _echo(result.to_json(), nl=False)
    else:
        from .documents.textreport import print_result

        print_result(result)
    if any(w.recommended is None for w in result.workloads) or any(
            w.recommended is None for w in result.retrieval):
        sys.exit(3)


@main.command()
@click.argument("kind", type=_Choice(["gpus", "models", "platforms"]))
@click.option("--json", "as_json", is_flag=True, help="Print the catalog entries as JSON.")
@_clean_errors
def catalog(kind: str, as_json: bool) -> None:
    """List the GPUs, models or platforms in the catalog."""
    from .documents.textreport import print_catalog
    from .model.catalog import load_catalog

    cat = load_catalog()
    table = getattr(cat, kind)
    if as_json:
        _echo(json.dumps({k: v.model_dump() for k, v in table.items()}, indent=2))
    else:
        print_catalog(kind, table)


@main.command(short_help="Throughput and latency of one configuration (no targets or cost).")
@click.option("--model", "model_id", required=True,
              help="Catalog model id (see `llmsizer catalog models`).")
@click.option("--gpu", required=True, help="Catalog GPU id (see `llmsizer catalog gpus`).")
@click.option("--tp", "tp_text", type=click.Choice(["1", "2", "4", "8", "16", "32", "64", "72"]), default="1",
              show_default=True,
              help="Tensor-parallel degree: GPUs that hold one copy of the model (as "
                   "hardware.tensor_parallel allows: 1, 2, 4 or 8; 16 to 72 inside an NVL72 "
                   "rack's NVLink domain; up to the GPU's max_tp).")
@click.option("--replicas", type=_Whole(1, 100_000), default=1, show_default=True,
              help="Copies of the model; scales output_tokens_per_s.")
@click.option("--weights", "weight_precision", default="fp8", show_default=True,
              help="Weight precision: bf16, fp16, fp8, int8, int4, fp4 or mxfp4.")
@click.option("--kv", "kv_precision", default="fp8", show_default=True,
              help="KV-cache precision: bf16, fp16, fp8, int8, int4, fp4 or mxfp4.")
@click.option("--prompt-tokens", type=_Whole(1, 2_000_000), required=True,
              help="Input tokens per request.")
@click.option("--output-tokens", type=_Whole(1, 1_000_000), required=True,
              help="Generated tokens per request.")
@click.option("--concurrency", type=_Whole(1, 100_000),
              help="Users per replica (1-100,000), each sending the next request as its "
                   "answer ends, as benchmarks measure; those beyond what memory holds wait "
                   "for a slot, in the TTFT.")
@click.option("--offline", is_flag=True, help="No users: a batch job, as many requests at once "
              "as the KV-cache memory and the engine's batch cap allow.")
@click.option("--mbu", type=_FiniteRange(0.05, 1, min_open=True),
              help="Override bandwidth efficiency (share of peak memory bandwidth, over 0.05, "
                   "at most 1; as policy.mbu).")
@click.option("--mfu", type=_FiniteRange(0.05, 1, min_open=True),
              help="Override compute efficiency (share of peak tensor FLOPS, over 0.05, at most 1; "
                   "as policy.mfu).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@_clean_errors
def estimate(model_id: str, gpu: str, tp_text: str, replicas: int, weight_precision: str,
             kv_precision: str, prompt_tokens: int, output_tokens: int,
             concurrency: int | None, offline: bool, mbu: float | None, mfu: float | None,
             as_json: bool) -> None:
    """Throughput and latency of one configuration (no targets, no cost).

    Exits 3, saying why and what would fit, when the model and one request's KV cache do
    not fit the GPUs' memory.
    """
    from .inputs.options import estimate_problems, tp_problem
    from .sizing.engine import estimate as run
    from .sizing.engine import estimate_refusal

    if found := estimate_problems(model_id, gpu, weight_precision, kv_precision, concurrency,
                                  offline):  # every one at once, as a file's problems
        raise click.UsageError(found)
    if problem := tp_problem(gpu, int(tp_text)):
        raise click.BadParameter(problem, param_hint="'--tp'")
    tp = int(tp_text)
    if refusal := estimate_refusal(model_id, prompt_tokens, output_tokens):
        raise click.BadParameter(refusal[1], param_hint=f"'{refusal[0]}'")

    def fits(gpu_: str, tp_: int, weights: str) -> dict[str, float | str]:
        return run(model_id=model_id, gpu=gpu_, tp=tp_, replicas=replicas,
                   weight_precision=weights, kv_precision=kv_precision,
                   prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                   concurrency=concurrency, mbu=mbu, mfu=mfu)

    out = fits(gpu, tp, weight_precision)
    if out["max_sequences_by_memory"] == 0:
        _not_fitting(out, fits, model_id, gpu, tp, weight_precision)
    if as_json:
        _echo(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            _echo(f"{k:32} {_figure(v)}")


def _figure(v: float | str) -> str:
    """A count as a count ("1,085" sequences, not "1,085.00"); other figures to 2 decimals."""
    if isinstance(v, float):
        return f"{v:,.0f}" if v.is_integer() else f"{v:,.2f}"
    return str(v)


def _not_fitting(out: dict[str, float | str],
                 fits: Callable[[str, int, str], dict[str, float | str]],
                 model_id: str, gpu: str, tp: int, weights: str) -> None:
    """Raise the infeasible error for ``estimate``: why, and the nearest settings that fit."""
    from .base.errors import InfeasibleError
    from .model.catalog import load_catalog

    cat = load_catalog()
    limit = min(cat.gpu(gpu).max_tp, max(p.gpus_per_node for p in cat.platforms.values()
                                         if gpu in p.gpus))
    would: list[str] = []
    bigger = [t for t in (2, 4, 8, 16, 32, 64, 72) if tp < t <= limit]
    for t in bigger:
        if fits(gpu, t, weights)["max_sequences_by_memory"] != 0:
            would.append(f"--tp {t}")
            break
    smaller = ("fp8", "int4") if weights in ("bf16", "fp16") else ("int4",) if weights in (
        "fp8", "int8") else ()
    for prec in smaller:
        if fits(gpu, tp, prec)["max_sequences_by_memory"] != 0:
            would.append(f"--weights {prec}")
            break
    # the smallest catalog GPU with more memory that holds it at the same TP
    others = sorted((g.memory_gb, key) for key, g in cat.gpus.items()
                    if g.memory_gb > cat.gpu(gpu).memory_gb and g.max_tp >= tp)
    for _, key in others:
        if fits(key, tp, weights)["max_sequences_by_memory"] != 0:
            would.append(f"--gpu {key}")
            break
    weights_gb, usable = float(out["weights_gb"]), float(out["usable_memory_gb"])
    kv_gb = float(out["kv_gb_per_request"])
    why = (f"{model_id} does not fit on {tp} × {gpu} with {weights} weights: the weights "
           f"({weights_gb:,.1f} GB) and one request's KV cache ({kv_gb:,.2f} GB) need more than "
           f"the {usable:,.1f} GB usable")
    fix = ("; it would fit with " + " or ".join(would)) if would else (
        "; no larger tensor-parallel group, lower precision or larger GPU in the catalog fits "
        "it: shorten the prompt or use a smaller model")
    raise InfeasibleError(why + fix)


@main.command(short_help="Write the workbook, PDF proposal and results JSON.")
@click.argument("paths", nargs=-1, required=True, type=_Path(path_type=Path))
@click.option("--out", "out_dir", required=True, type=_Path(path_type=Path),
              help="Output folder (created if missing).")
@click.option("--templates", type=_Path(file_okay=False, path_type=Path),
              help="Folder with your own proposal templates (replaces the shipped ones).")
@click.option("--jobs", type=_Whole(1, 256), help="Accounts sized at once (default: one per CPU core).")
@click.option("--force", is_flag=True, help="Redo accounts whose outputs are up to date.")
@click.option("--quiet", is_flag=True, help="One line per account, no progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print batch.json when done.")
@click.option("--diff", "show_diff", is_flag=True,
              help="With an edited .xlsx: print the changed inputs and key outputs against "
                   "the workbook as llmsizer wrote it.")
@click.option("--overwrite-edited", is_flag=True,
              help="With an edited .xlsx written back over itself: replace it even though it "
                   "carries sheets or cells llmsizer did not write (they are lost).")
@click.option("--appendix", is_flag=True,
              help="The detailed PDF: add every alternative, the detail charts, break-even "
                   "by load, the price list, the production debugger, the fitted constants "
                   "and the formula appendix (the workbook carries them either way).")
@click.option("--scheduler", envvar="LLMSIZER_SCHEDULER",
              help="Size a batch's accounts on this Dask cluster (tcp://HOST:PORT; needs "
                   "llmsizer[cluster]) instead of local processes. Env: LLMSIZER_SCHEDULER.")
@_clean_errors
def report(paths: tuple[Path, ...], out_dir: Path, templates: Path | None, jobs: int | None,
           force: bool, quiet: bool, as_json: bool, show_diff: bool,
           overwrite_edited: bool, appendix: bool, scheduler: str | None) -> None:
    """Write the workbook, PDF proposal and results JSON for each account.

    PATHS may be files or folders (every .yaml / .yml file inside, in any case; a link out of
    the folder or a link loop is refused for its entry, unread). Several accounts run as a
    batch: in parallel, one bad file never stops the rest, and DIR/summary.xlsx and
    DIR/batch.json list every account. Exit code 0 all ok, 1 some failed, 2 nothing ran;
    a single account exits 2 on bad input and 3 when nothing meets its targets (as size).

    A workbook llmsizer wrote (FILE.xlsx, edited on its Inputs sheet) is read back instead:
    the requirements are rebuilt from its input cells and the three outputs written afresh;
    --diff prints what changed. A workbook whose formulas or layout were changed is refused.
    """
    from .base.errors import InputError
    from .runs.batch import scan

    missing = [str(p) for p in paths if not _exists(p)]
    if missing:
        raise click.UsageError(f"no such file or folder: {', '.join(missing)}")
    if templates is not None and not (_exists(templates) and templates.is_dir()):
        raise click.UsageError(f"--templates {templates}: not a folder")
    files, refused = scan(list(paths))
    if not files:
        raise click.UsageError("no *.yaml or *.yml files in the given paths")
    books = [f for f in files if f.suffix.lower() == ".xlsx"]
    if books:
        if len(files) != 1:
            raise click.UsageError("give one edited .xlsx workbook at a time (workbooks are not "
                                   "re-read as part of a batch)")
        _report_workbook(books[0], out_dir, templates, show_diff, overwrite_edited, appendix)
        return
    if show_diff:
        raise click.UsageError("--diff compares an edited workbook with the figures llmsizer "
                               "wrote into it: give one .xlsx file")
    if len(files) == 1 and not scheduler:
        if files[0] in refused:
            raise InputError(refused[files[0]])
        from .runs.report import report as run

        for w in run(_load(files[0]), out_dir, templates=templates, appendix=appendix)[1]:
            _echo(str(w))
        return
    _report_many(files, out_dir, templates, jobs, force, quiet, as_json, refused, appendix,
                 scheduler or None)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError as exc:  # a name too long: exists() raises instead of answering
        from .base.textsafe import printable

        raise click.UsageError(f"{printable(str(path))}: {exc.strerror}") from None


def _report_workbook(book: Path, out_dir: Path, templates: Path | None, show_diff: bool,
                     overwrite_edited: bool, appendix: bool) -> None:
    """``llmsizer report edited.xlsx --out DIR``: re-read, size again, write all three."""
    from .base.errors import InputError
    from .documents.reread import diff_lines, read_workbook
    from .runs.report import check_feasible, output_stem, prepare_out_dir, working, write_outputs
    from .sizing.engine import size

    # The re-read's reference workbook is temp work: under --out, swept after a kill (F22).
    prepare_out_dir(out_dir)
    with working(out_dir):
        reread = read_workbook(book)
    result = size(reread.loaded)
    for warning in (*reread.warnings, *reread.loaded.warnings):  # the last: doubtful targets
        _echo(f"warning: {warning}", err=True)
    if show_diff:
        for line in diff_lines(reread, result):
            _echo(line)
    check_feasible(result)
    target = out_dir / f"{output_stem(result.account.slug)}.xlsx"
    if reread.foreign and not overwrite_edited and _same_file(target, book):
        # finance's added sheet or notes would be lost without a word (issue 25, F21)
        more = f" and {len(reread.foreign) - 1} more" if len(reread.foreign) > 1 else ""
        raise InputError(f"carries content llmsizer did not write ({reread.foreign[0]}{more}); "
                         "writing the new workbook over it would destroy that: give another "
                         "--out folder, or --overwrite-edited to replace it anyway",
                         file=str(book))
    # Writing over the workbook being read is safe: read_workbook has read it whole and
    # closed it, and write_outputs replaces files atomically (all three or none).
    with working(out_dir):
        written = write_outputs(result, out_dir, templates=templates, appendix=appendix)
    for w in written:
        _echo(str(w))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and a.samefile(b)
    except OSError:
        return False


def _report_many(files: list[Path], out_dir: Path, templates: Path | None, jobs: int | None,
                 force: bool, quiet: bool, as_json: bool, refused: dict[Path, str],
                 appendix: bool, scheduler: str | None) -> None:
    from .base.textsafe import printable, terminal_text
    from .runs.batch import (
        SUMMARY_NAME,
        Terminated,
        default_jobs,
        run_batch,
        terminate_on_sigterm,
        write_batch_files,
    )
    from .runs.outcome import Outcome
    from .runs.report import prepare_out_dir

    prepare_out_dir(out_dir)
    njobs = jobs or default_jobs()
    fancy = sys.stderr.isatty() and not quiet and not as_json
    failures = 0

    def line(o: Outcome, done: int, total: int) -> None:
        nonlocal failures
        failures += o.failed
        # ESC or a line break in a file name must not recolour the terminal or forge a line (issue 25, F6)
        msg = f"[{done}/{total}] {o.status:13} {printable(o.file)}"
        # an input error names its file first ("f.yaml:3:5: ..."): the line names it once
        told = o.message[len(str(o.file)):] if o.message.startswith(str(o.file)) else (
            ": " + o.message)
        if o.failed and not quiet:
            # a file's problems one per line, as `validate` shows them; each line escaped and
            # indented, so none can pass for another account's line
            msg += "\n    ".join(printable(part) for part in told.split("\n"))
        elif o.failed:
            msg += printable(told)
        msg += o.warnings_told(quiet)  # a doubtful input, as `size` prints it
        if fancy:
            progress.console.print(terminal_text(msg), markup=False, highlight=False)
            progress.update(task, advance=1, description=f"{o.stem[:30]} · {failures} failed")
        else:
            _echo(msg, err=True)

    try:
        with terminate_on_sigterm():
            if fancy:
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeRemainingColumn,
                )

                with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TimeRemainingColumn(), transient=True) as progress:
                    task = progress.add_task("starting", total=len(files))
                    outcomes = run_batch(files, out_dir, jobs=njobs, force=force,
                                         templates=templates, on_done=line, refused=refused,
                                         appendix=appendix, scheduler=scheduler)
            else:
                outcomes = run_batch(files, out_dir, jobs=njobs, force=force, templates=templates,
                                     on_done=line, refused=refused, appendix=appendix,
                                     scheduler=scheduler)
    except KeyboardInterrupt as exc:
        stopped = "terminated" if isinstance(exc, Terminated) else "interrupted"
        _exit_interrupted(f"{stopped}: finished accounts are kept; run again to complete the "
                          "rest", 143 if isinstance(exc, Terminated) else 130)
    doc = write_batch_files(outcomes, out_dir)
    ok = sum(o.status == "ok" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    failed = sum(o.failed for o in outcomes)
    _echo(f"{ok} written, {skipped} skipped (unchanged), {failed} failed; "
               f"summary: {out_dir / SUMMARY_NAME}", err=True)
    if as_json:
        _echo(doc, nl=False)
    sys.exit(1 if failed else 0)


@main.command(short_help="Run the presales web app on this machine.")
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
    from .web.server import serve as run

    run(host, port, token)


@main.command(short_help="Compare the model with a CSV of measured results.")
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
    from .sizing.fidelity_report import run as run_fidelity

    run_fidelity(points, as_json=as_json, summary_only=summary_only)


if __name__ == "__main__":
    main()
