"""``llmsizer report``: one account's three files, an edited workbook read back, or a batch
of accounts with its progress, summary and exit code."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from .errors import _clean_errors, _echo, _exit_interrupted, _load
from .params import _Path, _Whole


@click.command(short_help="Write the workbook, PDF proposal and results JSON.")
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
    from ..base.errors import InputError
    from ..runs.batch import scan

    missing = [p for p in paths if not _exists(p)]
    if missing:
        from ..base.textsafe import printable
        from ..inputs.yamlfile import _nearby

        # as `validate` and `size` say it, with the name it may have meant (review round 24:
        # "no such file or folder: acme.yml", nothing of acme.yaml beside it)
        raise click.UsageError("; ".join(
            f"{printable(str(p))}: no such file or folder: check the path and the name"
            f"{_nearby(Path(p))}" for p in missing))
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
        from ..runs.report import report as run

        for w in run(_load(files[0]), out_dir, templates=templates, appendix=appendix)[1]:
            _echo(str(w))
        return
    _report_many(files, out_dir, templates, jobs, force, quiet, as_json, refused, appendix,
                 scheduler or None)


@contextlib.contextmanager
def _unmade_on_failure(made: list[Path], remove: Callable[[list[Path]], None]) -> Iterator[None]:
    """The output folder this run made is removed again, while empty, when the batch stops
    before writing anything (a Dask scheduler out of reach; an interrupt)."""
    try:
        yield
    except BaseException:
        remove(made)
        raise


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError as exc:  # a name too long: exists() raises instead of answering
        from ..base.textsafe import printable

        raise click.UsageError(f"{printable(str(path))}: {exc.strerror}") from None


def _report_workbook(book: Path, out_dir: Path, templates: Path | None, show_diff: bool,
                     overwrite_edited: bool, appendix: bool) -> None:
    """``llmsizer report edited.xlsx --out DIR``: re-read, size again, write all three."""
    from ..base.errors import InputError
    from ..documents.reread import diff_lines, read_workbook
    from ..runs.report import check_feasible, output_stem, prepare_out_dir, working, write_outputs
    from ..sizing.engine import size

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
    from ..base.textsafe import printable, terminal_text
    from ..runs.batch import (
        SUMMARY_NAME,
        Terminated,
        default_jobs,
        run_batch,
        terminate_on_sigterm,
        write_batch_files,
    )
    from ..runs.outcome import Outcome
    from ..runs.report import prepare_out_dir, remove_made

    if scheduler:  # an address Dask cannot read: one line, before the output folder is made
        from ..runs.cluster import check_address

        check_address(scheduler)
    made = prepare_out_dir(out_dir)
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
            # one line, its problems joined by " | " (it showed a literal "\n" between them,
            # review round 24), each escaped
            head, *rest = [printable(part.strip()) for part in told.split("\n")]
            msg += " ".join([head, " | ".join(rest)]) if rest else head
        msg += o.warnings_told(quiet)  # a doubtful input, as `size` prints it
        if fancy:
            progress.console.print(terminal_text(msg), markup=False, highlight=False)
            progress.update(task, advance=1, description=f"{o.stem[:30]} · {failures} failed")
        else:
            _echo(msg, err=True)

    try:
        with terminate_on_sigterm(), _unmade_on_failure(made, remove_made):
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
