"""Rendering the customer proposal: context -> HTML (Jinja2 templates) -> PDF (WeasyPrint).

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
import mimetypes
import os
import re
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

import cssselect2
import jinja2
import pydyf  # WeasyPrint's PDF writer (a dependency of it): its stream objects
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup
from weasyprint import CSS, HTML
from weasyprint import __version__ as weasyprint_version
from weasyprint.text.fonts import FontConfiguration
from weasyprint.urls import (
    FatalURLFetchingError,
    URLFetcher,
    URLFetcherResponse,
)

from ...base.errors import InputError
from ...model.catalog import Catalog
from ...sizing.results import Result
from .appendix import formula_context
from .context import build_context
from .format import (
    CONTROL_CHARS,
    Formatter,
    and_list,
    customer_words,
    gpu_split,
    group_split,
    option_label,
)
from .glossary import prune_glossary
from .htmltree import plain_tree
from .svgtext import install as _one_line_svg_text

MAIN_TEMPLATE = "proposal.html.j2"
APPENDIX_TEMPLATE = "appendix.html.j2"
STYLESHEET = "print.css"


def _filter(method: str) -> Callable[..., str | int]:
    @jinja2.pass_context
    def apply(ctx: Any, x: Any, *args: Any) -> str | int:
        fmt = ctx.get("fmt")
        if not isinstance(fmt, Formatter):
            raise jinja2.UndefinedError(
                "'fmt' is undefined (import macros that format numbers 'with context')")
        shown = getattr(fmt, method)(x, *args)
        # a column's decimals stay a number: "0" as text is true, and every headroom column
        # read "175.0 %" beside the prose's "175 %"
        return shown if isinstance(shown, int) else str(shown)

    return apply


FILTERS = {
    "num": "number", "qty": "count", "approx": "approx", "millions": "millions",
    "fig": "figures", "many": "count_of", "served": "batch",
    "money": "money", "tariff": "tariff", "pct": "pct", "headroom": "headroom", "hnote": "headroom_note",
    "ms": "ms", "toks": "tok_s", "gb": "gb", "bytes": "bytes",
    "secs": "seconds", "stated": "stated",
    "dec": "decimal", "params": "params", "unit": "unit", "prec": "precision", "uprice": "unit_price",
    "pctdigits": "pct_digits", "headroomdigits": "headroom_digits", "msunit": "ms_unit",
    "msvs": "ms_vs", "toksvs": "tok_s_vs", "share": "share", "whole": "whole",
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
    """Jinja ``finalize``: every printed value loses control characters and says requirement
    keys in words (markup we built, such as the chart images, is left alone)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return customer_words(CONTROL_CHARS.sub("", value))
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
    env.filters["option_label"] = _option_label
    env.filters["andlist"] = and_list  # "A, B and C": a list in words
    env.globals["gpu_split"] = gpu_split  # "15 serving, 8 on standby, 1 idle": one wording
    env.globals["group_split"] = group_split  # a node group's, with its GPUs lent to retrieval
    return env


def _option_label(o: Any) -> str:
    """``{{ o|option_label }}`` of an option view: the words the workbook uses too (one home,
    format.option_label); the macro of the same name in partials/macros.html.j2 calls it."""
    return option_label(o.gpu_name, o.option.tp, o.option.weight_precision,
                        o.option.kv_precision, o.v)


def _template_position(tb: TracebackType | None) -> tuple[str | None, int | None]:
    """File and line of the innermost template frame of a Jinja runtime error."""
    found: tuple[str | None, int | None] = (None, None)
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith((".j2", ".html", ".jinja", ".css")):
            found = (name, tb.tb_lineno)
        tb = tb.tb_next
    return found


# Spaces and line ends just before a block's closing tag (a template's line break before
# ``</p>``). WeasyPrint 70 counts that collapsible space in the width of the block's last
# line: when the line would just fit without it, it breaks after the line's first word, so a
# paragraph shows "...No spare node was / requested / and it runs..." (docs/proposal.md).
_SPACE_BEFORE_CLOSE = re.compile(r"[ \t\r\n\f]+(?=</(?:p|li|td|th|dd|dt|caption|h[1-6])>)")


def _render_template(roots: tuple[Path, ...], context: Mapping[str, Any],
                     name: str = MAIN_TEMPLATE) -> str:
    env = _environment(roots)
    try:
        return prune_glossary(_SPACE_BEFORE_CLOSE.sub("", env.get_template(name).render(context)))
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


# ---- rendering ------------------------------------------------------------------------------


def render_html(result: Result, templates: Path | None = None,
                catalog: Catalog | None = None) -> str:
    """The proposal as HTML (what WeasyPrint lays out), without the production debugger and
    the appendices (``render_pdf(appendix=True)`` has them)."""
    return _render_template(_roots(templates), {**build_context(result, catalog),
                                                "appendix": False})


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


# WeasyPrint's user-agent rules whose selector is a bare pseudo-element: each gives every one
# of a proposal's ~1,000 elements that pseudo-element's style to compute, a third of the style
# cascade (docs/benchmarks.md, sixth round). The templates have no footnotes or notes, and
# list items are the only elements they display as list-item.
_UA_DROPPED = ("::footnote-call ", "::footnote-marker ", "::note-call ", "::note-marker ",
               "::note-callback ")
_UA_SCOPED = ("::marker ", "li::marker ")


def ua_sheet_text() -> str | None:
    """WeasyPrint's own user-agent sheet as installed (``css/html5_ua.css``), less the rules
    of :data:`_UA_DROPPED`, ``::marker`` scoped to list items, and without its
    ``@counter-style`` rules (WeasyPrint applies those apart: ``HTML._ua_counter_style``).
    None when the installed sheet does not hold those rules one per line as this expects:
    WeasyPrint's own sheet is used then."""
    text = resources.files("weasyprint.css").joinpath("html5_ua.css").read_text("utf-8")
    kept, dropped, scoped = [], 0, 0
    for line in text.splitlines():
        if line.startswith(_UA_DROPPED):
            dropped += 1
        elif line.startswith("@counter-style") and line.rstrip().endswith("}"):
            continue
        elif line.startswith(_UA_SCOPED[0]):
            kept.append(_UA_SCOPED[1] + line[len(_UA_SCOPED[0]):])
            scoped += 1
        else:
            kept.append(line)
    if dropped != len(_UA_DROPPED) or scoped != 1 or "@counter-style" in "\n".join(kept):
        return None
    return "\n".join(kept)


@lru_cache(maxsize=1)
def _ua_stylesheet() -> CSS | None:
    """:func:`ua_sheet_text`, parsed once per process."""
    text = ua_sheet_text()
    return None if text is None else CSS(string=text)


class ProposalHTML(HTML):  # type: ignore[misc]
    """WeasyPrint's :class:`~weasyprint.HTML` with the proposal's user-agent stylesheet
    (:func:`ua_sheet_text`: WeasyPrint's own, less the bare pseudo-element rules that gave every element
    a footnote-call and a marker style to compute; a third of the style cascade; form
    fields, which the templates never have, keep WeasyPrint's form sheet), and its element
    tree built by ``html.parser`` where that gives tinyhtml5's tree (htmltree.py; a sixth of
    the time), on the WeasyPrint version whose ``HTML.__init__`` this repeats."""

    def __init__(self, string: str, base_url: str, url_fetcher: URLFetcher) -> None:
        root = plain_tree(string) if weasyprint_version == "70.0" else None
        if root is None:
            super().__init__(string=string, base_url=base_url, url_fetcher=url_fetcher)
            return
        # what HTML.__init__ sets (plain_tree refuses <base>: the base URL is the one given)
        self.base_url = base_url
        self.url_fetcher = url_fetcher
        self.media_type = "print"
        self.wrapper_element = cssselect2.ElementWrapper.from_html_root(root)
        self.etree_element = self.wrapper_element.etree_element

    def _ua_stylesheets(self, forms: bool = False) -> list[Any]:
        own: list[Any] = super()._ua_stylesheets(forms)
        sheet = _ua_stylesheet()
        return own if sheet is None else [sheet, *own[1:]]


# pydyf deflates every stream at zlib level 9; level 6, zlib's default, writes the example's
# PDF ~8 % faster for ~1 % more bytes (docs/benchmarks.md, sixth round).
_DEFLATE_LEVEL = 6


def _pdf_bytes(item: Any) -> bytes:
    """A stream item as pydyf writes it (``pydyf.Stream.data``)."""
    if isinstance(item, bytes):
        return item
    if isinstance(item, float):
        return (str(int(item)) if item.is_integer() else f"{item:f}".rstrip("0")).encode("ascii")
    if isinstance(item, pydyf.Object):
        return bytes(item.data)
    return str(item).encode("ascii")


def deflate_streams(_document: Any, pdf: Any) -> None:
    """``write_pdf(finisher=...)``: deflate each stream pydyf would compress at
    ``_DEFLATE_LEVEL`` instead of 9. A finisher sees the PDF's objects just before they are
    written; the streams it deflates are handed to pydyf already filtered and uncompressed."""
    for obj in pdf.objects:
        if isinstance(obj, pydyf.Stream) and obj.compress and "Filter" not in obj.extra:
            raw = b"\n".join(_pdf_bytes(item) for item in obj.stream)
            obj.stream = [zlib.compress(raw, _DEFLATE_LEVEL)]
            obj.extra["Filter"] = "/FlateDecode"
            obj.compress = False


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
               catalog: Catalog | None = None, appendix: bool = False) -> None:
    """Write the proposal PDF for ``result`` to ``path``; with ``appendix``, with the production
    debugger and the fitted constants, and followed by the formula appendix. They are opt-in
    (``report --appendix``): the workbook carries each of them live, and leaving them out
    saves a sixth of the PDF's CPU (issue 25; docs/benchmarks.md).

    Raises :class:`InputError` for a template problem (missing file, syntax error,
    undefined variable) or a URL the templates refer to that the renderer refuses."""
    roots = _roots(templates)
    context = {**build_context(result, catalog, detail=appendix), "appendix": appendix}
    html_text = _render_template(roots, context)
    fetcher = ClosedFetcher(roots)
    try:
        document = (with_appendix(html_text, roots, fetcher, context["footer_name"]) if appendix
                    else render_document(html_text, roots, fetcher))
        write_pdf(document, path)
    except FatalURLFetchingError:
        refused = fetcher.refused[0] if fetcher.refused else "a resource"
        raise InputError(
            f"the proposal templates refer to {refused[:200]!r}; the renderer fetches only "
            "data: URLs and files inside the templates folder") from None


def write_pdf(document: Any, path: Path) -> None:
    """Write a laid-out proposal to ``path`` (the fonts subset, the streams deflated at
    ``_DEFLATE_LEVEL``)."""
    document.write_pdf(str(path), full_fonts=not _fast_font_subsetting(),
                       finisher=deflate_streams)


# Stand-in pages at the end of the proposal, one per appendix page, so that its footers'
# ``counter(pages)`` counts the appendix too; they are dropped for the appendix's own pages.
_STAND_IN = '<div style="break-before: page; page-break-before: always">&#160;</div>'


def with_appendix(html_text: str, roots: tuple[Path, ...],
                  fetcher: ClosedFetcher | None = None, footer_name: str = "") -> Any:
    """The proposal ``html_text`` laid out and followed by the formula appendix
    (``appendix.html.j2``), its pages numbered on from the proposal's ("Page 15 of 17") and
    its running head naming the account (``footer_name``) as the proposal's pages do.

    The appendix's text is the same for every account, so its page count comes from one
    layout per process and templates version (the running head is out of the flow: the name
    moves no text); only the final layout, with the name and the page numbers, is per account.
    The proposal is laid out with that many stand-in pages at its end so that the footers of
    both count every page (docs/benchmarks.md)."""
    stylesheet = _stylesheet(roots)
    unnamed = _render_template(roots, {**formula_context(), "footer_name": ""},
                               APPENDIX_TEMPLATE)
    extra = len(_laid_out(unnamed, roots, stylesheet, 0, 0).pages)
    named = (_render_template(roots, {**formula_context(), "footer_name": footer_name},
                              APPENDIX_TEMPLATE) if footer_name else unnamed)
    at = html_text.rfind("</body>")
    at = len(html_text) if at < 0 else at
    for _ in range(3):  # a user's template that shows the name in its text may add a page
        document = render_document(html_text[:at] + _STAND_IN * extra + html_text[at:], roots,
                                   fetcher)
        own = len(document.pages) - extra
        appendix = _laid_out(named, roots, stylesheet, own, own + extra)
        if len(appendix.pages) == extra:
            break
        extra = len(appendix.pages)
    return document.copy([*document.pages[:own], *appendix.pages])


@lru_cache(maxsize=1)
def _fast_layout() -> bool:
    """WeasyPrint's computed-style look-up and used-length helpers in fewer calls, same
    results (fastlayout.py), installed once per process on the version they copy."""
    if weasyprint_version != "70.0":
        return False
    from .fastlayout import install

    return install()


@lru_cache(maxsize=16)
def _laid_out(html_text: str, roots: tuple[Path, ...], stylesheet: CSS, before: int,
              total: int) -> Any:
    """The appendix laid out after ``before`` proposal pages, ``total`` pages in all
    (print.css shows ``counter(total-pages)`` in the appendix's footers)."""
    _one_line_svg_text()
    _fast_layout()
    numbering = CSS(string=f"@page appendix:first {{ counter-set: page {before + 1}; "
                           f"counter-reset: total-pages {total}; }}")
    return ProposalHTML(string=html_text, base_url=roots[0].as_uri() + "/",
                        url_fetcher=ClosedFetcher(roots)).render(
        stylesheets=[stylesheet, numbering], font_config=_font_config())


def render_document(html_text: str, roots: tuple[Path, ...],
                    fetcher: ClosedFetcher | None = None) -> Any:
    """Lay out proposal HTML with the templates' stylesheet (WeasyPrint's part of a render;
    the batch benchmark times this alone as its floor)."""
    _one_line_svg_text()  # charts' text drawn a line, not a letter, at a time (svgtext.py)
    _fast_layout()
    return ProposalHTML(string=html_text, base_url=roots[0].as_uri() + "/",
                        url_fetcher=fetcher or ClosedFetcher(roots)).render(
        stylesheets=[_stylesheet(roots)], font_config=_font_config())
