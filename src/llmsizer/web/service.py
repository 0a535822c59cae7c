"""Sizing for the web app: requirements text → the same loader and engine as the CLI →
what the pages show. A bounded in-memory cache (keyed by the requirements text's digest,
so only someone who sends the same text gets the same result) is all that is kept
between requests.

The numbers and the charts are two steps: :func:`size_text` is what a live update needs
(the engine, the plan and the debugger, ~50 ms), :func:`charts` draws the memory and
throughput charts (~70 ms of matplotlib) once per cached sizing, for the page's second
request. An update therefore returns without waiting for the drawing.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import InputError, LlmsizerError
from ..documents.charts import PHONE_WIDTH_IN, drawn_width
from ..documents.proposal.alternatives import memory_svg, shown_headrooms
from ..documents.proposal.debugger import DebugTable, debugger_tables
from ..documents.proposal.format import (
    Formatter,
    cloud_unpriced_words,
    option_label,
)
from ..documents.proposal.models import models_context
from ..documents.proposal.plan import PlanView, plan_context
from ..documents.proposal.summary import confidence_total
from ..documents.proposal.views import WorkloadView, load_sentence, streams_sentence
from ..documents.proposal.walkthrough import workload_view
from ..inputs.loader import CONFIG_HINT, UnknownId, load_from_text
from ..inputs.modelconfig import model_from_json
from ..inputs.schema_messages import _short
from ..inputs.schema_words import did_you_mean, guesses
from ..inputs.yamlsafe import load_text
from ..model.catalog import Catalog, Model, load_catalog
from ..model.names import platform_words
from ..sizing.engine import size
from ..sizing.results import Result
from . import fields, forms, percent
from .forms import Configs

FORM_SOURCE = "requirements"  # how messages name the form's requirements
CACHE_ENTRIES = 32
_WORKLOAD = re.compile(r"^workloads\[\d+\]$")


@dataclass(frozen=True)
class Problem:
    """One problem of the requirements as the page tells it: the form field it belongs to
    (the loader's path, so the page marks that field), the words beside it, and the line in
    the results panel (the field's label, then the words)."""

    field: str | None
    message: str
    text: str


@dataclass
class Sized:
    """One sizing as the pages show it, or the error that stopped it."""

    yaml_text: str
    result: Result | None = None
    error: str | None = None  # the CLI's line
    error_field: str | None = None  # the form field it belongs to
    error_message: str | None = None  # the words beside the field
    # every problem of the requirements, told at once as the CLI tells them (the first is
    # error_field/error_message): (field or None, the words beside it, the line in the panel)
    problems: tuple[Problem, ...] = ()
    more: int = 0  # problems beyond those told (base/errors.py, MAX_SHOWN)
    debugger: list[DebugTable] = field(default_factory=list)
    fmt: Formatter | None = None
    plan: PlanView | None = None
    names: dict[str, str] = field(default_factory=dict)  # option id -> its words
    charts: Charts | None = None  # drawn on the charts request, then kept with the sizing

    def name(self, option_id: str | None) -> str:
        """An option in the customer's words (the pages never show its id)."""
        return self.names.get(option_id or "", "")

    def share(self, index: int) -> dict[str, Any]:
        """Workload ``index``'s part of the plan, as the PDF's cost columns and the Summary
        sheet show it: its pool (``pool``: batch, shared or not) and its share of the pool's
        replicas and of its node group's GPUs and costs (plan.pools[].shares in the JSON,
        WORKLOAD_SHARE_CALCULATIONS); {} outside the plan."""
        if self.result is None:
            return {}
        for pool in self.result.plan.pools:
            if index in pool.workload_indices and pool.shares:
                return {"pool": pool, "shared": len(pool.workload_indices) > 1,
                        **pool.shares[pool.workload_indices.index(index)]}
        return {}

    def platform_name(self, platform_id: str) -> str:
        """A platform as the PDF's alternatives table shows it under the option (options that
        differ only in their server would otherwise read alike)."""
        return platform_words(catalog().platforms, platform_id)

    def gpu_name(self, gpu_id: str) -> str:
        """A GPU by its name (a retrieval option is one GPU type)."""
        g = catalog().gpus.get(gpu_id)
        return g.name if g else gpu_id

    @property
    def rented(self) -> bool:
        """The account rents (deployment.recommended): its options are priced and ranked by
        the cloud's cost per year, as the terminal and the PDF list them."""
        return self.result is not None and self.result.deployment.recommended == "cloud"

    def cloud_unpriced(self) -> str:
        """Why the cloud has no total (the PDF's words), or "" when every GPU is priced."""
        if self.result is None or not self.result.totals.cloud_unpriced:
            return ""
        return cloud_unpriced_words(
            self.result.totals.cloud_unpriced, catalog().gpus, True,
            f"Costs, price overrides, {fields.PRICE_LABELS['cloud_gpu_hour']}",
            self.result.totals.cloud_unheld)

    def models(self) -> dict[str, Any]:
        """Alternative models side by side, as the PDF's summary words them
        (``model_choices``, ``model_quality``)."""
        if self.result is None or self.fmt is None:
            return {"model_choices": []}
        return models_context(self.result, self.fmt)

    def load(self, index: int) -> str:
        """How workload ``index``'s load, stated as a request rate or a population, became the
        users served at the same time: the PDF walk-through's sentence (review round 20: a
        help desk of 2,000 named users never told the 147 users it was sized for); "" for a
        load stated as concurrent users (the form's own figure)."""
        if self.result is None or self.fmt is None:
            return ""
        w = self.result.workloads[index]
        source = w.best or (w.options[0] if w.options else None)
        if source is None or float(source.values.get("peak_request_rate_per_s", 0.0)) <= 0:
            return ""
        return load_sentence(w, source.values, self.fmt.count, self.fmt.decimal)

    def streams(self, index: int) -> str:
        """What more streams would save for workload ``index``: the PDF's workload callout's
        sentence (views.streams_sentence, read from its recommendation's rows); "" where its
        stated streams do not bind."""
        if self.result is None or self.fmt is None:
            return ""
        best = self.result.workloads[index].best
        return streams_sentence(best.values, self.fmt.count) if best is not None else ""

    def confidence(self) -> dict[str, int] | None:
        """The GPUs bought at both ends of the model's p90 throughput error, as the PDF's
        summary states them beside the recommendation (review round 20: the page never did)."""
        return confidence_total(self.result) if self.result is not None else None


@dataclass(frozen=True)
class Charts:
    """The charts at the PDF's width, and again at a phone's (``phone_``: shown in its place
    below 640 px, app.css), each workload's throughput chart by its index in ``views``."""

    views: list[WorkloadView]
    memory_chart: Any
    phone_memory_chart: Any = None
    phone_throughput: tuple[Any, ...] = ()


class _Cache:
    """A small LRU of results by text digest; thread-safe (uvicorn runs sync routes on a
    thread pool)."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._data: OrderedDict[str, Sized] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Sized | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: str, value: Sized) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._entries:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


CACHE = _Cache(CACHE_ENTRIES)
CHARTS = threading.Lock()
_MISSING = re.compile(r"^required key '([a-z_]+)' is missing")
EMPTY = "required, and left empty"


def _load_field(path: str | None, message: str) -> str | None:
    """A load error the schema states for the whole workload ("named_users needs …", "state
    the load exactly one way …") goes beside the load's own field in the form; a required key
    the section lacks ("required key 'name' is missing" at account) beside that key's field."""
    missing = _MISSING.match(message)
    if missing:
        return f"{path}.{missing.group(1)}" if path else missing.group(1)
    if path is None or not _WORKLOAD.match(path):
        return path
    for key in ("concurrent_users", "requests_per_s", "named_users", "burstiness"):
        if message.startswith(key):
            return f"{path}.{key}"
    return f"{path}.load_as" if message.startswith("state the load") else path


WEB_CONFIG_HINT = (" (or choose your model's Hugging Face config.json under the workload's "
                   "Model field and press Use it)")


def web_words(message: str) -> str:
    """A loader message in the web app's words: an unknown model's "(or the path of a Hugging
    Face config.json next to this file)" fits a file on disk, not an upload (there is no
    folder): the form takes the config.json itself."""
    return message.replace(CONFIG_HINT, WEB_CONFIG_HINT)


_SYNTAX = re.compile(r"^(.*?):(\d+):(\d+): not valid YAML: ")


def syntax_words(message: str) -> str:
    """A file that is not YAML, told with its place in words ("acme.yaml is not valid YAML
    at line 5, column 13: …"), not as a compiler's "acme.yaml:5:13:" (session 20)."""
    return _SYNTAX.sub(r"\1 is not valid YAML at line \2, column \3: ", message, count=1)


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def unknown_words(exc: UnknownId) -> str:
    """An id the catalog lacks, in the form's words: the guesses by the names the form's lists
    and boxes show ('Llama 3.1 70B'), not the catalog ids of the CLI's message
    ('llama-3.1-70b'), which the form never shows (review round 20). The guesses are the
    CLI's, worded as the CLI's (inputs/schema_words.py guesses and did_you_mean; review round
    24: the web guessed three where the CLI guessed one): with no id close, the name closest
    to what was typed ('nvidia t4' -> NVIDIA L4), never every name of the list (24 GPUs,
    review round 21): the list, or the boxes of a list field, are beside the field."""
    names = dict(exc.choices)
    what = f"unknown {exc.kind} {_short(exc.value)}"
    hint = WEB_CONFIG_HINT if exc.kind == "model" else ""
    boxes = forms.field_kind(exc.field or "") == "list"  # an uploaded id shows as a ticked box
    if exc.meant is not None:
        if boxes:
            return (f"{what}: the boxes name it {names[exc.meant]}; tick that one and untick "
                    f"{_short(exc.value)}")
        return f"{what}: the list names it {names[exc.meant]}; choose that{hint}"
    # the CLI's guesses in the CLI's wording (schema_words: one home), each by its name
    said = [names[c] for c in guesses(exc.value, exc.close, names)]
    guess = did_you_mean(said)
    if (exc.field or "").startswith("costs."):
        # a price keyed by an unknown id: the form asks each catalog entry's price by its name
        return f"{what}{guess} The form asks the price of each one it knows, under its name"
    if boxes:
        which = "the one you meant" if said else "the ones to consider"
        return f"{what}{guess} Untick it and tick {which} in the boxes"
    if said:
        return f"{what}{guess} Or choose another from the list{hint}"
    return f"{what}{guess} None of the list's names is close to it: choose one from the list{hint}"


# The loader's hints for a number field (inputs/schema_messages.py, _type_hint) show the YAML
# line to write (`prompt_tokens: 300`); a form field takes the value alone.
_NUMBER_HINTS = (
    (r"write a plain number without units or quotes, e\.g\. `{key}: ([^`]+)`", "type a {kind} "
     "such as \\1"),
    (r"write a plain number without units: `{key}: ([^`]+)`(?: \(seconds: the unit is in the key "
     r"name\))?", "type the number alone: \\1"),
    (r"write the number without quotes: `{key}: ([^`]+)`", "type the number alone: \\1"),
    (r"write a whole number, e\.g\. (?:`{key}: )?([^`;,)\s]+)`?", "type a whole number such as \\1"),
    (r"write a number, e\.g\. `{key}: ([^`]+)`", "type a number such as \\1"),
)


def form_words(message: str, field: str | None) -> str:
    """A loader message for ``field`` in the form's words: where the CLI shows the YAML line
    to write ("e.g. `prompt_tokens: 300`"), the form says what to type in the field ("type a
    whole number such as 300"), and what to choose, tick or fill in where the file wrote the
    wrong shape (shape_words). The CLI's own words stay as they are (the file is its input)."""
    if not field:
        return message
    key = re.escape(field.rsplit(".", 1)[-1].split("[", 1)[0])
    kind = "whole number" if "must be a whole number" in message else "number"
    for pattern, words in _NUMBER_HINTS:
        message = re.sub(pattern.format(key=key), words.format(kind=kind), message)
    return shape_words(message, field)


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _names(ids: str, joined: str = ", ") -> list[str]:
    """Catalog ids as a message lists them ('h100-sxm, l40s'), as the form's boxes name them."""
    return [fields.display(i.strip()) for i in ids.split(joined) if i.strip()]


_TICK = "tick each one to consider in the boxes"
_FILL = "fill in its fields in the form"
_IN_FILE_BOOL = ("choose yes or no in the list (in a file, write true or false: yes, no, on "
                 "and off are read as text)")


def shape_words(message: str, field: str) -> str:
    """The loader's advice on a value of the wrong shape, in the form's words (review round
    20): the CLI says which YAML to write (`gpus: [h100-sxm]`, delete the dashes, quotes); the
    form has a list to choose from, boxes to tick, fields to fill in. What only the file can
    get wrong is said as the file's, after the form's way."""
    kind = forms.field_kind(field)
    key = re.escape(field.rsplit(".", 1)[-1].split("[", 1)[0])
    sub = functools.partial(re.sub, count=1)
    if kind == "bool":
        message = sub(rf"write it without quotes: `{key}: (true|false)`",
                      r"choose yes or no in the list (in a file, write \1 without quotes)",
                      message)
        message = sub(rf"write `{key}: true` or `{key}: false` \(yes/no/on/off are read as "
                      r"text, not as a boolean\)", _IN_FILE_BOOL, message)
    if kind == "list":
        message = sub(
            rf"write a list, e\.g\. `{key}: \[([^\]`]*)\]`(?:; ('[^']*') is not a catalog GPU "
            r"id(?: \(did you mean (.+?)\?\))?)?",
            lambda m: f"{_TICK}, e.g. {_and(_names(m[1]))}" + (
                f"; {m[2]} is not in the list" if m[2] else "") + (
                f" (did you mean {_either(_names(m[3], ' or '))}?)" if m[3] else ""), message)
        message = sub(rf"write a list of the degrees to try, e\.g\. `{key}: \[([^\]`]*)\]`",
                      lambda m: f"tick the degrees to try, e.g. {_and(m[1].split(', '))}",
                      message)
        message = sub(r"write a list(?:: \[a, b\] or one `- item` per line|, e\.g\. \[h100-sxm\] "
                      r"or one '- item' per line|: start each item with `- ` \(e\.g\. "
                      r"`- name: \.\.\.`\), as in inputs/example\.yaml)", _TICK, message)
        # `gpus: [8]`: the form's box holds the id '8' whatever it reads
        message = sub(r"put it in quotes so it is read as text: \"[^\"]*\"", _TICK, message)
    if kind == "lines":
        message = sub(r"write a list, e\.g\. \[h100-sxm\] or one '- item' per line",
                      "type one a line", message)
    if kind == "group":
        message = message.replace("must be a mapping of `key: value` lines",
                                  "must be a group of fields")
        message = sub(rf"the lines under `{key}:` start with `- ` \(a list\): delete the dashes",
                      f"{_FILL} (in the file, the lines under {key} start with a dash: delete "
                      "the dashes)", message)
        message = sub(rf"write `{key}:` followed by `key: value` lines indented under it"
                      r"(?:, or e\.g\. `[^`]*`)?", _FILL, message)
        message = sub(r"each item is a workload: write `- name: ([^`]*)` and its other keys "
                      r"\(model:, targets:, \.\.\.\) on the lines below, lined up under name:",
                      r"each workload is a group of fields: fill in this one's in the form, "
                      r"starting with its name, \1", message)
    if field == "workloads":
        message = sub(r"write (?:a list: start each item with `- ` \(e\.g\. `- name: \.\.\.`\), "
                      r"as in inputs/example\.yaml|`workloads:` followed by one `- name: \.\.\.` "
                      r"item per workload \((?:see|as in) inputs/example\.yaml\))",
                      "add each workload with Add workload and fill in its fields", message)
    if kind == "choice":  # a list to choose from: `model: 5` read as a number
        message = sub(r"put it in quotes so it is read as text: `[^`]*`", "choose one in the list",
                      message)
    # a text field: the form's text is text whatever it reads (no quotes to put)
    message = sub(rf"put it in quotes so it is read as text: (?:`{key}: \"(.*)\"`|\"(.*)\")",
                  lambda m: f"type {m[1] if m[1] is not None else m[2]} in the field (in a "
                            "file, in quotes)", message)
    message = message.replace("; put the text in quotes", "; type it in the field as text")
    message = sub(rf"; write `{key}: ([A-Z]{{3}})`", r"; type \1", message)
    message = sub(r"has no value \(nothing after the colon\); write (.+), or delete the line if "
                  r"the key is optional", r"has no value (nothing after the colon in the file); "
                  r"type \1, or leave the field empty if it is optional", message)
    message = _LOAD_WAYS.sub(_load_words, message, count=1)
    return _unknown_key_words(message, field)


# The load stated more than one way (inputs/rules.py, inputs/kinds.py): the form has one
# chooser, "Load stated as", with the three ways by name (fields.LOAD_FORMS).
_LOAD_WAYS = re.compile(r"state the load exactly one way: .*?; found (.+)$")
_COUNT_WORDS = {2: "two", 3: "three"}
_LOAD_KEY_WAY = {"concurrent_users": "users", "requests_per_s": "rate",
                 "named_users": "population"}


def _load_words(m: re.Match[str]) -> str:
    names = {key: words for key, words, _ in fields.LOAD_FORMS}
    keys = re.findall(r"[a-z_]+", m[1])
    if keys == ["both"]:  # an embed/rerank workload: only a rate or a population is a load
        keys = ["requests_per_s", "named_users"]
    ways = [names[_LOAD_KEY_WAY[k]] for k in keys if k in _LOAD_KEY_WAY]
    every = _either([w for _, w, _ in fields.LOAD_FORMS])
    if not ways:
        return f"no load is stated; choose {every} and fill in its fields"
    return (f"the file states the load {_COUNT_WORDS[len(ways)]} ways ({' and '.join(ways)}); "
            f"choose one of {every}")


_UNKNOWN_KEY = re.compile(r"^unknown key ('(?:[^'\\]|\\.)*'|\"[^\"]*\")( \(did you mean "
                          r"([a-z0-9_]+)(?: or ([a-z0-9_]+))*\?\))?(.*?); allowed here: "
                          r"([a-z0-9_, ]+)$")


def _unknown_key_words(message: str, field: str) -> str:
    """A key the file writes that the schema lacks, told by the fields the form shows: the
    key the file meant by its label, the value to type in it, the group's fields."""
    m = _UNKNOWN_KEY.match(message)
    if m is None:
        return message
    head = f"the file's key {m[1]} is no field here"
    if m[2]:
        guesses = re.findall(r"(?:mean| or) ([a-z0-9_]+)", m[2])
        # no brackets around a label that carries its own: "(did you mean Headroom (%)?)"
        head += f"; the nearest is {_either([forms.key_label(field, g) for g in guesses])}"
    rest = m[5]
    fix = re.match(r"; write it as `([a-z0-9_]+): (.+)`", rest)
    rename = re.match(r"; rename it to `([a-z0-9_]+):`", rest)
    if fix:  # a fraction is typed in percent (`headroom: 0.25` -> 25)
        value = percent.shown(fix[2]) if percent.at(f"{field}.{fix[1]}") else fix[2]
        rest = f"; type {value} in {forms.key_label(field, fix[1])}" + rest[fix.end():]
    elif rename:
        rest = f"; use {forms.key_label(field, rename[1])}" + rest[rename.end():]
    if "`" in rest:
        rest = ""  # a file-only hint (a key under another group): the line says where
    labels = sorted({forms.key_label(field, k) for k in m[6].split(", ")}, key=str.casefold)
    return f"{head}{rest}; allowed here: {', '.join(labels)}"


def _problem(exc: InputError, data: dict[str, Any]) -> Problem:
    """One problem as the form tells it: the form has no lines, so the CLI's message goes
    under the field as the form labels it (the workload's name, the field's label), never
    the path in the generated YAML."""
    where = _load_field(exc.field, exc.message)
    message = (unknown_words(exc) if isinstance(exc, UnknownId)
               else form_words(web_words(exc.message), exc.field))
    if percent.at(exc.field):  # the form shows and takes this fraction in percent
        message = percent.words(message)
    if _MISSING.match(exc.message):
        # a required key missing is a field left empty: the loader's words name the YAML
        # key and an example line ("add it, e.g. `name: Acme Corp`"), not the form
        message = EMPTY
        if where == "account":  # every account field empty: its required one
            where = "account.name"
    if where is None:  # a rule across sections names its fields by their paths in the file
        where, message = forms.paths_words(message, data)
    words = forms.field_words(where, data) if where else ""
    return Problem(where, message, f"{words}: {message}" if words else message)


def upload_words(exc: InputError, name: str, data: dict[str, Any]) -> str:
    """A readable file's problems as the upload box lists them: the file's name, then each
    problem as the results panel tells it (the workload's name, the field's label, what to
    type) and the file's line, one a line; not the CLI's field paths
    ("acme.yaml:21:5: workloads[1].prompt_tokens: ..."), which the form does not show."""
    errors = getattr(exc, "problems", [exc])
    # the file's line stays: whoever fixes the file in an editor needs it
    problems = [f"{_problem(p, data).text} (line {p.line})" if p.line else
                _problem(p, data).text for p in errors]
    more = getattr(exc, "more", 0)
    # a sentence, as the results panel's (never the CLI's "acme.yaml: 3 problems:")
    if len(problems) == 1 and not more:
        return f"One problem to fix in {name}: {problems[0]}"
    lines = [f"{len(problems) + more} problems to fix in {name}:", *problems]
    if more:
        lines.append(f"and {more} more (fix these to see them)")
    return "\n".join(lines)


def _data(yaml_text: str) -> dict[str, Any]:
    """The requirements data of text the form wrote (the workloads' names for a message), or
    {} when the text does not load."""
    try:
        data = load_text(yaml_text, FORM_SOURCE).data
    except LlmsizerError:
        return {}
    return data if isinstance(data, dict) else {}


def catalog() -> Catalog:
    return load_catalog()


def models_of(configs: Configs) -> dict[str, Model]:
    """The config.json models the form carries (their content, never a path), read by the
    CLI's own reader."""
    return {path: model_from_json(text.encode("utf-8"), path) for path, text in configs}


def size_text(yaml_text: str, source: str = FORM_SOURCE, configs: Configs = ()) -> Sized:
    """Load and size requirements text (with the content of any config.json it names);
    errors become the CLI's line and its field."""
    key = hashlib.sha256(f"{source}\0{yaml_text}\0{configs!r}".encode()).hexdigest()
    hit = CACHE.get(key)
    if hit is not None:
        return hit
    out = Sized(yaml_text=yaml_text)
    cat = catalog()
    try:
        result = size(load_from_text(yaml_text, source, cat, models=models_of(configs)), cat)
    except InputError as exc:
        # every problem at once (a file's three problems showed one, one field marked:
        # review round 19), each beside its field
        data = _data(yaml_text)
        out.problems = tuple(_problem(p, data) for p in getattr(exc, "problems", [exc]))
        out.more = getattr(exc, "more", 0)
        first = out.problems[0]
        out.error_field, out.error_message = first.field, first.message
        out.error = first.text
    except LlmsizerError as exc:
        out.error = out.error_message = str(exc)
    else:
        # every headroom to the PDF's one precision (the university's pool: "26 %" in both)
        fmt = Formatter(result.account.currency).for_headrooms(shown_headrooms(result, cat))
        out.result, out.fmt = result, fmt
        out.names = {o.id: option_label(cat.gpus[o.gpu].name if o.gpu in cat.gpus else o.gpu,
                                        o.tp, o.weight_precision, o.kv_precision, o.values)
                     for w in result.workloads for o in w.options}
        out.plan = plan_context(result, cat)["plan"]
        out.debugger = debugger_tables(result, fmt)
    CACHE.put(key, out)
    return out


def charts(sized: Sized) -> Charts | None:
    """The memory and throughput charts of a sizing, drawn once and kept with it (so a
    repeated form, or the charts request right after its update, draws nothing)."""
    if sized.result is None or sized.fmt is None:
        return None
    # the charts reuse one matplotlib figure per kind and process (documents/charts.py):
    # the server's request threads draw one at a time
    with CHARTS:
        if sized.charts is None:
            result, cat, fmt = sized.result, catalog(), sized.fmt
            views = [workload_view(result, i, cat, fmt) for i in range(len(result.workloads))]
            with drawn_width(PHONE_WIDTH_IN):  # a phone's: no sideways scrolling, texts as printed
                narrow = [workload_view(result, i, cat, fmt) for i in range(len(views))]
                phone_memory = memory_svg(narrow, fmt)
            sized.charts = Charts(views, memory_svg(views, fmt), phone_memory,
                                  tuple(v.throughput_chart for v in narrow))
    return sized.charts
