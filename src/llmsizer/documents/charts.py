"""Charts for the proposal: matplotlib figures rendered to SVG text for inline use.

Every number drawn comes from the engine: an option's values (the memory segments) or
:func:`llmsizer.sizing.engine.curve` (the throughput curve over batch sizes); nothing is
computed here.

Speed: a chart costs 13-15 ms to make and about as much for WeasyPrint to draw, so the
proposal has one memory chart and one cost chart per account and one throughput chart
per workload, bars are one collection per series, and axes are drawn as plain texts
and one gridline collection instead of matplotlib's ticks (five artists each).

The SVG canvas, its settings and the palette are in ``chartcanvas``.

Width: the memory and throughput charts are drawn for the PDF's column (``PAGE_WIDTH_IN``)
unless a width is given, as an argument or for a block of drawing (:func:`drawn_width`: the
web app's phone layout, ``PHONE_WIDTH_IN``, where their texts keep the printed page's size
and the chart fits the screen instead of scrolling sideways).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import Affine2D, ScaledTranslation, Transform, blended_transform_factory

from ..sizing.results import Option
from .chartcanvas import (
    GREY,
    GRID,
    INK,
    NAVY,
    ORANGE,
    PAGE_WIDTH_IN,
    PHONE_WIDTH_IN,
    RC,
    SAND,
    TEAL,
    TEAL_LIGHT,
    TICK,
    Fmt,
    canvas,
    drawn_at,
    drawn_width,
    text_size,
    to_svg,
)

__all__ = [
    "MEMORY_SEGMENTS",
    "PHONE_WIDTH_IN",
    "CostBar",
    "MemoryBar",
    "TornadoRow",
    "breakeven_chart",
    "breakeven_window",
    "cost_chart",
    "drawn_width",
    "memory_chart",
    "memory_segments",
    "throughput_chart",
    "tornado_chart",
]

def _narrow(width_in: float | None) -> tuple[float, bool]:
    """The width to draw at (the argument, or :func:`drawn_width`'s) and whether it is narrower
    than the PDF's column (a phone: fewer values on an axis, legends in rows)."""
    w = width_in if width_in is not None else drawn_at()
    return w, w < PAGE_WIDTH_IN - 1e-9


MEMORY_SEGMENTS = (
    ("weights_gb", "Weights", NAVY),
    ("kv_in_use_gb", "KV in use", TEAL),
    ("kv_spare_gb", "KV spare", TEAL_LIGHT),
    ("memory_reserved_gb", "Reserve", GREY),
)


def memory_segments(option: Option) -> dict[str, float]:
    """Weights / KV in use / KV spare / reserve (GB per replica), from the engine's values."""
    v = option.values
    return {name: float(v[name]) for name, _label, _color in MEMORY_SEGMENTS} | {
        "replica_memory_gb": float(v["replica_memory_gb"])}


def _hbars(ax: Any, ys: Sequence[float], lefts: Sequence[float], widths: Sequence[float],
           height: float, color: str, label: str | None) -> None:
    """Horizontal bars as one collection: ``barh`` makes a patch per bar and updates the
    data limits for each (a quarter of a chart's time); callers set the limits."""
    half = height / 2
    verts = [[(x, y - half), (x + w, y - half), (x + w, y + half), (x, y + half)]
             for y, x, w in zip(ys, lefts, widths, strict=True)]
    ax.add_collection(PolyCollection(verts, facecolors=color, linewidths=0,
                                     label=label or "_nolegend_"), autolim=False)


def _row_labels(ax: Any, ys: Sequence[float], labels: Sequence[str], fontsize: float = 7.5,
                bold: Sequence[bool] | None = None, colors: Sequence[str] | None = None,
                wrap: bool = False) -> None:
    """Category labels left of the axes as plain texts: a tick per row would be five artists
    (a quarter of a bar chart's time) for one label. ``wrap``: a label too wide breaks once
    after a word (:func:`_wrap`) before anything is cut, where a row has room for two lines."""
    ax.set_yticks([])
    to_axes = ax.get_yaxis_transform()  # x in axes fractions, y in data
    # Each line is cut (with an ellipsis) to the room left of the axes, measured in the
    # label's font: a name of wide letters never runs off the chart.
    box, width_in = ax.get_position(), ax.figure.get_size_inches()[0]
    room = (box.x0 - 0.012 * box.width) * width_in * 72 - 2
    for i, (y, label) in enumerate(zip(ys, labels, strict=True)):
        prop = FontProperties(size=fontsize, weight="bold" if bold and bold[i] else "normal")
        lines = (_wrap(label, prop, room) if wrap else label).split("\n")
        label = "\n".join(_fit(line, prop, room) for line in lines)
        ax.text(-0.012, y, label, transform=to_axes, ha="right", va="center",
                fontsize=fontsize, linespacing=1.15,
                color=colors[i] if colors else "#4a5563",
                fontweight="bold" if bold and bold[i] else "normal")


def _label_room(left_in: float, right_in: float = 0.15, width_in: float = PAGE_WIDTH_IN) -> float:
    """The room in points for a row label left of axes with these margins (as _row_labels)."""
    return (left_in - 0.012 * (width_in - left_in - right_in)) * 72 - 2


def _wrap(text: str, prop: FontProperties, room_pt: float) -> str:
    """``text`` with each line wider than ``room_pt`` broken once, after its last word that
    fits ("RTX PRO 6000 Blackwell" / "Server Edition"), so a name is not cut mid-word; what
    still does not fit is cut by :func:`_fit`."""
    lines = []
    for line in text.split("\n"):
        words = line.split(" ")
        head = next((k for k in range(len(words) - 1, 0, -1)
                     if text_size(" ".join(words[:k]), prop)[0] <= room_pt), 0)
        if text_size(line, prop)[0] <= room_pt or not head:
            lines.append(line)
        else:
            lines += [" ".join(words[:head]), " ".join(words[head:])]
    return "\n".join(lines)


def _fit(text: str, prop: FontProperties, room_pt: float) -> str:
    """``text``, cut to at most ``room_pt`` points wide in ``prop`` (ending in an ellipsis)."""
    if text_size(text, prop)[0] <= room_pt:
        return text
    while text and text_size(text + "…", prop)[0] > room_pt:
        text = text[:-1]
    return text.rstrip() + "…"


def _nice_ticks(top: float, n: int, integer: bool = False) -> list[float]:
    """Round values from 0 to ``top`` (matplotlib's own tick locator)."""
    return [float(t) for t in MaxNLocator(n, integer=integer).tick_values(0, top)
            if 0 <= t <= top * (1 + 1e-9)]


def _axis_top(values: Sequence[float]) -> float:
    """An axis's upper limit: the largest value plus a 5 % margin (as matplotlib pads)."""
    return 1.05 * max([*values, 1e-9])


def _shift(fig: Figure, dx_pt: float, dy_pt: float) -> Transform:
    return ScaledTranslation(dx_pt / 72, dy_pt / 72, fig.dpi_scale_trans)


# Room between a bar's end and its value label, in points. Not leading spaces: SVG drops a
# text's leading and trailing spaces (no xml:space), so "  USD 422 k" touched its bar and a
# zero-length bar's "-50 %" sat on the tornado's centre line.
LABEL_GAP_PT = 3.0


def _beside(ax: Any, side: str = "left") -> Transform:
    """Data coordinates moved ``LABEL_GAP_PT`` away from the bar end a label is anchored at:
    right of it for a left-aligned label, left of it for a right-aligned one."""
    moved: Transform = ax.transData + _shift(ax.figure, LABEL_GAP_PT if side == "left"
                                             else -LABEL_GAP_PT, 0)
    return moved


def _x_values(ax: Any, ticks: Sequence[float], fmt: Fmt, label: str) -> None:
    """The value axis along x as plain artists: one gridline collection and one text per
    value. Matplotlib makes each tick from five artists; its tick machinery was 40 % of a
    chart's time (docs/benchmarks.md)."""
    ax.set_xticks([])
    fig = ax.figure
    along = ax.get_xaxis_transform()  # x in data, y in axes fractions
    ax.add_collection(LineCollection([[(x, 0), (x, 1)] for x in ticks], colors=GRID,
                                     linewidths=0.6, transform=along, zorder=0.5))
    below = along + _shift(fig, 0, -3)
    for x in ticks:
        ax.text(x, 0, fmt(x), transform=below, ha="center", va="top", color=TICK)
    ax.text(0.5, 0, label, transform=ax.transAxes + _shift(fig, 0, -15), ha="center", va="top")


def _y_values(ax: Any, ticks: Sequence[float], fmt: Fmt, label: str, color: str, *,
              right: bool = False, scaled: Transform | None = None) -> None:
    """The value axis along y as plain artists (see :func:`_x_values`); ``right`` puts it on
    the right-hand side without gridlines, for a second series drawn with ``scaled``. The
    axis title sits at the figure's edge."""
    ax.set_yticks([])
    fig = ax.figure
    across = blended_transform_factory(ax.transAxes, scaled or ax.transData)
    if not right:
        ax.add_collection(LineCollection([[(0, y), (1, y)] for y in ticks], colors=GRID,
                                         linewidths=0.6, transform=across, zorder=0.5))
    beside = across + _shift(fig, 3 if right else -3, 0)
    for y in ticks:
        ax.text(1 if right else 0, y, fmt(y), transform=beside, va="center",
                ha="left" if right else "right", color=TICK)
    ax.text(0.995 if right else 0.005, 0.5, label, rotation=90, va="center",
            ha="right" if right else "left", color=color,
            transform=blended_transform_factory(fig.transFigure, ax.transAxes))


def _legend(fig: Figure, keys: Sequence[Any], centre_in: float, middle_in: float,
            fontsize: float = 6.8) -> None:
    """A one-row legend for the labelled lines and bar collections ``keys``, centred at
    (``centre_in``, ``middle_in``) inches from the figure's bottom left: swatches and texts
    placed directly. Matplotlib's Legend lays itself out through nested boxes at every draw,
    a quarter of a chart's time. A row wider than the figure is set in a smaller font, so
    it never runs off the chart. A line key with a marker and no line style is a dot."""
    room = fig.get_size_inches()[0] * 72 - 8  # points, a margin each side
    while True:
        prop = FontProperties(size=fontsize)
        widths = [text_size(k.get_label(), prop)[0] for k in keys]
        handles = [(1.8 if isinstance(k, Line2D) else 1.2) * fontsize for k in keys]
        pad, gap = 0.8 * fontsize, 1.6 * fontsize  # points
        total = sum(handles) + sum(widths) + (pad + gap) * len(keys) - gap
        if total <= room or fontsize <= 4:
            break
        fontsize *= 0.95
    x, y = centre_in * 72 - total / 2, middle_in * 72
    if x + total > room + 8 or x < 0:  # centred, it would run off the figure (a bar chart's is
        # centred over its axes, right of the labels: a phone's narrow chart lost its last key)
        x = max(4.0, room + 4 - total)
    points = Affine2D().scale(1 / 72) + fig.dpi_scale_trans
    for key, handle, width in zip(keys, handles, widths, strict=True):
        if isinstance(key, Line2D) and key.get_linestyle() in ("None", "none", ""):
            fig.add_artist(Line2D([x + handle / 2], [y], color=key.get_color(), linestyle="none",
                                  marker=key.get_marker(), markersize=key.get_markersize(),
                                  markerfacecolor=key.get_markerfacecolor(),
                                  markeredgecolor=key.get_markeredgecolor(),
                                  markeredgewidth=key.get_markeredgewidth(),
                                  transform=points))
        elif isinstance(key, Line2D):
            fig.add_artist(Line2D([x, x + handle], [y, y], color=key.get_color(),
                                  linestyle=key.get_linestyle(),
                                  linewidth=key.get_linewidth(), transform=points))
        else:
            fig.add_artist(Rectangle((x, y - 0.35 * fontsize), handle, 0.7 * fontsize,
                                     facecolor=key.get_facecolor()[0], linewidth=0,
                                     transform=points))
        fig.text(x + handle + pad, y, key.get_label(), fontsize=fontsize, va="center",
                 transform=points)
        x += handle + pad + width + gap


def _rows(keys: Sequence[Any], room_pt: float, fontsize: float = 6.8) -> list[list[Any]]:
    """Legend keys in rows that each fit ``room_pt`` at ``fontsize`` (as :func:`_legend` lays a
    row out), in their order: a narrow chart's legend in two or three rows rather than one in
    a font too small to read. A key too wide on its own has a row to itself (and shrinks)."""
    prop = FontProperties(size=fontsize)
    pad, gap = 0.8 * fontsize, 1.6 * fontsize
    rows: list[list[Any]] = []
    used = 0.0
    for k in keys:
        need = (1.8 if isinstance(k, Line2D) else 1.2) * fontsize + pad + text_size(
            k.get_label(), prop)[0]
        if rows and used + gap + need <= room_pt:
            rows[-1].append(k)
            used += gap + need
        else:
            rows.append([k])
            used = need
    return rows


def _bar_legend(ax: Any, fontsize: float = 6.8) -> None:
    """The legend of a bar chart: one key per labelled series, centred above the axes."""
    fig = ax.figure
    box = ax.get_position()  # figure fractions
    width, height = fig.get_size_inches()
    keys = [c for c in ax.collections if not c.get_label().startswith("_")]
    _legend(fig, keys, (box.x0 + box.x1) / 2 * width, box.y1 * height + 10 / 72, fontsize)


# ---- the charts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryBar:
    label: str
    segments: Mapping[str, float]  # empty: a heading row (a workload's name), no bar
    chosen: bool


def memory_chart(bars: Sequence[MemoryBar], gb: Fmt, width_in: float | None = None) -> str:
    """Horizontal stacked bars: memory of one replica per option, in groups headed by
    their workload when there are several (one chart per account: each chart costs
    ~50 ms to make and draw). ``width_in``: see :func:`drawn_width`; a narrow chart gives
    its labels 38 % of its width and its axis three values."""
    rows = max(len(bars), 1)
    width, narrow = _narrow(width_in)
    left = round(0.38 * width, 2) if narrow else 1.75
    room = _label_room(left, width_in=width)
    labels = [_wrap(b.label, FontProperties(size=6.8, weight="bold" if b.chosen or not b.segments
                                            else "normal"), room) for b in bars]
    # a third line of label (a long GPU name wrapped) needs a taller row
    lines = max((label.count("\n") + 1 for label in labels), default=1)
    with matplotlib.rc_context(RC):
        fig, ax = canvas("memory", 0.8 + (0.36 + 0.12 * max(lines - 2, 0)) * rows, left,
                          top_in=0.34, bottom_in=0.46, width_in=width)
        ys = list(range(len(bars)))[::-1]
        drawn = [(y, b) for y, b in zip(ys, bars, strict=True) if b.segments]
        lefts = [0.0] * len(drawn)
        for name, label, color in MEMORY_SEGMENTS:
            widths = [b.segments[name] for _y, b in drawn]
            _hbars(ax, [y for y, _b in drawn], lefts, widths, 0.62, color, label)
            lefts = [left + width for left, width in zip(lefts, widths, strict=True)]
        ax.set_ylim(-0.6, len(bars) - 0.4)
        top = 1.1 * max(lefts, default=1.0)
        if narrow and drawn:  # room right of the longest bar for its value ("1,130 GB")
            axes_pt = (width - left - 0.15) * 72
            widest = max(text_size(gb(b.segments["replica_memory_gb"]),
                                   FontProperties(size=6.5))[0] for _y, b in drawn)
            top = max(top, max(lefts) * axes_pt / max(axes_pt - widest - LABEL_GAP_PT - 2, 1))
        ax.set_xlim(0, top)
        for y, b in drawn:
            ax.text(b.segments["replica_memory_gb"], y, gb(b.segments["replica_memory_gb"]),
                    va="center", ha="left", fontsize=6.5, color=INK, transform=_beside(ax))
        _row_labels(ax, ys, labels, fontsize=6.8,
                    bold=[b.chosen or not b.segments for b in bars],
                    colors=[NAVY if not b.segments else "#4a5563" for b in bars])
        _x_values(ax, _nice_ticks(top, 3 if narrow else 5), lambda x: f"{x:,.0f}",
                  "GB per replica")
        _bar_legend(ax)
        return to_svg(fig)


def throughput_chart(points: Sequence[Mapping[str, float]], chosen: Mapping[str, float],
                     slo_tok_s: float, caps: Sequence[tuple[float, str]], tok_s: Fmt,
                     count: Fmt, width_in: float | None = None,
                     batch: Fmt | None = None) -> str:
    """Per-user speed (left axis, with the SLO line) and replica throughput (right axis)
    against batch. One panel: the replica series is drawn through a vertical scaling of the
    same axes, so its right-hand axis needs no second set of axes (charts cost ~1 ms per
    tick and ~5 ms per set of axes to make and draw).

    No text is drawn inside the plot: the chosen batch's figures and the batch limit are
    legend entries in a second row above it, so no label can land on a curve, a dot or
    another label, whatever the curves' shapes. ``width_in``: see :func:`drawn_width`; a
    narrow chart sets its legends in as many rows as they need, each 12 points high.
    Each dot at the batch its figure is read at (review round 24): the replica's output at
    the limit (``batch_per_replica``), the per-user speed at ``batch_served`` (the limit where
    ``chosen`` has none); one dot and one key where they coincide."""
    xs = [p["batch_per_replica"] for p in points]
    users = [p["tokens_per_s_per_user"] for p in points]
    replicas = [p["replica_output_tokens_per_s"] for p in points]
    cb = chosen["batch_per_replica"]
    served = chosen.get("batch_served", cb)
    batch = batch or count  # a mean batch at peak to three figures ("9.71"): Formatter.batch
    x_top = _axis_top([*xs, cb, *(x for x, _label in caps)])
    left_top = _axis_top([*users, slo_tok_s, chosen["tokens_per_s_per_user"]])
    right_top = _axis_top([*replicas, chosen["replica_output_tokens_per_s"]])
    width, narrow = _narrow(width_in)
    lines = ["Tokens/s per user (left)", "Tokens/s per replica (right)"]
    if slo_tok_s > 0:
        lines.append(f"Target {tok_s(slo_tok_s)} per user")
    # the batch limit (batch_per_replica), the words of the PDF's risks and the web's table
    # (session 23: the web's "Chosen batch 256" beside "Batch (its pool's) 86")
    user, replica = (tok_s(chosen[k]) for k in ("tokens_per_s_per_user",
                                                "replica_output_tokens_per_s"))
    marks = [f"Batch limit {count(cb)}: {user} per user, {replica} per replica"  # reached
             ] if served == cb else [f"Batch limit {count(cb)}: {replica} per replica",
                                     f"At peak, batch {batch(served)}: {user} per user"]
    n_dots = len(marks)
    marks += [f"{label[:1].upper()}{label[1:]} at batch {count(x)}" for x, label in caps]
    # each legend's rows: one each at the PDF's width, as many as they need on a phone
    rows = [[len(r) for r in _rows([Line2D([], [], label=s) for s in texts], width * 72 - 8)]
            if narrow else [len(texts)] for texts in (lines, marks)]
    more = (len(rows[0]) + len(rows[1]) - 2) * 12 / 72  # inches: 12 points a row
    with matplotlib.rc_context(RC):
        fig, ax = canvas("throughput", 2.65 + more, 0.62, top_in=0.45 + more, bottom_in=0.42,
                         right_in=0.62, width_in=width)
        ax.spines["right"].set_visible(True)
        ax.set_xlim(0, x_top)
        ax.set_ylim(0, left_top)
        # The right-hand series drawn in the left axis's units: top of one = top of the other.
        on_right = Affine2D().scale(1, left_top / right_top) + ax.transData
        handles = ax.plot(xs, users, color=NAVY, label=lines[0])
        handles += ax.plot(xs, replicas, color=TEAL, label=lines[1], transform=on_right)
        if slo_tok_s > 0:
            handles.append(ax.axhline(slo_tok_s, color=ORANGE, linestyle="--", linewidth=1.1,
                                      label=lines[2]))
        ax.axvline(cb, color=INK, linewidth=0.8, linestyle=":")
        # the peak's dot: a navy-edged diamond where it is not the limit's (its own key)
        peak_dot: dict[str, Any] = {"marker": "o", "markersize": 5, "color": ORANGE} if n_dots == 1 else {
            "marker": "D", "markersize": 4.5, "color": "white", "markeredgecolor": NAVY,
            "markeredgewidth": 1.2}
        ax.plot([cb], [chosen["replica_output_tokens_per_s"]], marker="o", markersize=5,
                color=ORANGE, zorder=5, transform=on_right)
        ax.plot([served], [chosen["tokens_per_s_per_user"]], zorder=6, transform=ax.transData,
                **peak_dot)
        notes = [Line2D([], [], color=ORANGE, marker="o", markersize=5, linestyle="none",
                        label=marks[0])]
        if n_dots == 2:
            notes.append(Line2D([], [], linestyle="none", label=marks[1], **peak_dot))
        for (x, _label), text in zip(caps, marks[n_dots:], strict=True):
            ax.axvline(x, color="#9aa4b1", linewidth=0.7, linestyle="-.")
            notes.append(Line2D([], [], color="#9aa4b1", linewidth=0.7, linestyle="-.",
                                label=text))
        _y_values(ax, _nice_ticks(left_top, 4), count, "tok/s per user", NAVY)
        _y_values(ax, _nice_ticks(right_top, 4), count, "tok/s per replica", TEAL, right=True,
                  scaled=on_right)
        _x_values(ax, _nice_ticks(x_top, 4 if narrow else 6, integer=True), count,
                  "Batch (sequences per replica)")
        height = fig.get_size_inches()[1]
        middle = height - 10.5 / 72
        for keys, counts in ((handles, rows[0]), (notes, rows[1])):
            for n in counts:
                _legend(fig, keys[:n], width / 2, middle)
                keys, middle = keys[n:], middle - 12 / 72
        return to_svg(fig)


@dataclass(frozen=True)
class CostBar:
    label: str
    annual_capex: float | None  # None: only the total is known (account totals)
    annual_power: float | None
    annual_support: float | None
    onprem_total: float
    cloud: float | None  # None: no cloud price listed for a GPU of it
    priced: bool


def cost_chart(bars: Sequence[CostBar], years_label: str, money: Fmt, money_short: Fmt) -> str:
    """Annual cost per deployment: on-prem (amortised capex + power + support) vs cloud."""
    n = max(len(bars), 1)
    with matplotlib.rc_context(RC):
        fig, ax = canvas("cost", 0.85 + 0.5 * n, 2.2, top_in=0.34, bottom_in=0.42)
        labels: list[str] = []
        ys: list[float] = []
        # (y, left, width) per series; one collection each (see _hbars)
        series: dict[str, list[tuple[float, float, float]]] = {
            "capex": [], "power": [], "support": [], "total": [], "cloud": []}
        for i, b in enumerate(bars):
            y_on, y_cl = float(2 * (n - 1 - i)) + 0.78, float(2 * (n - 1 - i))
            if b.priced and b.annual_capex is not None and b.annual_power is not None and (
                    b.annual_support is not None):
                left = 0.0
                for key, width in (("capex", b.annual_capex), ("power", b.annual_power),
                                   ("support", b.annual_support)):
                    series[key].append((y_on, left, width))
                    left += width
            elif b.priced:
                series["total"].append((y_on, 0.0, b.onprem_total))
            if b.cloud is not None:
                series["cloud"].append((y_cl, 0.0, b.cloud))
            ax.text(b.onprem_total if b.priced else 0, y_on,
                    money(b.onprem_total) if b.priced else "no purchase price in catalog",
                    va="center", fontsize=6.8, color=INK, transform=_beside(ax))
            ax.text(b.cloud or 0, y_cl, money(b.cloud) if b.cloud is not None
                    else "no cloud price listed",
                    va="center", fontsize=6.8, color=INK, transform=_beside(ax))
            # One label per deployment; the legend tells the on-premises bar from the cloud one.
            labels.append(b.label)
            ys.append((y_on + y_cl) / 2)
        styles = {"capex": (NAVY, f"Capital cost over {years_label}"),
                  "power": (SAND, "Power, colocation"),
                  "support": (GREY, "Support, storage, licences"),
                  # a total known only whole (the account's, beside its "Account total"
                  # label): its own colour, never the capital cost's, which read as "all of
                  # it is capital"; no legend key (a fifth one ran off narrow charts)
                  "total": (TICK, None), "cloud": (TEAL, "Cloud")}
        for key, rows in series.items():
            if rows:
                color, label = styles[key]
                _hbars(ax, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                       0.7, color, label)
        widest = max(max((b.cloud for b in bars if b.cloud is not None), default=0.0),
                     max((b.onprem_total for b in bars if b.priced), default=0.0))
        top = 1.22 * max(widest, 1.0)
        ax.set_xlim(0, top)
        ax.set_ylim(-0.6, 2 * n - 0.6)
        # two bars per label: room for two lines ("Claims document classificat…" was cut,
        # review round 19)
        _row_labels(ax, ys, labels, wrap=True)
        # a value at the axis's very end would print half outside the chart
        _x_values(ax, [t for t in _nice_ticks(top, 5) if t <= 0.95 * top], money_short,
                  "Cost per year")
        _bar_legend(ax)
        return to_svg(fig)


# ---- sensitivity and break-even (costs) ------------------------------------------------------


@dataclass(frozen=True)
class TornadoRow:
    label: str  # what changes, e.g. "Concurrent users"
    low: float  # the scenario value of the lower change (e.g. users x0.5)
    high: float  # of the higher change (e.g. users x2)
    low_label: str  # "x0.5"
    high_label: str  # "x2"


def tornado_chart(rows: Sequence[TornadoRow], base: float, money: Fmt, money_short: Fmt,
                  axis: str = "On-premises cost per year") -> str:
    """One bar per input from the base to each of its scenarios' values (the annual cost
    ``axis`` names: on-premises, or the cloud's where renting is recommended), widest swing
    first: which estimate moves the cost most."""
    n = max(len(rows), 1)
    values = [base, *(r.low for r in rows), *(r.high for r in rows)]
    lo, hi = min(values), max(values)
    span = max(hi - lo, 1e-9 + 0.02 * abs(base))
    left, right = lo - 0.3 * span, hi + 0.3 * span
    with matplotlib.rc_context(RC):
        fig, ax = canvas("tornado", 0.75 + 0.42 * n, 1.3, top_in=0.34, bottom_in=0.42)
        ys = [float(n - 1 - i) for i in range(n)]
        # The lower change's bar above the higher's: both sides of the base, or one side.
        for key, dy, color, legend in (("low", 0.17, TEAL, "Estimate lowered"),
                                       ("high", -0.17, ORANGE, "Estimate raised")):
            starts, widths = [], []
            for r in rows:
                v = r.low if key == "low" else r.high
                starts.append(min(base, v))
                widths.append(abs(v - base))
            _hbars(ax, [y + dy for y in ys], starts, widths, 0.3, color, legend)
            for y, r in zip(ys, rows, strict=True):
                v, text = (r.low, r.low_label) if key == "low" else (r.high, r.high_label)
                # a zero-length bar's label starts clear of the centre line, right of it
                side = "left" if v >= base else "right"
                ax.text(v, y + dy, f"{text}: {money(v)}", va="center", ha=side,
                        fontsize=6.2, color=INK, transform=_beside(ax, side))
        ax.axvline(base, color=INK, linewidth=0.8)
        ax.set_xlim(left, right)
        ax.set_ylim(-0.6, n - 0.4)
        _row_labels(ax, ys, [r.label for r in rows])
        # as the cost chart: a value at the axis's very end would print half outside the chart
        ticks = [t for t in MaxNLocator(5).tick_values(left, right)
                 if left <= t <= right - 0.05 * (right - left)]
        _x_values(ax, ticks, money_short,
                  f"{axis} (vertical line: as proposed, {money(base)})")
        _bar_legend(ax)
        return to_svg(fig)


def breakeven_window(points: Sequence[Mapping[str, float]], load: float,
                     keys: Sequence[str]) -> tuple[list[Mapping[str, float]], float, float]:
    """The break-even chart's axes fit the data it draws (issue 22, item 7): costs at the
    lowest loads dwarf the rest, so the value axis fits the loads from 30 % (or the account's
    load, if lower) up, and the load axis starts at the lowest load whose costs fit under it;
    nothing is cut off at the top (the table lists every load). Returns (the points drawn, the
    value axis's top, the lowest load drawn)."""
    floor = min(0.3, load)
    top = _axis_top([p[k] for p in points if p["load"] >= floor - 1e-9 for k in keys])
    shown = [p for p in points if all(p[k] <= top for k in keys)]
    low = min((p["load"] for p in shown), default=0.0)
    return shown, top, low


def breakeven_chart(points: Sequence[Mapping[str, float]], load: float, money: Fmt,
                    pct: Fmt, api: bool, cloud: bool = True) -> str:
    """Cost per million tokens (input + output) against average load: owning, renting
    always on and the hosted API's price (each where priced); the account's load marked."""
    series = [("cost_per_million_total_tokens_onprem", NAVY, "On-premises")]
    if cloud:
        series.append(("cost_per_million_total_tokens_cloud", TEAL, "Cloud, rented always on"))
    if api:
        series.append(("cost_per_million_total_tokens_api", ORANGE, "Hosted API"))
    shown, top, low = breakeven_window(points, load, [k for k, _c, _l in series])
    xs = [p["load"] for p in shown]
    with matplotlib.rc_context(RC):
        fig, ax = canvas("breakeven", 2.3, 0.7, top_in=0.3, bottom_in=0.42)
        ax.set_xlim(low - 0.02, 1.02)
        ax.set_ylim(0, top)
        handles = []
        for key, color, label in series:
            handles += ax.plot(xs, [p[key] for p in shown], color=color, label=label,
                               linestyle="--" if key.endswith("api") else "-")
        ax.axvline(load, color=INK, linewidth=0.8, linestyle=":")
        ax.annotate(f"account's load {pct(load)}", (load, 1.0),
                    xycoords=("data", "axes fraction"), textcoords="offset points",
                    xytext=(4, -2), fontsize=7, va="top", color=INK)
        _y_values(ax, _nice_ticks(top, 4), money, "per million tokens", INK)
        # the first load drawn is labelled, then every 20 % not too close to it
        ticks = [low, *(x for x in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0) if x > low + 0.05)]
        _x_values(ax, ticks, pct, "Average load (share of peak)")
        width, height = fig.get_size_inches()
        _legend(fig, handles, width / 2, height - 10.5 / 72)
        return to_svg(fig)
