"""Loading one requirements file: safe YAML, the schema (:mod:`.schema`), then every catalog
id, Hugging Face config.json and benchmark file it names, resolved into :class:`Loaded`.

Every problem is an :class:`InputError` with the file, line and column (:mod:`.schema_messages`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..base.errors import MAX_SHOWN, InputError, InputErrors, combined
from ..model.catalog import Catalog, LabelIndex, Model, close_matches, load_catalog
from .benchpoints import BenchPoint
from .rules import STATED, context_problem, measured_problems, requirements_problems, speculative_problems
from .schema import Requirements
from .schema_messages import (
    _clean_loc,
    _dotted,
    _format,
    _model_at,
    _short,
    _value_at,
    best_key,
)
from .schema_words import _plain, did_you_mean, guesses
from .schema_workload import SCHEMA_VERSION, Measured, Workload
from .yamlpositions import Located
from .yamlsafe import load_file, load_text


class Loaded(BaseModel):
    """Validated requirements plus what the engine needs to know about where they came from."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    req: Requirements
    models: dict[str, Model]  # workload model string -> resolved model (catalog or config.json)
    source: str  # file name for messages
    bench: dict[int, tuple[BenchPoint, ...]] = {}  # workload index -> its benchmark points
    # doubtful targets (inputs/doubts.py), each with its file, line and the fix: the CLI prints them
    warnings: tuple[str, ...] = ()


def parse(located: Located, filename: str) -> Requirements:
    data = located.data
    if not isinstance(data, dict):
        raise InputError("the top level must be a mapping (key: value lines)", file=filename,
                         line=1, column=1)
    version = data.get("schema_version", SCHEMA_VERSION)
    if type(version) is not int or version != SCHEMA_VERSION:
        pos = located.position(("schema_version",))
        if isinstance(version, str) and version.strip() == str(SCHEMA_VERSION):
            msg = f"write the version as a number without quotes: `schema_version: {SCHEMA_VERSION}`"
        elif isinstance(version, int | float) and not isinstance(version, bool):
            msg = (f"schema_version {_plain(version)} is not supported; this llmsizer reads "
                   f"`schema_version: {SCHEMA_VERSION}`")
        else:
            shown = _short(version) if isinstance(version, str) else (
                "nothing" if version is None else type(version).__name__)
            msg = (f"must be the number {SCHEMA_VERSION} (found {shown}); write "
                   f"`schema_version: {SCHEMA_VERSION}`")
        raise InputError(msg, file=filename, line=pos[0] if pos else None,
                         column=pos[1] if pos else None, field="schema_version")
    try:
        return Requirements.model_validate(data)
    except ValidationError as exc:
        raise combined(_problems(exc, data, located, filename)) from None


def _problems(exc: ValidationError, data: dict[str, Any], located: Located,
              filename: str) -> list[InputError]:
    """Every problem pydantic found, in file order, each told once (issue 25)."""
    errors: list[dict[str, Any]] = [dict(e) for e in exc.errors(include_input=False,
                                                                 include_url=False)]
    # A misspelt key shows up as 'unknown key' AND 'missing key': the first explains both.
    suggested: set[tuple[str | int, ...]] = set()
    for e in errors:
        loc = _clean_loc(tuple(e["loc"]), data)
        if e["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
            owner = _model_at(loc)
            best = best_key(loc[-1], sorted(owner.model_fields), data, loc) if owner else None
            if best:
                suggested.add((*loc[:-1], best))
    seen: set[tuple[str | int, ...]] = set()
    found: list[InputError] = []
    for e in errors:
        loc = _clean_loc(tuple(e["loc"]), data)
        if (e["type"] == "missing" and loc in suggested) or loc in seen:
            continue  # told by the unknown key's suggestion, or a second branch of one field
        seen.add(loc)
        found.append(_format(e, data, located, filename))
    told = {(_clean_loc(tuple(e["loc"]), data), str(e["msg"]).removeprefix("Value error, "))
            for e in errors if e["type"] == "value_error"}
    for loc, msg in _rule_problems(data, errors, suggested):
        if (loc, msg) not in told:  # a rule pydantic reached is told once
            found.append(_format({"type": "value_error", "loc": loc, "msg": msg}, data,
                                 located, filename))
    found.sort(key=lambda p: (p.line is None, p.line or 0, p.column or 0))
    return found


def _rule_problems(data: dict[str, Any], errors: list[dict[str, Any]],
                   suggested: set[tuple[str | int, ...]]) -> list[tuple[tuple[str | int, ...], str]]:
    """The cross-field rules (inputs/rules.py) on the raw data, which pydantic does not reach
    once a field fails: so that a file's every problem is told in one run. A value that failed
    its own check, and a key written misspelt (its suggestion), are :data:`STATED`."""
    view = _copy(data)
    for e in errors:
        loc = _clean_loc(tuple(e["loc"]), data)
        if e["type"] != "value_error" or not isinstance(_value_at(data, loc), dict):
            _mark(view, loc, exists=True)  # (a block's own rule leaves the block readable)
    for loc in suggested:
        _mark(view, loc, exists=False)
    found: list[tuple[tuple[str | int, ...], str]] = []
    workloads = view.get("workloads")
    for i, w in enumerate(workloads if isinstance(workloads, list) else []):
        if not isinstance(w, dict):
            continue
        found += [(("workloads", i), msg) for msg in Workload.problems_of(w)]
        for block, rules in (("measured", measured_problems), ("speculative", speculative_problems)):
            if isinstance(w.get(block), dict):
                found += [(("workloads", i, block), msg) for msg in rules(w[block])]
    return found + [((), msg) for msg in requirements_problems(view)]


def _copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    return [_copy(v) for v in node] if isinstance(node, list) else node


def _mark(view: dict[str, Any], loc: tuple[str | int, ...], *, exists: bool) -> None:
    """Set the value at ``loc`` to :data:`STATED`: one that is there (``exists``), or a key
    absent from its mapping. A whole workload, or the file, is never marked: the rules are
    about what is inside them."""
    if len(loc) < 2 or (loc[0] == "workloads" and len(loc) < 3):
        return
    parent: Any = view
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return
    last = loc[-1]
    in_list = (exists and isinstance(parent, list) and isinstance(last, int)
               and not isinstance(last, bool) and -len(parent) <= last < len(parent))
    if in_list or (isinstance(parent, dict) and (last in parent) == exists):
        parent[last] = STATED


def _err_at(located: Located, filename: str, loc: tuple[str | int, ...], msg: str) -> InputError:
    pos = located.position(loc)
    return InputError(msg, file=filename, line=pos[0] if pos else None,
                      column=pos[1] if pos else None, field=_dotted(loc))


def _bare(text: str) -> str:
    return re.sub(r"[-_ .]", "", text.casefold())


_TYPOGRAPHIC = "\u201c\u201d\u2018\u2019\u201e\u201a\u00ab\u00bb"  # “ ” ‘ ’ „ ‚ « »


def named_as(kind: str, value: str, meant: str) -> str:
    """The message's start for an id spelt otherwise (:func:`spelled_as`), the id to write
    following it; the spelling rule only where the spelling is all that differs."""
    why = (" (ids are lower case, with the catalog's hyphens and dots)"
           if _bare(value) == _bare(meant) else "")
    if value.strip()[:1] in _TYPOGRAPHIC or value.strip()[-1:] in _TYPOGRAPHIC:
        # pasted from a word processor or chat: YAML keeps such quotes as part of the text
        why = (" (\u201c \u201d and \u2018 \u2019 are a word processor's quotes: YAML keeps "
               "them as part of the id; type plain quotes \" or none)")
    return f"unknown {kind} {_short(value)}: the catalog names it {meant}{why}; write"


def spelled_as(value: str, names: Iterable[str], kind: str) -> str | None:
    """The one catalog id ``value`` spells otherwise (case, hyphens, spaces, dots: `H100-SXM`,
    `h100 sxm`), or names by a label the catalog knows (a GPU's or model's name, Hugging Face
    id or alias: `Llama-3.1-70B-Instruct`, `NVIDIA H100 SXM`), or None: then the fix is
    certain, and told alone rather than as three guesses and the catalog's every id."""
    names = list(names)
    same = [n for n in names if _bare(n) == _bare(value)]
    if len(same) == 1:
        return same[0]
    if kind not in ("GPU", "model") or sum(_bare(n).startswith(_bare(value)) for n in names) > 1:
        return None  # `h200` begins h200-sxm and h200-nvl: the catalog's alias is no certainty
    labels = LabelIndex(load_catalog())
    meant = labels.gpu(value) if kind == "GPU" else labels.model(value)
    return meant if meant in names else None


# What an unknown model may be instead of a catalog id, in a file's words (the web app says it
# in the form's: web/service.py, web_words)
CONFIG_HINT = " (or the path of a Hugging Face config.json next to this file)"


class UnknownId(InputError):
    """A catalog id the catalog lacks, with what its message is made of: the ``kind`` ('GPU',
    'model', 'platform' ...), the ``value`` written, the one id it surely ``meant`` or the
    ``close`` ones, and every id of the table with its name (``choices``). The CLI names ids
    (the file takes ids); the web app the names its form lists (web/service.py)."""

    def __init__(self, message: str, *, kind: str = "", value: str = "",
                 meant: str | None = None, close: tuple[str, ...] = (),
                 choices: tuple[tuple[str, str], ...] = (), **where: Any) -> None:
        self.kind, self.value, self.meant = kind, value, meant
        self.close, self.choices = close, choices
        super().__init__(message, **where)


def _named(cid: str, name: str) -> str:
    """A catalog id with its name, where the name says more than the id: `h100-sxm (NVIDIA
    H100 SXM 80GB)`, but `gpt-oss-20b` alone."""
    # a name's own brackets flattened: "dgx-h100 (NVIDIA DGX H100, 8x H100 SXM5 80GB)", not
    # "dgx-h100 (NVIDIA DGX H100 (8x H100 SXM5 80GB))"
    flat = re.sub(r" \(([^()]*)\)", r", \1", name)
    return cid if _bare(name) == _bare(cid) else f"{cid} ({flat})"


# the command that lists a kind of catalog id (estimate's options name it too: options.py)
_LISTINGS = {"model": "llmsizer catalog models", "GPU": "llmsizer catalog gpus",
             "platform": "llmsizer catalog platforms"}


def _unknown(located: Located, filename: str, value: str, table: dict[str, Any], kind: str,
             loc: tuple[str | int, ...]) -> InputError:
    ids = sorted(table)
    choices = tuple((k, str(getattr(table[k], "name", k))) for k in ids)
    hint = CONFIG_HINT if kind == "model" else ""
    pos = located.position(loc)
    where_at: dict[str, Any] = {"file": filename, "line": pos[0] if pos else None,
                                "column": pos[1] if pos else None, "field": _dotted(loc)}
    if (meant := spelled_as(value, ids, kind)) is not None:
        return UnknownId(f"{named_as(kind, value, meant)} {meant}{hint}", kind=kind, value=value,
                         meant=meant, choices=choices, **where_at)
    close = tuple(close_matches(value, ids))
    guess = id_guesses(value, close, table)
    # with a guess, the command that lists them rather than the list itself (review round 25:
    # "did you mean llama-3.1-70b?" was followed by all 41 models, a 700-character line)
    listing = _LISTINGS.get(kind) if guess != "." else None
    where = f"`{listing}` lists them all" if listing else f"The catalog's {kind}s: {', '.join(ids)}"
    return UnknownId(f"unknown {kind} {_short(value)}{guess} {where}{hint}", kind=kind,
                     value=value, close=close, choices=choices, **where_at)


def id_guesses(value: str, close: Iterable[str], table: dict[str, Any]) -> str:
    """': did you mean h100-sxm (NVIDIA H100 SXM 80GB)?', or '.' without a guess: the file
    and the command line take ids, each told with its name, which `llmsizer catalog` and the
    documents show (a typo of an id is often a half-remembered name). Which ids and the
    wording are the web app's too (schema_words.guesses and did_you_mean): one guess, the
    closest (session 23: brackets in brackets for three); only a beginning that several ids
    share (`h100`: h100-sxm, h100-nvl, h100-pcie) names those it begins."""
    names = {k: str(getattr(v, "name", k)) for k, v in table.items()}
    return did_you_mean([_named(c, names[c]) for c in guesses(value, close, names)])


def _unknown_ids(located: Located, filename: str, catalog: Catalog) -> list[InputError]:
    """The catalog ids a file names that the catalog lacks, read from the raw data. Told
    with the schema's problems when the schema fails, so that a file with both kinds is
    fixed in one run (``resolve`` checks them again, with the rest, once the schema holds)."""
    data = located.data
    found: list[InputError] = []

    def check(value: Any, table: dict[str, Any], kind: str, loc: tuple[str | int, ...]) -> None:
        if isinstance(value, str) and value not in table:
            found.append(_unknown(located, filename, value, table, kind, loc))

    hardware = data.get("hardware")
    if isinstance(hardware, dict):
        gpus = hardware.get("gpus")
        for i, gid in enumerate(gpus if isinstance(gpus, list) else []):
            check(gid, catalog.gpus, "GPU", ("hardware", "gpus", i))
        check(hardware.get("platform"), catalog.platforms, "platform", ("hardware", "platform"))
    costs = data.get("costs")
    if isinstance(costs, dict):
        for section, table, kind in (("gpu_prices", catalog.gpus, "GPU"),
                                     ("cloud_gpu_hour", catalog.gpus, "GPU"),
                                     ("node_prices", catalog.platforms, "platform")):
            prices = costs.get(section)
            for key in prices if isinstance(prices, dict) else {}:
                check(key, table, kind, ("costs", section, key))
    workloads = data.get("workloads")
    for i, w in enumerate(workloads if isinstance(workloads, list) else []):
        if not isinstance(w, dict) or w.get("kind", "generate") != "generate":
            continue  # an encoder's model is checked against its task once the kind is valid
        model = w.get("model")
        names = model if isinstance(model, list) else [model]
        for k, name in enumerate(names):
            if isinstance(name, str) and not name.endswith(".json"):
                check(name, catalog.models, "model",
                      ("workloads", i, "model") + ((k,) if isinstance(model, list) else ()))
    return found


def _raw_context_problems(located: Located, catalog: Catalog) -> list[InputError]:
    """The context-window check (:func:`.rules.context_problem`) on the raw data of a file
    whose schema failed, for its catalog models and whole-number token counts."""
    found: list[InputError] = []
    workloads = located.data.get("workloads")
    for i, w in enumerate(workloads if isinstance(workloads, list) else []):
        if not isinstance(w, dict) or w.get("kind", "generate") != "generate":
            continue
        prompt, output, stated = (w.get(k) for k in ("prompt_tokens", "output_tokens",
                                                      "max_context_tokens"))
        if type(prompt) is not int or type(output) is not int or (
                stated is not None and type(stated) is not int):
            continue
        model_at = w.get("model")
        names: list[Any] = model_at if isinstance(model_at, list) else [model_at]
        key = "prompt_tokens" if stated is None else "max_context_tokens"
        for name in names:
            model = catalog.models.get(name) if isinstance(name, str) else None
            msg = model and context_problem(str(name), model.max_context, prompt, output, stated)
            if msg:
                found.append(_err_at(located, located.filename, ("workloads", i, key), msg))
    return found


def _parse_told(located: Located, catalog: Catalog) -> Requirements:
    """:func:`parse`, with the unknown catalog ids added to the schema's problems."""
    try:
        return parse(located, located.filename)
    except InputError as exc:
        if not isinstance(located.data, dict):
            raise
        extra = [*_unknown_ids(located, located.filename, catalog),
                 *_raw_context_problems(located, catalog)]
        if not extra:
            raise
        schema = exc.problems if isinstance(exc, InputErrors) else [exc]
        told = {p.field for p in schema}
        merged = [*schema, *(p for p in extra if p.field not in told)]
        merged.sort(key=lambda p: (p.line is None, p.line or 0, p.column or 0))
        more = exc.more if isinstance(exc, InputErrors) else 0
        raise (merged[0] if len(merged) == 1 and not more
               else InputErrors(merged[:MAX_SHOWN], len(merged[MAX_SHOWN:]) + more)) from None


def resolve(req: Requirements, located: Located, path: Path, catalog: Catalog, *,
            models: dict[str, Model] | None = None,
            bench: dict[int, tuple[BenchPoint, ...]] | None = None) -> Loaded:
    """Check every catalog id the requirements name; resolve models (catalog or config.json)
    and read the benchmark files of measured workloads.

    ``models`` (config.json models by workload model string) and ``bench`` (points by
    workload index) are given when the requirements come from a workbook that embeds them
    (:mod:`llmsizer.documents.reread`): then no file beside the requirements is read."""
    fname = located.filename
    problems: list[InputError] = []  # every one is told at once (issue 25)

    def known(value: str, table: dict[str, Any], kind: str, loc: tuple[str | int, ...]) -> bool:
        if value not in table:
            problems.append(_unknown(located, fname, value, table, kind, loc))
        return value in table

    for i, gid in enumerate(req.hardware.gpus or []):
        known(gid, catalog.gpus, "GPU", ("hardware", "gpus", i))
    if req.hardware.platform and known(req.hardware.platform, catalog.platforms, "platform",
                                       ("hardware", "platform")):
        plat = catalog.platforms[req.hardware.platform]
        for i, gid in enumerate(req.hardware.gpus or []):
            if gid in catalog.gpus and gid not in plat.gpus:
                problems.append(_err_at(
                    located, fname, ("hardware", "gpus", i),
                    f"GPU {gid!r} does not fit platform {req.hardware.platform!r}, "
                    f"which takes {', '.join(plat.gpus)}"))
    for section in ("gpu_prices", "cloud_gpu_hour"):
        for gid in getattr(req.costs, section):
            known(gid, catalog.gpus, "GPU", ("costs", section, gid))
    for pid in req.costs.node_prices:
        known(pid, catalog.platforms, "platform", ("costs", "node_prices", pid))
    resolved: dict[str, Model] = {}
    failed: set[str] = set()
    points: dict[int, tuple[BenchPoint, ...]] = {}
    for i, w in enumerate(req.workloads):
        if w.kind != "generate":
            # embed/rerank models: catalogs/embedders.yaml, of the workload's own task
            pool = {k: e for k, e in catalog.embedders.items() if e.task == w.kind}
            if known(w.model_id, pool, f"{w.kind} model", ("workloads", i, "model")):
                problems += _pair_problems(w, i, pool, located)
            if w.engine is not None:
                known(w.engine, catalog.encoder_engines, "encoder engine",
                      ("workloads", i, "engine"))
            continue
        if w.measured and known(w.measured.gpu, catalog.gpus, "GPU",
                                ("workloads", i, "measured", "gpu")) and w.measured.file is not None:
            if bench is not None:
                points[i] = bench.get(i, ())
            else:
                try:
                    points[i] = _bench_points(w.measured, located, path, catalog, i)
                except InputError as exc:
                    problems.append(exc)
        for k, name in enumerate(w.models):
            # an alternative's own list item, so that a message points at its line
            loc: tuple[str | int, ...] = ("workloads", i, "model") + (
                (k,) if isinstance(w.model, list) else ())
            if name in resolved or name in failed:
                continue  # a model named by several workloads is read, and told, once
            if name.endswith(".json"):
                from .modelconfig import model_from_config

                if models is not None and name in models:
                    resolved[name] = models[name]
                    continue
                try:
                    resolved[name] = model_from_config(path.parent, name)
                except InputError as exc:
                    problems.append(_err_at(located, fname, loc, exc.message))
                    failed.add(name)
            elif known(name, catalog.models, "model", loc):
                resolved[name] = catalog.models[name]
            else:
                failed.add(name)
    for i, w in enumerate(req.workloads):
        spec = w.speculative
        if spec is None or spec.acceptance_length is not None:
            continue
        for name in w.models:
            if name in resolved and resolved[name].mtp_acceptance_length(spec.draft_tokens) is None:
                published = resolved[name].mtp_acceptance
                problems.append(_err_at(
                    located, fname, ("workloads", i, "speculative"),
                    f"no published MTP acceptance length for {name} with "
                    f"{spec.draft_tokens} drafted token{'s' if spec.draft_tokens > 1 else ''}"
                    + (" (published for 1 drafted token only)" if len(published) == 1
                       else f" (published for 1 to {len(published)})" if published else "")
                    + "; state acceptance_length (mean tokens a step yields, e.g. 2.5)"
                    # a model with no published figure may have no MTP module at all
                    + ("" if published else ", or, if the model has no multi-token-prediction "
                       "module, method: eagle, draft_model or ngram")))
    problems += _context_problems(req, resolved, located)
    if problems:
        problems.sort(key=lambda p: (p.line is None, p.line or 0, p.column or 0))
        raise combined(problems)
    return Loaded(req=req, models=resolved, source=fname, bench=points,
                  warnings=tuple(_unquoted(req, located) + _doubts(req, located)))


def _unquoted(req: Requirements, located: Located) -> list[str]:
    """A name whose typographic quotes the schema dropped (schema_workload.without_quotes),
    told with its line: the outputs print it without them."""
    names = [(("account", "name"), req.account.name)] + [
        (("workloads", i, "name"), w.name) for i, w in enumerate(req.workloads)]
    out = []
    for loc, name in names:
        written = _value_at(located.data, loc)
        if isinstance(written, str) and written != name:
            out.append(str(_err_at(
                located, located.filename, loc,
                # a name is one line of plain text (schema_workload.Text): shown as it is
                f"the typographic quotes around {written[:60]} are left out: the proposal "
                f"names it {name[:60]}")))
    return out


def _doubts(req: Requirements, located: Located) -> list[str]:
    """Each doubtful target (:func:`.doubts.target_doubts`) as the command line tells it."""
    from .doubts import target_doubts

    out = []
    for d in target_doubts(req):
        where = _err_at(located, located.filename, ("workloads", d.workload, "targets", d.key),
                        d.text + (f"; if so, write `{d.fix}`" if d.fix else ""))
        out.append(str(where))
    return out


def _context_problems(req: Requirements, resolved: dict[str, Model],
                      located: Located) -> list[InputError]:
    """Each request longer than its model's context window (:func:`.rules.context_problem`)."""
    found = []
    for i, w in enumerate(req.workloads):
        if w.kind != "generate" or w.prompt_tokens is None or w.output_tokens is None:
            continue
        key = "prompt_tokens" if w.max_context_tokens is None else "max_context_tokens"
        for name in w.models:
            model = resolved.get(name)
            msg = model and context_problem(name, model.max_context, w.prompt_tokens,
                                            w.output_tokens, w.max_context_tokens)
            if msg:
                found.append(_err_at(located, located.filename, ("workloads", i, key), msg))
    return found


def _pair_problems(w: Workload, i: int, pool: dict[str, Any],
                   located: Located) -> list[InputError]:
    """A query-passage pair longer than the reranker reads is cut off by the serving engine:
    the scores would rank truncated passages, and the sizing would time tokens never read."""
    longest = pool[w.model_id].max_sequence
    if w.kind != "rerank" or w.tokens_per_pair is None or w.tokens_per_pair <= longest:
        return []
    fit = sorted((k for k, e in pool.items() if e.max_sequence >= w.tokens_per_pair),
                 key=lambda k: pool[k].max_sequence)
    return [_err_at(located, located.filename, ("workloads", i, "tokens_per_pair"),
                    f"{w.model_id} reads at most {longest:,} tokens of a query and passage, but "
                    f"tokens_per_pair is {w.tokens_per_pair:,}; cut the passages into shorter "
                    "chunks, or choose a reranker that reads longer pairs"
                    + (f" ({', '.join(fit)})" if fit else ""))]


def _bench_points(m: Measured, located: Located, path: Path, catalog: Catalog,
                  i: int) -> tuple[BenchPoint, ...]:
    """The points of a workload's benchmark files, checked against its measured block."""
    from .benchfiles import read_bench_files
    from .benchpoints import gpu_names_conflict, group_gpus

    fname = located.filename
    loc: tuple[str | int, ...] = ("workloads", i, "measured", "file")
    try:
        found = read_bench_files(path.parent, m.files, m.format)
    except InputError as exc:
        raise _err_at(located, fname, loc, exc.message) from None
    gpu = catalog.gpus[m.gpu]
    for p in found:
        where = f"benchmark file {p.file!r}"
        if gpu_names_conflict(p.gpu_name, gpu.name):
            raise _err_at(located, fname, ("workloads", i, "measured", "gpu"),
                          f"{where} ran on {p.gpu_name!r}, but the block says gpu: {m.gpu} "
                          f"({gpu.name}); state the GPU the benchmark ran on")
        group = group_gpus(p)
        if group is not None and group != m.gpus_per_replica:
            raise _err_at(located, fname, ("workloads", i, "measured", "gpus_per_replica"),
                          f"{where} ran {group} GPUs per model copy (tp {p.tp}, pp {p.pp or 1}), "
                          f"but the block says gpus_per_replica: {m.gpus_per_replica}")
        if p.gpu_count is not None and m.gpu_count is not None and p.gpu_count != m.gpu_count:
            raise _err_at(located, fname, ("workloads", i, "measured", "gpu_count"),
                          f"{where} ran on {p.gpu_count} GPUs, but the block says gpu_count: "
                          f"{m.gpu_count}; delete gpu_count (the file states it)")
        if p.gpu_count is not None and p.gpu_count % m.gpus_per_replica:
            raise _err_at(located, fname, ("workloads", i, "measured", "gpus_per_replica"),
                          f"{where} ran on {p.gpu_count} GPUs, not a whole number of replicas of "
                          f"gpus_per_replica: {m.gpus_per_replica}")
    return tuple(found)


def load(path: Path | str, catalog: Catalog | None = None) -> Loaded:
    """Read, validate and resolve one requirements file; raises InputError."""
    p = Path(path)
    located = load_file(p)
    catalog = catalog or load_catalog()
    return resolve(_parse_told(located, catalog), located, p, catalog)


def load_from_text(text: str | bytes, source: str, catalog: Catalog | None = None, *,
                   models: dict[str, Model] | None = None) -> Loaded:
    """Read, validate and resolve requirements given as text (the web app's form and
    uploads); ``source`` names them in messages. Nothing beside the text is read: a
    config.json model must come in ``models`` (its content, read by the caller), and a
    benchmark file, which the CLI reads next to the YAML, is refused."""
    located = load_text(text, source)
    catalog = catalog or load_catalog()
    req = _parse_told(located, catalog)
    given = models or {}
    for i, w in enumerate(req.workloads):
        if w.measured is not None and w.measured.file is not None:
            raise _err_at(located, located.filename, ("workloads", i, "measured", "file"),
                          "benchmark files are read only by the command line (`llmsizer "
                          "report FILE`, next to the YAML); here give "
                          "tokens_per_s_per_replica instead")
        for name in w.models:
            if name.endswith(".json") and name not in given:
                raise _err_at(located, located.filename, ("workloads", i, "model"),
                              f"config file {_short(name)} is not read here (no file beside "
                              "the requirements is); choose a catalog model, or size a "
                              "config.json model with `llmsizer size FILE`")
    # every file the requirements could name was refused or given above: the path is unused
    return resolve(req, located, Path(located.filename), catalog, models=given, bench={})
