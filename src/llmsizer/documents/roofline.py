"""The roofline chart (the web app's estimate page): attained TFLOP/s per GPU against
arithmetic intensity on log axes, the roof (bandwidth slope, then the compute ceiling), the
ridge point and the operating point. Every number comes from
:func:`llmsizer.sizing.debugger.roofline`; this module only draws.

Width: 6 inches (576 px on the page), or a phone's (``PHONE_WIDTH_IN``, as the results'
charts, :func:`.charts.drawn_width`); the legend is set above the axes in as many rows as the
width needs (inside the plot, lower right, it lay over the ridge line and, on a phone, ran
off the chart)."""

from __future__ import annotations

import matplotlib
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter

from ..sizing.debugger import Roofline
from .chartcanvas import INK, NAVY, ORANGE, RC, TEAL, canvas, to_svg
from .charts import _legend, _rows

WIDTH_IN = 6.0

_DECADES = (0.0001, 0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1e6)


def roofline_chart(r: Roofline, label: str, width_in: float = WIDTH_IN) -> str:
    """SVG: the roof and the operating point ``label`` (e.g. "batch 16"), ``width_in`` wide."""
    xs = [p[0] for p in r.roof]
    ys = [p[1] for p in r.roof]
    texts = ["Roof: bandwidth, then compute ceiling",
             f"Ridge point {r.ridge_flop_per_byte:,.0f} FLOP/B",
             f"Operating point ({label}): {r.intensity_flop_per_byte:,.1f} FLOP/B, "
             f"{r.achieved_tflops:,.1f} TFLOP/s"]
    rows = [len(row) for row in _rows([Line2D([], [], label=t) for t in texts],
                                      width_in * 72 - 8)]
    more = (len(rows) - 1) * 12 / 72  # inches: 12 points a legend row
    with matplotlib.rc_context(RC):
        fig, ax = canvas("roofline", 3.0 + more, 0.7, top_in=0.34 + more, bottom_in=0.5,
                         right_in=0.4 if width_in >= WIDTH_IN else 0.2, width_in=width_in)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(xs[0], xs[-1])
        # the y axis spans whole decades around the roof and the point (no arithmetic:
        # the decade below the lowest and the one above the compute ceiling)
        low = max(d for d in _DECADES if d < min(ys[0], r.achieved_tflops))
        high = next(d for d in _DECADES if d > r.peak_tflops)
        ax.set_ylim(low, high)
        keys = ax.plot(xs, ys, color=NAVY, label=texts[0])
        keys.append(ax.axvline(r.ridge_flop_per_byte, color=TEAL, linestyle="--",
                               linewidth=0.9, label=texts[1]))
        keys += ax.plot([r.intensity_flop_per_byte], [r.achieved_tflops], marker="o",
                        color=ORANGE, linestyle="none", markersize=6, label=texts[2])
        # plain tick labels: the charts' settings turn mathtext off, so matplotlib's
        # log labels (10^k in mathtext) would print as source
        for axis, top in ((ax.xaxis, xs[-1]), (ax.yaxis, high)):
            decades = [d for d in _DECADES if d <= top]
            axis.set_major_locator(FixedLocator(decades))
            axis.set_major_formatter(FixedFormatter([f"{d:,g}" for d in decades]))
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("Arithmetic intensity (FLOP per byte read)", color=INK)
        ax.set_ylabel("TFLOP/s per GPU", color=INK)
        ax.grid(True, which="major", color="#e3e7ec", linewidth=0.5)
        middle = fig.get_size_inches()[1] - 10.5 / 72
        for n in rows:  # above the axes, centred on the figure: never over the plot
            _legend(fig, keys[:n], width_in / 2, middle)
            keys, middle = keys[n:], middle - 12 / 72
        return to_svg(fig)
