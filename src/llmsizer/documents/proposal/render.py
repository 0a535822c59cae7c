"""The customer proposal: Result -> HTML (Jinja2 templates) -> PDF (WeasyPrint).

Numbers come only from the :class:`~llmsizer.sizing.results.Result`; this module selects,
labels and formats them (one :class:`Formatter`, also used by the tests), and the
templates only lay them out. Charts are SVG from :mod:`llmsizer.documents.charts`, inlined as
``data:`` images (text stays text, and nothing in a chart can reach the HTML).

Safety (DESIGN §5): Jinja runs sandboxed with ``autoescape=True`` and
``StrictUndefined`` (a missing variable is an :class:`~llmsizer.base.errors.InputError`
naming the template, line and variable, never a blank); WeasyPrint gets a
:class:`ClosedFetcher` that serves ``data:`` URLs and files inside the templates
folder(s) and refuses everything else, which stops the render. Output is
deterministic: the date comes from ``SOURCE_DATE_EPOCH`` when it is set.

Templates: ``templates/`` at the top of the repository, shipped as the package
``llmsizer.templates``. ``templates=DIR`` overlays a user's folder: a file there
(``proposal.html.j2``, ``print.css``, ``partials/…``, ``assets/…``) replaces the
shipped one of the same name.
"""

from __future__ import annotations

import base64
import datetime as dt
import mimetypes
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup
from weasyprint import CSS, HTML
from weasyprint.text.fonts import FontConfiguration
from weasyprint.urls import (
    FatalURLFetchingError,
    URLFetcher,
    URLFetcherResponse,
)

from ...base.errors import InputError
from ...model.calculations import CALCULATIONS, INPUTS
from ...model.catalog import Catalog, customer_source, load_catalog
from ...model.expr import to_text
from ...sizing.costs import tier_words
from ...sizing.engine import curve
from ...sizing.results import NodeGroup, Option, PlanPool, Result, Totals, WorkloadResult
from .format import CONTROL_CHARS as _CONTROL
from .format import NBSP, Formatter
from .format import chart_name as _chart_name
from .format import clip as _clip
from .format import short_name as _short
from .format import svg_image as _img
from .views import OptionView, RejectGroup, RejectRow, WorkloadView
from .views import as_number as _num
from .views import option_view as _option_view

__all__ = [
    "MAIN_TEMPLATE",
    "ClosedFetcher",
    "Formatter",
    "build_context",
    "render_document",
    "render_html",
    "render_pdf",
    "shipped_templates",
    "with_appendix",
]

MAIN_TEMPLATE = "proposal.html.j2"
APPENDIX_TEMPLATE = "appendix.html.j2"
STYLESHEET = "print.css"


def _filter(method: str) -> Callable[..., str]:
    @jinja2.pass_context
    def apply(ctx: Any, x: Any, *args: Any) -> str:
        fmt = ctx.get("fmt")
        if not isinstance(fmt, Formatter):
            raise jinja2.UndefinedError(
                "'fmt' is undefined (import macros that format numbers 'with context')")
        return str(getattr(fmt, method)(x, *args))

    return apply


FILTERS = {
    "num": "number", "qty": "count", "many": "count_of", "money": "money", "pct": "pct", "ms": "ms",
    "toks": "tok_s", "gb": "gb", "bytes": "bytes", "secs": "seconds", "dec": "decimal",
    "params": "params", "unit": "unit",
}

# ---- templates ----------------------------------------------------------------------------


def shipped_templates() -> Path:
    """The shipped templates folder (``templates/``, the package ``llmsizer.templates``)."""
    root = resources.files("llmsizer.templates")
    if not isinstance(root, Path):  # pragma: no cover - zipped installs are not supported
        raise RuntimeError("llmsizer.templates must be installed as a folder, not a zip")
    return root


def _roots(templates: Path | None) -> tuple[Path, ...]:
    shipped = shipped_templates().resolve()
    if templates is None:
        return (shipped,)
    user = Path(templates)
    if not user.is_dir():
        raise InputError(f"templates folder {str(user)!r} does not exist or is not a folder")
    return (user.resolve(), shipped)


def _printable(value: Any) -> Any:
    """Jinja ``finalize``: every printed value loses control characters (markup we built,
    such as the chart images, is left alone)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return _CONTROL.sub("", value)
    return value


@lru_cache(maxsize=8)
def _environment(roots: tuple[Path, ...]) -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(r)) for r in roots]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=True,
        finalize=_printable,
    )
    env.filters.update({name: _filter(method) for name, method in FILTERS.items()})
    return env


def _template_position(tb: TracebackType | None) -> tuple[str | None, int | None]:
    """File and line of the innermost template frame of a Jinja runtime error."""
    found: tuple[str | None, int | None] = (None, None)
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith((".j2", ".html", ".jinja", ".css")):
            found = (name, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _render_template(roots: tuple[Path, ...], context: Mapping[str, Any],
                     name: str = MAIN_TEMPLATE) -> str:
    env = _environment(roots)
    try:
        return env.get_template(name).render(context)
    except jinja2.TemplateNotFound as exc:
        where = " or ".join(str(r) for r in roots)
        raise InputError(f"proposal template {exc.name!r} not found in {where}") from None
    except jinja2.TemplateSyntaxError as exc:
        raise InputError(f"template syntax error: {exc.message}",
                         file=exc.filename or exc.name, line=exc.lineno) from None
    except jinja2.UndefinedError as exc:
        file, line = _template_position(exc.__traceback__)
        raise InputError(f"undefined template variable: {exc.message}", file=file,
                         line=line) from None
    except SecurityError as exc:
        file, line = _template_position(exc.__traceback__)
        raise InputError(f"template not allowed to do this: {exc}", file=file,
                         line=line) from None


# ---- the URL fetcher: closed by default ------------------------------------------------------


class RefusedURLError(ValueError):
    """A URL the proposal renderer does not fetch."""


class ClosedFetcher(URLFetcher):  # type: ignore[misc]
    """Serves ``data:`` URLs and files inside the templates folder(s); refuses the rest.

    Every refusal stops the render (``fail_on_errors``), and ``refused`` lists the
    URLs. A file under the user's folder that is missing there is looked up under the
    shipped folder (the overlay rule). Paths are resolved (symlinks, ``..``) before the
    containment check, and any error while checking refuses."""

    def __init__(self, roots: Sequence[Path]) -> None:
        super().__init__(timeout=1, allowed_protocols=("data", "file"), allow_redirects=False,
                         fail_on_errors=True)
        self.roots = tuple(Path(r).resolve() for r in roots)
        self.refused: list[str] = []

    def fetch(self, url: str, headers: Any = None) -> URLFetcherResponse:
        try:
            scheme = url.split(":", 1)[0].lower()
            if scheme == "data":
                return self._data(url)
            if scheme == "file":
                path = self._asset(url)
                if path is not None:
                    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                    return URLFetcherResponse(url, path.read_bytes(), {"Content-Type": mime})
        except Exception:
            pass
        self.refused.append(url)
        raise RefusedURLError(
            f"the proposal renderer fetches only data: URLs and files inside the templates "
            f"folder; refused {url[:200]!r}")

    @staticmethod
    def _data(url: str) -> URLFetcherResponse:
        header, sep, payload = url[len("data:"):].partition(",")
        if not sep:
            raise RefusedURLError("malformed data: URL")
        params = header.split(";")
        mime = params[0] or "text/plain"
        if params[-1].lower() == "base64":
            body = base64.b64decode(urllib.parse.unquote(payload), validate=False)
        else:
            body = urllib.parse.unquote_to_bytes(payload)
        return URLFetcherResponse(url, body, {"Content-Type": mime})

    def _asset(self, url: str) -> Path | None:
        parts = urllib.parse.urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            return None
        raw = Path(os.path.normpath(urllib.request.url2pathname(parts.path)))
        for root in self.roots:
            if not raw.is_relative_to(root):
                continue
            rel = raw.relative_to(root)
            for candidate_root in self.roots:
                candidate = (candidate_root / rel).resolve()
                if candidate.is_relative_to(candidate_root) and candidate.is_file():
                    return candidate
        return None


# ---- the view: selections and labels, no arithmetic --------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    source: str


_REASONS = {
    "weights": "Model weights do not fit in the GPU memory of the TP group",
    "kv": "No room for one full-context request's KV cache",
    "speed": "Too slow even for a single user (bandwidth ceiling below the target)",
    "ttft": "Time to first token above the target even for a single request",
    "measured": "No benchmark point meets the targets",
}


ASSUMPTION_LABELS = {
    "mbu_weights": "Bandwidth efficiency, weights",
    "mbu_kv": "Bandwidth efficiency, KV cache",
    "mfu_decode": "Compute efficiency, decode",
    "mfu_decode_8bit": "Compute efficiency, decode (8-bit path)",
    "mfu_decode_16bit": "Compute efficiency, decode (16-bit path)",
    "mfu_prefill": "Compute efficiency, prefill",
    "mfu_prefill_8bit": "Compute efficiency, prefill (8-bit path)",
    "mfu_prefill_16bit": "Compute efficiency, prefill (16-bit path)",
    "mfu_decode_4bit": "Compute efficiency, decode (4-bit path)",
    "mfu_prefill_4bit": "Compute efficiency, prefill (4-bit path)",
    "mfu_attention": "Compute efficiency, decode attention",
    "alltoall_latency_us": "All-to-all latency (expert parallel)",
    "moe_compute_factor": "MoE compute factor",
    "step_overhead_ms": "Per-step overhead",
    "allreduce_latency_us": "All-reduce latency",
    "link_efficiency": "All-reduce link efficiency",
    "prefill_chunk_tokens": "Prefill chunk",
    "ttft_overhead_ms": "Time-to-first-token overhead",
    "kv_cache_fraction": "KV share of free memory",
    "max_batch_per_replica": "Serving engine batch cap",
    "runtime_reserve_gb": "Runtime reserve per GPU",
    "cloud_tier": "Cloud price tier",
    "price_max_age_days": "Prices flagged when older than",
    "calibration_offline_median_error": "Throughput error, median (offline benchmarks)",
    "calibration_offline_p90_error": "Throughput error, 90th percentile (offline benchmarks)",
    "calibration_itl_median_error": "Inter-token latency error, median",
    "calibration_ttft_median_error": "Time-to-first-token error, median",
    "calibration_batch1_median_error": "Single-user speed error, median",
}
_INPUT_LABELS = {i.name: i.label for i in INPUTS}
_POLICY_KEYS = ("gpu_memory_utilization", "electricity_per_kwh", "pue", "amortization_years",
                "support_rate", "average_load", "network_per_node", "hours_per_year")
_UNITS = {i.name: i.unit for i in INPUTS}


def _label(name: str) -> str:
    found = ASSUMPTION_LABELS.get(name) or _INPUT_LABELS.get(name)
    if found:
        return found
    text = name.removeprefix("calibration_").replace("_", " ")
    return text[:1].upper() + text[1:]


def _alternatives(w: WorkloadResult, cat: Catalog) -> list[OptionView]:
    """The best feasible option per GPU x weight precision x KV precision, in rank order."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for o in w.options:  # the engine lists feasible options first, best first
        key = (o.gpu, o.weight_precision, o.kv_precision)
        if o.feasible and (key not in seen or o.id == w.recommended):
            seen.add(key)
            out.append(_option_view(o, w, cat))
    return out


def _reason_title(o: Option) -> str:
    return _REASONS.get(o.reason_code, o.reason)


def _rejected(w: WorkloadResult, cat: Catalog) -> list[RejectGroup]:
    groups: dict[str, dict[tuple[str, str, str], list[Option]]] = {}
    for o in w.options:
        if not o.feasible:
            groups.setdefault(_reason_title(o), {}).setdefault(
                (o.gpu, o.weight_precision, o.kv_precision), []).append(o)
    out = []
    for title, by_config in groups.items():
        rows = []
        for (gid, wp, kp), opts in by_config.items():
            opts = sorted(opts, key=lambda o: o.tp)
            gpu = cat.gpus.get(gid)
            rows.append(RejectRow(
                gpu_name=gpu.name if gpu else gid, precision=f"{wp} weights, {kp} KV",
                tps=", ".join(f"TP{o.tp}" for o in opts), reason=opts[-1].reason))
        out.append(RejectGroup(title=title, count=sum(len(v) for v in by_config.values()),
                               rows=tuple(rows)))
    return out


def _batches(upper: float) -> list[int]:
    import numpy as np

    return sorted({int(b) for b in np.linspace(1, max(upper, 1), 48).round()} | {1})


def _curve_points(result: Result, index: int, best: OptionView) -> list[dict[str, float]]:
    """The engine's figures over the batch sizes the throughput chart shows (batch 1 first:
    the single-user speed the walk-through quotes is this curve's first point)."""
    v = best.v
    upper = min(_num(v, "max_sequences_by_memory"), _num(v, "max_batch_per_replica"))
    batches = sorted(set(_batches(upper)) | {int(_num(v, "batch_per_replica"))})
    return curve(result, index, best.option.id, batches)


def _throughput_svg(points: Sequence[Mapping[str, float]], best: OptionView,
                    fmt: Formatter) -> Markup:
    from .. import charts

    v = best.v
    upper = min(_num(v, "max_sequences_by_memory"), _num(v, "max_batch_per_replica"))
    caps = []
    if _num(v, "max_batch_per_replica") == upper:
        caps.append((upper, "engine batch cap"))
    elif _num(v, "max_sequences_by_memory") == upper:
        caps.append((upper, "KV cache full"))
    chosen = {k: _num(v, k) for k in ("batch_per_replica", "tokens_per_s_per_user",
                                      "replica_output_tokens_per_s")}
    svg = charts.throughput_chart(points, chosen, _num(v, "required_tokens_per_s_per_user"),
                                  caps, fmt.tok_s, fmt.count)
    return _img(svg, "Throughput and per-user speed against batch")


def _memory_svg(views: Sequence[WorkloadView], fmt: Formatter) -> Markup | None:
    """One chart for the account: each recommended workload's options, the recommendation
    first, under the workload's name when there are several."""
    from .. import charts

    shown = [wv for wv in views if wv.best is not None]
    bars: list[charts.MemoryBar] = []
    for wv in shown:
        if len(shown) > 1:
            bars.append(charts.MemoryBar(label=_clip(_CONTROL.sub("", wv.w.name), 28),
                                         segments={}, chosen=False))
        options = ([o for o in wv.alternatives if o.recommended]
                   + [o for o in wv.alternatives if not o.recommended])
        bars += [charts.MemoryBar(
            label=f"{_chart_name(o.gpu_name)}\n{o.option.weight_precision} · TP{o.option.tp}",
            segments=charts.memory_segments(o.option), chosen=o.recommended)
            for o in options[:8 if len(shown) == 1 else 5]]
    if not bars:
        return None
    return _img(charts.memory_chart(bars, fmt.gb), "Memory budget of one replica per option")


def _cost_svg(views: Sequence[WorkloadView], result: Result, fmt: Formatter) -> Markup | None:
    from .. import charts

    bars = []
    for wv in views:
        if wv.best is None:
            continue
        v = wv.best.v
        bars.append(charts.CostBar(
            label=_clip(_CONTROL.sub("", wv.w.name), 28), annual_capex=_num(v, "annual_capex"),
            annual_power=_num(v, "annual_facility"), annual_support=_num(v, "annual_services"),
            onprem_total=_num(v, "annual_cost_onprem"), cloud=_num(v, "annual_cost_cloud"),
            priced=wv.best.option.priced))
    if not bars:
        return None
    if len(bars) > 1:
        t = result.totals
        bars.append(charts.CostBar(
            label="Account total", annual_capex=None, annual_power=None, annual_support=None,
            onprem_total=t.annual_cost_onprem, cloud=t.annual_cost_cloud,
            priced=all(wv.best.option.priced for wv in views if wv.best is not None)))
    years = fmt.unit(result.account_inputs["amortization_years"], "years")
    return _img(charts.cost_chart(bars[:9], years, fmt.money, fmt.money_short),
                "Annual cost, on-premises against cloud")


_ZWSP = "\u200b"
_BREAK_AFTER = re.compile(r"([,+*/=<>-])")


def _breakable(formula: str) -> str:
    """A formula with invisible break opportunities after commas and operators, so a long
    one wraps at a sensible place rather than mid-name."""
    return _BREAK_AFTER.sub(lambda m: m.group(1) + _ZWSP, formula)


def _workload_view(result: Result, index: int, cat: Catalog, fmt: Formatter) -> WorkloadView:
    w = result.workloads[index]
    best = _option_view(w.best, w, cat) if w.best is not None else None
    alternatives = _alternatives(w, cat)
    feasible = [o for o in w.options if o.feasible]
    rejected = _rejected(w, cat)
    model = cat.models.get(w.model)
    source = w.best or (w.options[0] if w.options else None)
    demand: Mapping[str, float | str] = source.values if source else {}
    throughput_chart = None
    one_user: Mapping[str, float] | None = None
    if best is not None:
        points = _curve_points(result, index, best)
        one_user = points[0]
        if w.mode != "measured":
            throughput_chart = _throughput_svg(points, best, fmt)
    shown_ids = {a.option.id for a in alternatives}
    return WorkloadView(
        index=index, anchor=f"w{index}", w=w, best=best, demand=demand,
        alternatives=tuple(alternatives),
        more_feasible=len([o for o in feasible if o.id not in shown_ids]),
        feasible_count=len(feasible), rejected=tuple(rejected),
        rejected_count=len([o for o in w.options if not o.feasible]),
        throughput_chart=throughput_chart, one_user=one_user,
        max_context=model.max_context if model else None,
        model_source=model.source if model else "model config supplied with the requirements")


def _catalog_price(result: Result, usd: float | None) -> float | None:
    """A catalog USD price as the engine would have used it in the account's currency
    (through calculations.PRICE_IN_ACCOUNT_CURRENCY), or None when that is unknown."""
    if not usd:
        return None
    if result.account.currency == "USD":
        return usd
    rate = result.account_inputs.get("usd_exchange_rate")
    if rate is None:
        return None
    from ...model.calculations import PRICE_IN_ACCOUNT_CURRENCY
    from ...model.expr import evaluate

    return float(evaluate(PRICE_IN_ACCOUNT_CURRENCY, {"usd_price": usd, "usd_exchange_rate": rate}))


def _price_source(result: Result, used: float, usd: float | None, source: str | None,
                  date: str | None, override_key: str) -> str:
    if not used:
        return "no price known"
    cur = result.account.currency
    catalog = f"{source} (dated {date})"
    expected = _catalog_price(result, usd)
    if expected is not None and expected == used:
        return catalog if cur == "USD" else f"{catalog}; converted from USD at the account's rate"
    if expected is None and usd and cur != "USD":
        return (f"{catalog}; converted from USD at the account's rate, unless overridden in "
                f"{override_key}")
    return f"account override ({override_key})"


def _price_rows(result: Result, views: Sequence[WorkloadView], cat: Catalog,
                fmt: Formatter) -> list[Row]:
    rows: list[Row] = []
    gpus = sorted({wv.best.option.gpu for wv in views if wv.best is not None})
    platforms = sorted({wv.best.option.platform for wv in views if wv.best is not None})
    for gid in gpus:
        used = result.tables["gpus"].get(gid, {})
        g = cat.gpus.get(gid)
        name = g.name if g else gid
        price, cloud = used.get("price", 0.0), used.get("cloud_gpu_hour", 0.0)
        src = _price_source(result, price, g.price_usd if g else None,
                            g.price_source if g else None, g.price_date if g else None,
                            "costs.gpu_prices")
        if not price:
            src = "no purchase price known: on-premises figures leave the GPUs out"
        rows.append(Row(f"{name}: purchase price per GPU", fmt.money(price) if price else "—",
                        src))
        used_row = next((p for p in result.prices if p.item == f"cloud:{gid}"), None)
        csrc = (f"{used_row.source} (dated {used_row.date or 'undated'})"
                + (f"; {used_row.note}" if used_row.note else "")) if used_row else "no price known"
        rows.append(Row(f"{name}: cloud price per GPU-hour", fmt.money(cloud) if cloud else "—",
                        csrc))
    for pid in platforms:
        p = cat.platforms.get(pid)
        row = result.tables["platforms"].get(pid, {})
        label = _short(p.name) if p else pid
        rows.append(Row(f"{label}: node without GPUs", fmt.money(row.get("base_price", 0.0)),
                        (p.notes or p.source) if p else "catalog"))
        rows.append(Row(f"{label}: node power at full load",
                        fmt.unit(row.get("node_power_kw", 0.0), "kW"),
                        p.source if p else "catalog"))
    return rows


@dataclass(frozen=True)
class PriceRow:
    label: str
    value: str
    date: str
    source: str
    note: str
    stale: str  # '' | 'undated' | 'over N months old'


def _price_list(result: Result, cat: Catalog, fmt: Formatter, day: dt.date) -> list[PriceRow]:
    """The dated prices behind the costs, each flagged when older than the catalog's
    ``price_max_age_days`` (or undated)."""
    from ...sizing.costs import price_age_days

    limit = cat.constant("price_max_age_days")
    rows = []
    recommended = {w.best.gpu for w in result.workloads if w.best is not None}
    for p in result.prices:
        kind, _, rest = p.item.partition(":")
        if kind in ("cloud", "gpu") and rest not in recommended:
            continue  # the price list covers the recommendation; the workbook lists all
        age = price_age_days(p.date, day)
        overridden = p.source.startswith("account")
        stale = "" if overridden else ("undated" if age is None else (
            f"about {fmt.count(age / 30.4)} months old" if age > limit else ""))
        per = p.unit.split("/", 1)[1] if "/" in p.unit else (
            p.unit.split(" per ", 1)[1] if " per " in p.unit else "")
        value = fmt.money(p.value) + (f" per {per}" if per else "")
        rows.append(PriceRow(label=p.label, value=value, date=p.date or "undated",
                             source=p.source, note=p.note, stale=stale))
    return rows


@dataclass(frozen=True)
class LoadRow:
    load: float
    onprem: float
    cloud: float
    api: float
    account: bool  # the account's own load


@dataclass(frozen=True)
class BreakEvenView:
    wv: WorkloadView
    rows: tuple[LoadRow, ...]
    chart: Markup
    api_known: bool
    api_source: str


def _breakeven(result: Result, views: Sequence[WorkloadView], cat: Catalog,
               fmt: Formatter) -> list[BreakEvenView]:
    """Cost per million tokens by average load for each recommendation (costs.by_load)."""
    from ...sizing.costs import by_load
    from .. import charts

    out = []
    load = result.account_inputs["average_load"]
    for wv in views:
        if wv.best is None:
            continue
        points = by_load(result.account_inputs, wv.w, result.tables)
        api = wv.w.inputs.get("api_output_per_million", 0.0) > 0
        price = cat.prices.api.get(wv.w.model)
        rows = tuple(LoadRow(p["load"], p["cost_per_million_total_tokens_onprem"],
                             p["cost_per_million_total_tokens_cloud"],
                             p["cost_per_million_total_tokens_api"],
                             abs(p["load"] - load) < 1e-9) for p in points)
        chart = _img(charts.breakeven_chart(points, load, fmt.money, fmt.pct, api),
                     "Cost per million tokens against average load")
        out.append(BreakEvenView(wv=wv, rows=rows, chart=chart, api_known=api,
                                 api_source=f"{price.provider}, {price.date}" if price else ""))
    return out


@dataclass(frozen=True)
class ScenarioRow:
    label: str
    change: str
    gpus: int
    nodes: int
    capex: float
    onprem: float
    cloud: float
    moved: bool  # differs from the proposal


def _sensitivity(result: Result, views: Sequence[WorkloadView],
                 fmt: Formatter) -> dict[str, Any]:
    """The sensitivity section: the scenarios of the results and a tornado of the annual
    on-premises cost (the cloud tiers move only the cloud figure: table only)."""
    from .. import charts

    shown = [wv for wv in views if wv.best is not None]
    if not shown or not result.sensitivity:
        return {"scenarios": [], "tornado_chart": None, "base": None}
    t = result.totals
    base = ScenarioRow("As proposed", "", t.gpus_purchased, t.nodes, t.capex,
                       t.annual_cost_onprem, t.annual_cost_cloud, False)
    rows = [ScenarioRow(s.label, s.change.replace("x", "×", 1) if s.change.startswith("x")
                        else s.change, s.gpus_purchased, s.nodes, s.capex,
                        s.annual_cost_onprem, s.annual_cost_cloud,
                        (s.gpus_purchased, s.nodes, s.capex, s.annual_cost_onprem,
                         s.annual_cost_cloud) != (base.gpus, base.nodes, base.capex,
                                                  base.onprem, base.cloud)) for s in
            result.sensitivity]
    groups: dict[str, list[ScenarioRow]] = {}
    for r in rows:
        if r.label != "Cloud price":
            groups.setdefault(r.label, []).append(r)
    bars = [charts.TornadoRow(label, min(g, key=lambda r: r.onprem).onprem,
                              max(g, key=lambda r: r.onprem).onprem,
                              min(g, key=lambda r: r.onprem).change,
                              max(g, key=lambda r: r.onprem).change)
            for label, g in groups.items()]
    bars.sort(key=lambda b: -max(abs(b.high - base.onprem), abs(b.low - base.onprem)))
    chart = _img(charts.tornado_chart(bars, base.onprem, fmt.money, fmt.money_short),
                 "Annual on-premises cost under each scenario")
    return {"scenarios": rows, "tornado_chart": chart, "base": base}


def _confidence_total(result: Result) -> dict[str, int] | None:
    """The account's GPUs bought at both ends of the model's error: the same plan evaluated
    with every option's throughput at its group's p10 / p90 (plan.confidence_range)."""
    p = result.plan
    if p.gpus_purchased_if_throughput_low is None or p.gpus_purchased_if_throughput_high is None:
        return None
    return {"gpus": result.totals.gpus_purchased, "low": p.gpus_purchased_if_throughput_high,
            "high": p.gpus_purchased_if_throughput_low}


def _policy_value(fmt: Formatter, name: str, x: float) -> str:
    money = {"electricity_per_kwh": " per kWh", "network_per_node": " per node"}
    if name in money:
        return fmt.money(x) + money[name]
    if name == "support_rate":
        return f"{fmt.pct(x)} of capex a year"
    if name == "hours_per_year":
        return f"{fmt.count(x)}{NBSP}h"
    if name == "pue":
        return fmt.decimal(x, 2)
    return fmt.unit(x, _UNITS.get(name, ""))


def _first_per_model(views: Sequence[WorkloadView]) -> list[WorkloadView]:
    first: dict[str, WorkloadView] = {}
    for wv in views:
        first.setdefault(wv.w.model, wv)
    return list(first.values())


def _report_date() -> dt.date:
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC).date()
    return dt.date.today()


@lru_cache(maxsize=1)
def _formula_context() -> dict[str, Any]:
    """The formula list: the same for every account (the appendix's whole context)."""
    formulas = [{"name": c.name, "label": c.label, "unit": c.unit, "sheet": c.sheet,
                 "formula": to_text(c.expr), "wrapped": _breakable(to_text(c.expr)),
                 "note": c.note} for c in CALCULATIONS]
    inputs = [{"name": i.name, "label": i.label, "unit": i.unit, "scope": i.scope,
               "note": i.note} for i in INPUTS]
    return {"formulas": formulas, "inputs": inputs}


# ---- the account plan (page 2: what is bought, who shares what, the saving) -------------------


@dataclass(frozen=True)
class PoolView:
    label: str  # "Pool 1"
    pool: PlanPool
    workloads: tuple[str, ...]
    model_name: str
    config: str  # "H100 SXM 80GB · fp8 weights · fp8 KV · TP4"
    shared: bool  # more than one workload


@dataclass(frozen=True)
class GroupView:
    group: NodeGroup
    platform_name: str
    gpu_name: str
    pools: tuple[PoolView, ...]


@dataclass(frozen=True)
class PlanView:
    groups: tuple[GroupView, ...]
    pooled: bool  # some pool serves several workloads
    shared_nodes: bool  # some group holds several pools
    pool_of: Mapping[int, PoolView]  # workload index -> its pool
    dedicated: Totals  # each workload sized alone
    saving: float  # annual on-prem, against the dedicated sizing
    saving_share: float


def plan_context(result: Result, cat: Catalog) -> dict[str, Any]:
    """``plan``: the account plan as the proposal states it (templates/partials/plan.html.j2)."""
    from ...model.calculations import PLAN_SAVING, PLAN_SAVING_SHARE
    from ...model.expr import evaluate

    names = {i: w.model_name for i, w in enumerate(result.workloads)}
    pools: dict[str, PoolView] = {}
    for n, p in enumerate(result.plan.pools, 1):
        g = cat.gpus.get(p.gpu)
        pools[p.id] = PoolView(
            label=f"Pool {n}", pool=p, workloads=tuple(p.workloads),
            model_name=names[p.workload_indices[0]],
            config=f"{_chart_name(g.name) if g else p.gpu} · {p.weight_precision} weights · "
                   f"{p.kv_precision} KV · TP{p.tp}", shared=len(p.workloads) > 1)
    groups = []
    for grp in result.plan.node_groups:
        plat, g = cat.platforms.get(grp.platform), cat.gpus.get(grp.gpu)
        groups.append(GroupView(group=grp, platform_name=_short(plat.name) if plat else grp.platform,
                                gpu_name=g.name if g else grp.gpu,
                                pools=tuple(pools[pid] for pid in grp.pools)))
    ded = result.totals_dedicated
    env = {"annual_cost_onprem": result.totals.annual_cost_onprem,
           "annual_cost_onprem_dedicated": ded.annual_cost_onprem}
    return {"plan": PlanView(
        groups=tuple(groups), pooled=any(p.shared for p in pools.values()),
        shared_nodes=any(len(gv.pools) > 1 for gv in groups), dedicated=ded,
        pool_of={i: pv for pv in pools.values() for i in pv.pool.workload_indices},
        saving=float(evaluate(PLAN_SAVING, env)), saving_share=float(evaluate(PLAN_SAVING_SHARE, env)))}


def build_context(result: Result, catalog: Catalog | None = None) -> dict[str, Any]:
    """Everything the templates may use (documented in docs/proposal.md)."""
    cat = catalog or load_catalog()
    fmt = Formatter(result.account.currency)
    views = [_workload_view(result, i, cat, fmt) for i in range(len(result.workloads))]
    day = _report_date()
    assumptions = [Row(_label(a.name), fmt.unit(a.value, a.unit), customer_source(a.source))
                   for a in result.assumptions if not a.name.startswith("calibration_")]
    policy = [Row(_label(k), _policy_value(fmt, k, result.account_inputs[k]),
                  "account requirements (policy / costs)")
              for k in _POLICY_KEYS if k in result.account_inputs]
    calibration = [Row(_label(name), fmt.unit(c.value, c.unit), customer_source(c.source))
                   for name, c in cat.constants.items() if name.startswith("calibration_")]
    return {
        "result": result,
        "account": result.account,
        "fmt": fmt,
        "currency": result.account.currency,
        "date": f"{day.day} {day:%B %Y}",
        "iso_date": day.isoformat(),
        "footer_name": _clip(result.account.name, 70),
        "cover_name": _clip(result.account.name, 160),
        "workloads": views,
        "recommended": [wv for wv in views if wv.best is not None],
        # measured mode (docs/measured.md): benchmark-sized workloads, and those whose measured
        # throughput is over 25 % from the model's (a risk)
        "measured": [wv for wv in views if wv.w.mode == "measured"],
        "gap_risks": [wv for wv in views if wv.best is not None
                      and bool(wv.best.v.get("measured_gap_risk"))],
        "shape_risks": [wv for wv in views if wv.w.measured_warnings],
        "models": _first_per_model(views),
        "infeasible": [wv for wv in views if wv.best is None],
        "totals": result.totals,
        "policy": result.account_inputs,
        "n_plus_one": bool(result.account_inputs.get("survive_node_loss")),
        "assumptions": assumptions,
        "policy_rows": policy,
        "price_rows": _price_rows(result, views, cat, fmt),
        "calibration": calibration,
        **_formula_context(),
        "catalog_current": result.catalog_digest == cat.digest,
        "memory_chart": _memory_svg(views, fmt),
        "cost_chart": _cost_svg(views, result, fmt),
        **plan_context(result, cat),
        # costs: dated prices (stale ones flagged), break-even by load, sensitivity, confidence
        "cloud_tier": tier_words(result.cloud_tier),
        "prices": _price_list(result, cat, fmt, day),
        "price_max_age_days": cat.constant("price_max_age_days"),
        "breakeven": _breakeven(result, views, cat, fmt),
        **_sensitivity(result, views, fmt),
        "confidence_total": _confidence_total(result),
    }


# ---- rendering ------------------------------------------------------------------------------


def render_html(result: Result, templates: Path | None = None,
                catalog: Catalog | None = None) -> str:
    """The proposal as HTML (what WeasyPrint lays out)."""
    return _render_template(_roots(templates), build_context(result, catalog))


def _fast_font_subsetting() -> bool:
    """Whether WeasyPrint can subset fonts with HarfBuzz (libharfbuzz-subset0). Without it,
    it falls back to fontTools, which takes ~0.1 s per font face per render and logs a
    warning each time; embedding the whole fonts instead is faster (the PDF grows by
    about 1 MB) and just as deterministic."""
    from weasyprint.text import ffi

    return getattr(ffi, "harfbuzz_subset", None) is not None


@lru_cache(maxsize=1)
def _font_config() -> FontConfiguration:
    """One font configuration per process: font look-ups are then cached across renders."""
    return FontConfiguration()


def _stylesheet(roots: tuple[Path, ...]) -> CSS:
    """``print.css`` from the templates (the user's folder first), parsed once per process
    and file version: parsing and indexing it is about 5 % of a render."""
    for root in roots:
        path = (root / STYLESHEET).resolve()
        if path.is_relative_to(root) and path.is_file():
            stat = path.stat()
            return _parsed_stylesheet(roots, path, stat.st_mtime_ns, stat.st_size)
    raise InputError(f"proposal stylesheet {STYLESHEET!r} not found in "
                     + " or ".join(str(r) for r in roots))


@lru_cache(maxsize=8)
def _parsed_stylesheet(roots: tuple[Path, ...], path: Path, _mtime_ns: int, _size: int) -> CSS:
    return CSS(string=path.read_text(encoding="utf-8"), base_url=path.parent.as_uri() + "/",
               url_fetcher=ClosedFetcher(roots), font_config=_font_config())


def render_pdf(result: Result, path: Path, templates: Path | None = None,
               catalog: Catalog | None = None) -> None:
    """Write the proposal PDF for ``result`` to ``path``.

    Raises :class:`InputError` for a template problem (missing file, syntax error,
    undefined variable) or a URL the templates refer to that the renderer refuses."""
    roots = _roots(templates)
    html_text = _render_template(roots, build_context(result, catalog))
    fetcher = ClosedFetcher(roots)
    try:
        document = with_appendix(render_document(html_text, roots, fetcher), roots)
        document.write_pdf(str(path), full_fonts=not _fast_font_subsetting())
    except FatalURLFetchingError:
        refused = fetcher.refused[0] if fetcher.refused else "a resource"
        raise InputError(
            f"the proposal templates refer to {refused[:200]!r}; the renderer fetches only "
            "data: URLs and files inside the templates folder") from None


def with_appendix(document: Any, roots: tuple[Path, ...]) -> Any:
    """``document`` followed by the formula appendix (``appendix.html.j2``). The appendix is
    the same for every account, so it is laid out once per process and templates version
    and its pages reused: a tenth of a proposal's rendering time (docs/benchmarks.md)."""
    html_text = _render_template(roots, _formula_context(), APPENDIX_TEMPLATE)
    appendix = _laid_out(html_text, roots, _stylesheet(roots))
    return document.copy([*document.pages, *appendix.pages])


@lru_cache(maxsize=4)
def _laid_out(html_text: str, roots: tuple[Path, ...], _stylesheet_version: CSS) -> Any:
    return render_document(html_text, roots)


def render_document(html_text: str, roots: tuple[Path, ...],
                    fetcher: ClosedFetcher | None = None) -> Any:
    """Lay out proposal HTML with the templates' stylesheet (WeasyPrint's part of a render;
    the batch benchmark times this alone as its floor)."""
    return HTML(string=html_text, base_url=roots[0].as_uri() + "/",
                url_fetcher=fetcher or ClosedFetcher(roots)).render(
        stylesheets=[_stylesheet(roots)], font_config=_font_config())
