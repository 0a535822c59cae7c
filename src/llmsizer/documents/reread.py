"""Re-read a workbook llmsizer wrote, after finance edited it (``llmsizer report edited.xlsx``).

What the workbook carries (written by :mod:`llmsizer.documents.workbook`): custom document properties
``llmsizer`` (a marker), ``llmsizer_version`` and ``llmsizer_data_000``… (zlib-compressed,
base64 JSON cut into 250-character pieces, the limit of a property value in Excel), with:
the requirements it was sized from (every default filled in), the models read from
config.json files and the points read from benchmark files (so nothing beside the workbook
is needed), the value and meaning of every named input cell, the digest of every formula
and defined name, and the key outputs (for ``--diff``).

Reading, in order, each refusal one clear line (:class:`~llmsizer.base.errors.InputError`):

1. it opens as .xlsx, within the limits of :mod:`.xlsxsafe`, and carries the marker (a
   workbook llmsizer did not write is refused, so is one whose properties a converter
   dropped - Google Sheets does);
2. the same llmsizer version and catalog wrote it (else re-run from the YAML);
3. all its sheets exist (``llmsizer.documents.workbook.SHEETS``);
4. the workbook is rebuilt from the embedded requirements and compared cell by cell: every
   formula (compared after the normalisation below), every locked constant and every defined
   name must be as written. Only the unlocked (yellow) input cells may differ. Edits of the
   option cells at the top of the KV sheet (GPU, precision, TP, efficiencies) are NOT re-read:
   the engine chooses options itself; they are reported, and ignored;
5. the Inputs sheet's named cells are mapped back to requirement fields (:mod:`.inputcells`)
   and validated like YAML (errors name the sheet and cell): users, lengths, targets,
   headroom, N+1, memory utilisation, runtime reserve, costs, GPU/cloud/node prices, the
   GPU price multiplier (as the GPU prices it multiplies) and the cloud tier code. Cells
   that are not requirement fields (a model's architecture, a throughput that comes from
   benchmark files) must keep their value.

Formula text is compared after normalisation, because Excel and LibreOffice re-write the
formulas they save: case, whitespace, ``$`` and sheet-name quotes are dropped and numbers are
compared by value (LibreOffice writes ``1E-9`` as ``0.000000001``).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import InputError
from ..base.textsafe import printable
from ..inputs.schema_words import said
from ..model.catalog import Catalog, Model, load_catalog
from .inputcells import Change, at_cells, edited_requirements, shown
from .marker import (
    KEY_OUTPUTS,
    key_outputs,
    metadata_properties,
    normal_name_target,
    normalize_formula,
    num_text,
    read_metadata,
    structure_digest,
)
from .proposal.format import NBSP, Formatter
from .workbook import ALL_SHEETS, SHEETS, write_workbook
from .xlsxsafe import (
    Cells,
    custom_properties,
    defined_names,
    open_workbook,
    sheet_cells,
    short_reason,
)

__all__ = [
    "Change",
    "Reread",
    "diff_lines",
    "metadata_properties",
    "normalize_formula",
    "read_metadata",
    "read_workbook",
    "structure_digest",
]

# --- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reread:
    """A workbook read back: the requirements rebuilt from it, ready to size."""

    loaded: Any  # requirements.Loaded
    changes: list[Change]
    ignored: list[Change]  # edits that are not re-read (option cells on KV)
    original: dict[str, Any]  # key outputs as written (for --diff)
    warnings: list[str] = field(default_factory=list)
    # what llmsizer did not write and writing the workbook again would drop: sheets added,
    # values in cells llmsizer left empty (issue 25, F21)
    foreign: list[str] = field(default_factory=list)


def _openpyxl() -> Any:
    return importlib.import_module("openpyxl")


def read_workbook(path: Path | str, catalog: Catalog | None = None, *,
                  name: str | None = None) -> Reread:
    """Check ``path`` is an unchanged-but-for-inputs llmsizer workbook and rebuild the
    requirements from its Inputs sheet (module docstring). ``name`` names it in messages
    when the path is not what the user knows it by (an upload to the web app)."""
    p = Path(path)
    filename = printable(name or str(path))
    cat = catalog or load_catalog()
    wb = open_workbook(p, filename)
    try:
        meta = read_metadata(custom_properties(wb), filename)
        _check_size(meta, filename)
        _check_shape(meta, filename)
        if meta.get("catalog_digest") != cat.digest:
            raise InputError("written with another catalog (GPU, model or price data) than this "
                             "llmsizer has; size the requirements file again", file=filename)
        missing = [s for s in SHEETS if s not in wb.sheetnames]
        if missing:
            raise InputError(f"sheet {missing[0]!r} is missing (deleted or renamed); llmsizer "
                             f"re-reads only workbooks whose sheets are all there: "
                             f"{', '.join(SHEETS)}", file=filename)
        source = meta.get("source")
        if not isinstance(source, dict):
            raise InputError("this workbook was written without its requirements (from a "
                             "results document); size the requirements file again",
                             file=filename)
        # every sheet llmsizer writes, those some results add (Models, Retrieval) included:
        # which of them this workbook should have is checked against the rebuilt original
        sheets = {s: sheet_cells(wb, s, filename) for s in ALL_SHEETS if s in wb.sheetnames}
        names = defined_names(wb)
        foreign = [f"sheet {printable(s[:40])!r}" for s in wb.sheetnames if s not in ALL_SHEETS]
    finally:
        wb.close()
    original = _original(source, filename, cat)
    ignored = _compare(sheets, names, original, str(meta.get("structure", "")), filename,
                       foreign)
    changes, loaded = _rebuild(sheets, names, meta, source, filename, cat)
    warnings = []
    if ignored:
        warnings.append(
            f"{len(ignored)} option cell(s) on the KV sheet were edited ({ignored[0].cell} "
            f"{ignored[0].label}: {ignored[0].old!r} -> {ignored[0].new!r}"
            f"{', …' if len(ignored) > 1 else ''}); llmsizer re-reads only the Inputs sheet "
            "and chooses GPU, precision and TP itself: those edits are ignored (limit the "
            "choice with hardware.gpus / weight_precisions / tensor_parallel in the "
            "requirements)")
    return Reread(loaded=loaded, changes=changes, ignored=ignored,
                  original=dict(meta.get("outputs") or {}), warnings=warnings,
                  foreign=foreign)


MAX_EMBEDDED_VALUES = 200_000  # the JSON a workbook carries (requirements, models, points)


def _check_size(meta: Any, filename: str) -> None:
    """The embedded data is validated like a requirements file, which holds at most
    yamlsafe.MAX_NODES values; models and benchmark points add some. Counted before anything
    walks it (iteratively: deep nesting was already refused by the JSON decoder)."""
    count, stack = 0, [meta]
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_EMBEDDED_VALUES:
            raise InputError(f"the llmsizer data in this workbook holds more than "
                             f"{MAX_EMBEDDED_VALUES:,} values: not data llmsizer wrote",
                             file=filename)
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _embedded(source: Mapping[str, Any], filename: str, cat: Catalog
              ) -> tuple[dict[str, Model], dict[int, tuple[Any, ...]]]:
    from ..inputs.benchpoints import BenchPoint

    try:
        models = {str(k): Model.model_validate(v) for k, v in (source.get("models") or {}).items()}
        bench = {int(k): tuple(BenchPoint.model_validate(p) for p in v)
                 for k, v in (source.get("bench") or {}).items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"the requirements embedded in this workbook are damaged "
                         f"({_first_error(exc)}); size the requirements file again",
                         file=filename) from None
    return models, bench


def _first_error(exc: Exception) -> str:
    """One line: pydantic's first error (where, what), else the exception's first line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return short_reason(ValueError(f"{where}: {said(dict(first))}"))
    return short_reason(exc)


def _check_shape(meta: Mapping[str, Any], filename: str) -> None:
    """The parts of the embedded data that are read as they are (not validated like a
    requirements file) must have the shape llmsizer writes."""
    prices = meta.get("prices") or {}
    outputs = meta.get("outputs") or {}
    ok = (isinstance(meta.get("inputs") or {}, dict) and isinstance(prices, dict)
          and all(isinstance(v, list) and len(v) == 3 and all(isinstance(x, str) for x in v)
                  for v in prices.values())
          and isinstance(outputs, dict) and _outputs_ok(outputs)
          and isinstance(meta.get("structure", ""), str))
    if not ok:
        raise InputError("the llmsizer data in this workbook's document properties is "
                         "damaged (a part has the wrong shape); size the requirements file "
                         "again", file=filename)


def _figure(x: Any) -> bool:
    return x is None or (isinstance(x, int | float) and not isinstance(x, bool)
                         and math.isfinite(x))


def _outputs_ok(outputs: Mapping[str, Any]) -> bool:
    """The key outputs ``--diff`` prints as written: per workload a text name, an option id
    or none, and a finite number or none per figure; the totals likewise. Anything else
    (``capex: "abc"``) was not written by llmsizer and would fail formatting (issue 25, F1)."""
    workloads, totals = outputs.get("workloads", []), outputs.get("totals", {})
    if not isinstance(workloads, list) or not isinstance(totals, dict):
        return False
    rows_ok = all(isinstance(w, dict) and isinstance(w.get("name"), str)
                  and isinstance(w.get("recommended"), str | type(None))
                  and all(_figure(w.get(k)) for k in KEY_OUTPUTS) for w in workloads)
    return rows_ok and all(_figure(totals.get(k)) for k in KEY_OUTPUTS)


def _given(data: Any) -> Any:
    """The embedded requirements (a dump with every field, ``None`` for one not stated) as a
    file states them: the loader reads ``key: null`` as a key with nothing after the colon,
    a typo in a hand-written file, so the fields not stated (a workload's other load ways)
    are left out, as they were in the file."""
    if isinstance(data, dict):
        return {k: _given(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_given(v) for v in data]
    return data


def _load_requirements(data: Any, filename: str, cat: Catalog, models: dict[str, Model],
                       bench: dict[int, tuple[Any, ...]]) -> Any:
    from ..inputs.loader import parse, resolve
    from ..inputs.yamlpositions import Located

    located = Located(_given(data), {}, filename)
    req = parse(located, filename)
    return resolve(req, located, Path(filename), cat, models=models, bench=bench)


def _original(source: Mapping[str, Any], filename: str, cat: Catalog) -> Any:
    """The workbook as llmsizer wrote it, rebuilt from the embedded requirements."""
    from ..sizing.engine import size

    models, bench = _embedded(source, filename, cat)
    try:
        loaded = _load_requirements(copy.deepcopy(source.get("requirements")), filename, cat,
                                    models, bench)
    except InputError as exc:
        what = f"{exc.field}: {exc.message}" if exc.field else exc.message
        raise InputError(f"the requirements embedded in this workbook no longer validate "
                         f"({what}); size the requirements file again",
                         file=filename) from None
    with tempfile.TemporaryDirectory(prefix="llmsizer-reread-") as tmp:
        target = Path(tmp) / "original.xlsx"
        write_workbook(size(loaded, cat), target)
        return _openpyxl().load_workbook(target)


def _same_value(a: Any, b: Any) -> bool:
    if a in ("", None) and b in ("", None):  # openpyxl saves an empty text cell as blank
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b) and type(a) is type(b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return num_text(float(a)) == num_text(float(b))
    if isinstance(a, str) and isinstance(b, str):
        return a.replace("\r\n", "\n") == b.replace("\r\n", "\n")
    same: bool = a == b
    return same


def _compare(sheets: Mapping[str, Cells], names: Mapping[str, str], orig: Any, digest: str,
             filename: str, foreign: list[str]) -> list[Change]:
    """Refuse any difference outside the input cells; return the ignored option-cell edits
    (and add the values in cells llmsizer left empty to ``foreign``)."""
    try:
        formulas = [(ws.title, c.coordinate, str(c.value)) for ws in orig.worksheets
                    for row in ws.iter_rows() for c in row if c.data_type == "f"]
        if structure_digest(formulas, defined_names(orig).items()) != digest:
            raise InputError("this workbook's formulas do not match the llmsizer data it carries "
                             "(was the data copied from another workbook?); size the "
                             "requirements file again", file=filename)
        ignored: list[Change] = []
        # the named input cells, locked ones included (inputcells reads or refuses each)
        inputs = frozenset(str(t).lstrip("=").replace("$", "").replace("'", "")
                           for n, t in defined_names(orig).items() if n.startswith("in_"))
        for sheet in orig.sheetnames:
            if sheet not in sheets:
                raise InputError(f"sheet {sheet!r} is missing (deleted or renamed); llmsizer "
                                 "re-reads only workbooks whose sheets are all there",
                                 file=filename)
            ignored += _compare_sheet(sheets[sheet], orig[sheet], filename, foreign, inputs)
        foreign += [f"sheet {s!r}" for s in sheets if s not in orig.sheetnames]
        theirs = {k: normal_name_target(v) for k, v in names.items()}
        for name, target in sorted(defined_names(orig).items()):
            if theirs.get(name) != normal_name_target(target):
                now = (f"now points at {theirs[name]}" if name in theirs else "was deleted")
                raise InputError(f"the cell name {name} {now} (llmsizer wrote "
                                 f"{target.lstrip('=')}); rows or columns were inserted, deleted "
                                 "or moved: llmsizer re-reads only workbooks whose layout is as "
                                 "written", file=filename)
        return ignored
    finally:
        orig.close()


def _compare_sheet(cells: Cells, orig: Any, filename: str, foreign: list[str],
                   inputs: frozenset[str] = frozenset()) -> list[Change]:
    ignored = []
    seen: set[str] = set()
    for row in orig.iter_rows():
        for o in row:
            if o.value is None:
                if o.protection.locked is False:  # an empty input cell: filling it is an edit
                    seen.add(o.coordinate)
                continue
            ref = f"{orig.title}!{o.coordinate}"
            seen.add(o.coordinate)
            value, kind = cells.get(o.coordinate, (None, "n"))
            if o.data_type == "f":
                if kind != "f":
                    raise InputError(
                        f"cell {ref} was changed from a formula to a value ({shown(value)}); "
                        "llmsizer re-reads only the yellow input cells: undo the change (the "
                        f"formula was {str(o.value)[:80]})", file=filename)
                if normalize_formula(str(value)) != normalize_formula(str(o.value)):
                    raise InputError(
                        f"cell {ref}'s formula was changed (was {str(o.value)[:60]}, now "
                        f"{printable(str(value)[:60])}); llmsizer re-reads only the yellow "
                        "input cells: undo the change", file=filename)
                continue
            if o.protection.locked is False:  # an input cell
                if orig.title != "Inputs" and not _same_value(o.value, value):
                    label = str(orig.cell(row=o.row, column=2).value or orig.title)
                    ignored.append(Change(cell=ref, label=label, field="", old=o.value,
                                          new=value))
                continue
            if ref in inputs and kind != "f":  # a locked named input: inputcells says why
                continue
            if kind == "f" or not _same_value(o.value, value):
                raise InputError(
                    f"cell {ref} was changed (llmsizer wrote {shown(o.value)}, it now holds "
                    f"{shown(value)}); only the yellow input cells are re-read: undo the "
                    "change", file=filename)
    for coordinate, (value, kind) in cells.items():
        if kind == "f" and coordinate not in seen:
            raise InputError(f"cell {orig.title}!{coordinate} holds a formula llmsizer did "
                             "not write; llmsizer re-reads only the yellow input cells: "
                             "delete it", file=filename)
        if coordinate not in seen and value not in (None, ""):
            foreign.append(f"cell {orig.title}!{coordinate}")  # a note finance added
    return ignored


def _rebuild(sheets: Mapping[str, Cells], names: Mapping[str, str], meta: Mapping[str, Any],
             source: Mapping[str, Any], filename: str, cat: Catalog) -> tuple[list[Change], Any]:
    """The requirements with the Inputs sheet's edits (:mod:`.inputcells`), validated like
    YAML; a validation error names the cell(s) that caused it."""
    changes, data, cells = edited_requirements(sheets, names, meta, source, filename)
    models, bench = _embedded(source, filename, cat)
    try:
        loaded = _load_requirements(data, filename, cat, models, bench)
    except InputError as exc:
        raise at_cells(exc, cells, filename) from None
    return changes, loaded


# --- --diff ------------------------------------------------------------------------------------

_OUTPUT_LABELS = {"gpus": "GPUs", "nodes": "nodes", "capex": "capex",
                  "annual_cost_onprem": "on-prem per year", "annual_cost_cloud": "cloud per year"}


def _fmt(value: Any, key: str, currency: str) -> str:
    if value is None:
        return "—"
    if key in ("gpus", "nodes"):
        return f"{value:,.0f}"
    # as the PDF and `llmsizer size` show money ("USD 288 k"); a change the rounding hides
    # still gets its mark (the comparison is of the exact figures)
    return Formatter(currency).money(value).replace(NBSP, " ")


def _fmt_input(v: float | str | None) -> str:
    if isinstance(v, float):
        return f"{v:,.6g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return shown(v)


def diff_lines(reread: Reread, result: Any) -> list[str]:
    """What changed against the workbook as llmsizer wrote it: inputs, then key outputs."""
    lines = ["Inputs changed:"]
    if not reread.changes:
        lines.append("  (none)")
    for c in reread.changes:
        lines.append(f"  {c.cell:<12} {c.label}: {_fmt_input(c.old)} -> {_fmt_input(c.new)}"
                     f"  [{c.field}]")
    if reread.ignored:
        lines.append("Not re-read (option cells on KV; the engine chooses options itself):")
        for c in reread.ignored:
            lines.append(f"  {c.cell:<12} {c.label}: {shown(c.old)} -> {shown(c.new)}")
    now = key_outputs(result)
    before = reread.original
    cur = str(now["currency"])
    lines.append("Key outputs (as written -> now):")
    old_rows = {str(r.get("name")): r for r in before.get("workloads", [])}
    for row in now["workloads"]:
        old = old_rows.get(str(row["name"]), {})
        parts = []
        if old.get("recommended") != row["recommended"]:
            parts.append(f"option {printable(str(old.get('recommended')))} -> {row['recommended']}")
        for k in KEY_OUTPUTS:
            a, b = old.get(k), row[k]
            mark = "" if a == b else " *"
            parts.append(f"{_OUTPUT_LABELS[k]} {_fmt(a, k, cur)} -> {_fmt(b, k, cur)}{mark}")
        lines.append(f"  {printable(str(row['name']))}: " + "; ".join(parts))
    tot_old = before.get("totals", {})
    parts = []
    for k in KEY_OUTPUTS:
        a, b = tot_old.get(k), now["totals"][k]
        mark = "" if a == b else " *"
        parts.append(f"{_OUTPUT_LABELS[k]} {_fmt(a, k, cur)} -> {_fmt(b, k, cur)}{mark}")
    lines.append("  Total: " + "; ".join(parts))
    return lines
