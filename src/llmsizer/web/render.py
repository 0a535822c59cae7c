"""The pages' Jinja2 environment: the templates ship in this package (templates/), every
value is autoescaped (account names and notes never become HTML), an undefined name is an
error, not an empty string."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup, escape

from ..base.version import __version__
from ..documents.proposal.format import Formatter, customer_words, gpu_split, group_split
from ..documents.proposal.glossary import GLOSSARY
from ..documents.proposal.plan import group_cost_words, retrieval_cost_words
from ..documents.textcatalog import params_text
from ..documents.textoptions import TOP
from ..documents.textretrieval import best_retrieval
from ..sizing.results import Result, RetrievalWorkloadResult, WorkloadResult, slugify
from . import fields, forms
from .fields import display as display  # its home is fields (the error words use it too)
from .forms import Configs

_HERE = resources.files("llmsizer.web")
ARTICLE = "GenAI Physics, Capacity Planning, and Throughput Estimation"


def num(x: float) -> str:
    """A catalog figure as the catalog states it, with thousands separators (1,979.5 TFLOP/s,
    1,000 W): never a float's repr (1979.0), never more digits than the catalog gives."""
    return f"{float(x):,.3f}".rstrip("0").rstrip(".")


WIDE_CHOICE = 22


# a requirement key in the engine's and the schema's words ("Relax ttft_p95_s to at least
# 0.22 s", a field's help "state ttft_p95_s or ttft_p99_s"): the page names the form's field, the
# box the user types in, and a choice by the words its list shows (review round 20). Keys with
# an underscore only, so that no plain word ("engine") is taken for one; a vLLM flag the help
# names as vLLM's ("vLLM's gpu_memory_utilization") stays the flag.
_FIELDS = (*fields.KIND_FIELDS, *fields.LOAD_FIELDS, *fields.POLICY_FIELDS, *fields.COST_FIELDS)
_LABELS = {f.key.rsplit(".", 1)[-1]: f.label for f in _FIELDS}
_LABELS.update({c: w for f in _FIELDS for c, w in zip(f.choices, f.words, strict=False) if w})
_LABELS = {k: v for k, v in _LABELS.items() if "_" in k}
# a key by its section's path ("account.currency"): the field's label
_DOTTED_LABELS = {path: f.label for path, f in forms.FIELDS_BY_PATH.items()
                  if path.startswith(("account.", "policy."))}
_DOTTED = re.compile(r"(?<![\w.])(?:" + "|".join(
    re.escape(k) for k in sorted(_DOTTED_LABELS, key=len, reverse=True)) + r")(?![\w])")
_LABEL_KEYS = re.compile(r"(?<![\w.])(?<!vLLM's )(" + "|".join(
    re.escape(k) for k in sorted(_LABELS, key=len, reverse=True)) + r")(?!\w|\.\w)")


def form_terms(text: str) -> str:
    """Engine text as the page says it: the PDF's customer words, and a requirement key as the
    form's label in quotes ("Relax “First token, 95th percentile (s)” to at least 0.22 s")."""
    text = _LABEL_KEYS.sub(lambda m: f"“{_LABELS[m.group(1)]}”", customer_words(text))
    return _DOTTED.sub(lambda m: f"“{_DOTTED_LABELS[m.group(0)]}”", text)


def many(n: float, noun: str) -> str:
    """A count and its noun as the PDF's ``many`` filter writes them: "1 GPU", "1,488 GPUs"
    (the headline read "1 GPUs in 1 node" for inputs/small-l4-l40s.yaml; review round 20)."""
    return f"{Formatter('').count(n)} {noun if n == 1 else noun + 's'}"


# the options table's rows in the page (the workbook's Options sheet has every one)
OPTION_ROWS = 40


def best_options(w: WorkloadResult | RetrievalWorkloadResult, rented: bool) -> set[str]:
    """The options a table shows until "Show all" is pressed: the rule of ``llmsizer size``
    (:data:`.textoptions.TOP`: the first 8 that meet the targets in the engine's order and
    the recommended one; a retrieval workload's 8 cheapest, :func:`.textretrieval.best_retrieval`).
    Forty rows of each workload were 3,500 px of a phone's page (inputs/example.yaml)."""
    if isinstance(w, RetrievalWorkloadResult):
        return {o.id for o in best_retrieval(w, rented, TOP)}
    feasible = [o.id for o in w.options if o.feasible]
    return set(feasible[:TOP]) | ({w.recommended} if w.recommended else set())


def table_ids(result: Result) -> dict[str, dict[str, str]]:
    """Each options table's HTML id, by kind ("options", "retrieval-options") and workload
    name: the workload's slug ("options-customer-chat"), not its place on the page. app.js
    keeps a table's "Show all" by this id across the panel's updates; keyed by the index, a
    workload added or removed above it opened another workload's table (review round 24).
    ASCII letters, digits and hyphens only: a name in another script (or none) is its
    SHA-1's first 10 hex digits; two names with one slug are told apart by -2, -3."""
    import hashlib

    seen: set[str] = set()
    ids: dict[str, dict[str, str]] = {}
    kinds: tuple[tuple[str, list[Any]], ...] = (("options", list(result.workloads)),
                                                 ("retrieval-options", list(result.retrieval)))
    for kind, workloads in kinds:
        ids[kind] = {}
        for w in workloads:
            stem = slugify(w.name, 40)
            if not stem.isascii():
                stem = hashlib.sha1(w.name.encode()).hexdigest()[:10]
            tid, n = f"{kind}-{stem}", 2
            while tid in seen:
                tid, n = f"{kind}-{stem}-{n}", n + 1
            seen.add(tid)
            ids[kind][w.name] = tid
    return ids


# words of an option's name the glossary explains, as a tooltip of its entry: "attention
# data-parallel over 8 ranks" had no meaning on the page (session 25; the PDF's glossary lists
# the term where the proposal uses it, the page's glossary lists every term)
_GLOSSED = ((re.compile(r"attention data-parallel over [\d,]+ ranks?"),
             "Attention data parallelism"),)


def glossed(text: str) -> Markup:
    """``text`` escaped, each phrase of :data:`_GLOSSED` in an ``<abbr>`` whose tooltip is the
    PDF glossary's meaning of its term."""
    out = str(escape(text))
    for pattern, term in _GLOSSED:
        meaning = escape(next(t.meaning for t in GLOSSARY if t.term == term))
        out = pattern.sub(f'<abbr title="{meaning}">\\g<0></abbr>', out)
    return Markup(out)


# developer notes a catalog source carries for whoever checks it, not for a customer: a
# commit ("@0b077da5e0...", "@045df3b"), why a test fixture was cut ("... for CI"), a
# snapshot's missing commit date
_COMMIT = re.compile(r"\s?@[0-9a-f]{7,40}\b")
_CI_NOTE = re.compile(r"\s*\([^()]*\bfor CI\b[^()]*\)|;[^;()]*\bfor CI\b[^;()]*")
_DEV_NOTES = re.compile(r",\s*commit date not exposed")


def source_words(text: str) -> str:
    """A catalog entry's source as the catalog pages show a customer: the publisher, the
    document and its date, without the developer notes the catalog keeps for whoever checks
    it (the YAML keeps them): commits, a test fixture's "cut ... for CI", "commit date not
    exposed"."""
    text = _CI_NOTE.sub("", _DEV_NOTES.sub("", text))
    text = _COMMIT.sub("", text)
    return re.sub(r"\(\s*\)", "", re.sub(r"\s{2,}", " ", text)).strip()


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
        autoescape=True,  # account names and notes never become HTML
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(version=__version__, article=ARTICLE)
    env.filters["words"] = form_terms  # engine text as the PDF words it, keys as the form's labels
    env.globals["display"] = display
    env.globals["many"] = many
    env.globals["gpu_split"] = gpu_split  # the PDF's "15 serving, 8 on standby, 1 idle"
    env.globals["group_split"] = group_split  # a node group's, with its GPUs lent to retrieval
    # "no extra cost" for a retrieval server the plan charges nothing (the PDF's and CLI's words)
    env.globals["group_cost_words"] = group_cost_words
    env.globals["retrieval_cost_words"] = retrieval_cost_words
    env.filters["display"] = display
    # an error box's words as a sentence, never the CLI's lowercase "error: ..." (session 25)
    env.filters["sentence"] = lambda text: str(text)[:1].upper() + str(text)[1:]
    env.filters["glossed"] = glossed  # an option's name, its layout's terms as tooltips
    env.filters["source"] = source_words  # a catalog source without its developer notes
    env.filters["num"] = num
    env.filters["ms"] = Formatter("").ms  # a latency as the PDF gives it ("549 ms", "31.4 ms")
    # parameter counts as `llmsizer catalog models` prints them (6.74 B, not 6.7 B)
    env.filters["params"] = params_text
    # the PDF's glossary, every term (the page has room for those the PDF lists only when used)
    env.globals["glossary"] = sorted(GLOSSARY, key=lambda t: t.term.lower())
    env.globals["term"] = {t.term: t.meaning for t in GLOSSARY}
    # a list whose longest choice is longer than this (characters) takes a whole row of the
    # form: half a row holds about 22 characters at 1,024 px (_fields.html.j2)
    env.globals["WIDE_CHOICE"] = WIDE_CHOICE
    env.globals["best_options"] = best_options
    env.globals["table_ids"] = table_ids
    env.globals["OPTION_ROWS"] = OPTION_ROWS
    return env


ENV = _environment()


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A template rendered for this request (``request.state`` holds nothing of other users)."""
    html = ENV.get_template(template).render(request=request, **context)
    return HTMLResponse(html, status_code=status)


def charts_html(yaml_text: str, configs: Configs = ()) -> str:
    """The charts of requirements text (the second request of a live update), drawn once
    per cached sizing; run in the charts worker (:class:`.jobs.Drawer`)."""
    from .service import charts, size_text

    return ENV.get_template("_charts.html.j2").render(
        charts=charts(size_text(yaml_text, configs=configs)))


def charts_late_html(limit_s: float) -> str:
    """The chart area when the drawing ran past its time limit (:class:`.jobs.Drawer`)."""
    return ENV.get_template("_charts.html.j2").render(
        charts=None, late=f"The charts took longer than {limit_s:.0f} s to draw and are left "
                          "out this time; the figures above are complete. Change a field to "
                          "draw them again.")


def warm_charts() -> None:
    """Import, size and draw once, so the first user does not wait for the worker's start."""
    from . import archetypes, forms

    charts_html(forms.to_yaml(archetypes.requirements("chat")))
