"""The SVG canvas every proposal chart draws on (``charts``, ``roofline``): matplotlib's
settings for byte-stable SVG text, the palette, and one reused figure per kind of chart.

SVG settings: ``svg.fonttype = 'none'`` keeps text as text (searchable in the PDF,
drawn with the document's embedded DejaVu fonts); ``text.parse_math = False`` so a
label such as "$5M $10M" is not typeset as maths; a fixed ``svg.hashsalt`` and no
date in the metadata make the output byte-stable.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import FigureCanvasSVG, RendererSVG
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path

__all__ = [
    "GREY",
    "GRID",
    "INK",
    "NAVY",
    "ORANGE",
    "PAGE_WIDTH_IN",
    "PHONE_WIDTH_IN",
    "RC",
    "SAND",
    "TEAL",
    "TEAL_LIGHT",
    "TICK",
    "Fmt",
    "canvas",
    "drawn_at",
    "drawn_width",
    "text_size",
    "to_svg",
]

RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "llmsizer-proposal",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 7.5,
    "axes.titlesize": 8.5,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.labelsize": 7.5,
    "axes.edgecolor": "#8a94a3",
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.6,
}

NAVY = "#1f3a5f"
TEAL = "#2a9d8f"
TEAL_LIGHT = "#a8dad3"
GREY = "#c5ccd6"
ORANGE = "#d9623b"
SAND = "#e9c46a"
INK = "#1d2633"
TICK = "#4a5563"
GRID = "#e3e7ec"

Fmt = Callable[[float], str]

# Content width of the A4 page (210 mm - 2 x 18 mm margins) in inches.
PAGE_WIDTH_IN = 6.85
# A phone's column: a 390 px screen less the page's and the panel's margins (web/static/app.css,
# 320 CSS px) is 3.33 inches at the browser's 96 px an inch; 6.8-point texts are 9 px, as printed.
PHONE_WIDTH_IN = 3.3
_WIDTH: ContextVar[float] = ContextVar("chart_width_in", default=PAGE_WIDTH_IN)


@contextmanager
def drawn_width(width_in: float) -> Iterator[None]:
    """The memory and throughput charts (``charts``) drawn inside this block are ``width_in``
    wide (the web page's phone layout: :data:`PHONE_WIDTH_IN`); the PDF's column outside it."""
    token = _WIDTH.set(width_in)
    try:
        yield
    finally:
        _WIDTH.reset(token)


def drawn_at() -> float:
    """The width in inches the charts drawn now are asked for (:func:`drawn_width`)."""
    return _WIDTH.get()


def to_svg(fig: Figure) -> str:
    # Data artists are drawn inside their axes by construction: unclipped, they carry no
    # clip path for the PDF renderer to apply.
    # White on white: the figure and axes backgrounds are two paths per chart for nothing.
    fig.patch.set_visible(False)
    for ax in fig.axes:
        ax.patch.set_visible(False)
        for artist in (*ax.lines, *ax.collections, *ax.patches, *ax.texts):
            artist.set_clip_on(False)
    buf = io.StringIO()
    # Called inside the chart's rc_context(RC): the SVG settings apply.
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    # Inline in HTML: drop the XML prolog and DOCTYPE, keep the <svg> element.
    return text[text.index("<svg"):]


@lru_cache(maxsize=4096)
def text_size(text: str, prop: FontProperties) -> tuple[float, float, float]:
    measure: Any = text_to_path.get_text_width_height_descent  # untyped in matplotlib
    width, height, descent = measure(text, prop, ismath=False)
    return width, height, descent


class _RendererSVG(RendererSVG):
    """An SVG renderer whose text measurements outlive it. SVG text is measured by string and
    font alone, at 72 dpi; matplotlib caches measurements per renderer, that is per chart,
    while nine in ten of a chart's texts (ticks, legends, option names) recur across charts
    and accounts. Measuring was a fifth of a chart's time."""

    def get_text_width_height_descent(self, s: str, prop: FontProperties,
                                      ismath: Any) -> tuple[float, float, float]:
        if ismath:  # never, with text.parse_math off
            measure: Any = super().get_text_width_height_descent
            width, height, descent = measure(s, prop, ismath)
            return width, height, descent
        return text_size(s, prop.copy())  # a copy: FontProperties is mutable


class _CanvasSVG(FigureCanvasSVG):
    def print_svg(self, filename: Any, *, bbox_inches_restore: Any = None,
                  metadata: Any = None, **_unused: Any) -> None:
        """As matplotlib's FigureCanvasSVG.print_svg (3.8-3.11), with :class:`_RendererSVG`
        and a text buffer as the only target (a test compares the two canvases' output).
        Matplotlib passes its own print methods only the options they take, a subclass's
        all of them: dpi, colours and orientation mean nothing here, as in the original."""
        dpi = self.figure.dpi
        self.figure.dpi = 72
        width, height = self.figure.get_size_inches()
        mixed: Any = MixedModeRenderer  # untyped in matplotlib
        svg: Any = _RendererSVG
        renderer = mixed(self.figure, width, height, dpi,
                         svg(width * 72, height * 72, filename, image_dpi=dpi, metadata=metadata),
                         bbox_inches_restore=bbox_inches_restore)
        self.figure.draw(renderer)
        renderer.finalize()


# One figure with one set of axes per kind of chart, per process, emptied and resized for
# each chart: new axes cost ~2.5 ms, a fifth of a chart. Everything a chart adds is removed
# before the next; a test shows a reused figure draws byte-identical SVG to a new one.
# One chart at a time per process (batch workers are processes, not threads).
_CANVASES: dict[str, tuple[Figure, Any]] = {}


def canvas(kind: str, height_in: float, left_in: float, *, top_in: float,
            bottom_in: float, right_in: float = 0.15,
            width_in: float = PAGE_WIDTH_IN) -> tuple[Figure, Any]:
    """Empty axes in a figure with fixed margins in inches (constrained layout doubles the
    drawing time). Call inside ``rc_context(RC)``."""
    if kind not in _CANVASES:
        fig = Figure()
        _CanvasSVG(fig)
        _CANVASES[kind] = fig, fig.add_subplot()
    fig, ax = _CANVASES[kind]
    for artist in (*ax.collections, *ax.lines, *ax.patches, *ax.texts,
                   *fig.artists, *fig.lines, *fig.patches, *fig.texts):
        artist.remove()
    fig.set_size_inches(width_in, height_in)
    fig.subplots_adjust(left=left_in / width_in, right=1 - right_in / width_in,
                        top=1 - top_in / height_in, bottom=bottom_in / height_in)
    return fig, ax
