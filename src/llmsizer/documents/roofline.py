"""The roofline chart (the web app's estimate page): attained TFLOP/s per GPU against
arithmetic intensity on log axes, the roof (bandwidth slope, then the compute ceiling), the
ridge point and the operating point. Every number comes from
:func:`llmsizer.sizing.debugger.roofline`; this module only draws."""

from __future__ import annotations

import matplotlib
from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter

from ..sizing.debugger import Roofline
from .chartcanvas import INK, NAVY, ORANGE, RC, TEAL, canvas, to_svg

_DECADES = (0.0001, 0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1e6)


def roofline_chart(r: Roofline, label: str) -> str:
    """SVG: the roof and the operating point ``label`` (e.g. "batch 16")."""
    xs = [p[0] for p in r.roof]
    ys = [p[1] for p in r.roof]
    with matplotlib.rc_context(RC):
        fig, ax = canvas("roofline", 3.0, 0.7, top_in=0.3, bottom_in=0.5, right_in=0.4,
                          width_in=6.0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(xs[0], xs[-1])
        # the y axis spans whole decades around the roof and the point (no arithmetic:
        # the decade below the lowest and the one above the compute ceiling)
        low = max(d for d in _DECADES if d < min(ys[0], r.achieved_tflops))
        high = next(d for d in _DECADES if d > r.peak_tflops)
        ax.set_ylim(low, high)
        ax.plot(xs, ys, color=NAVY, label="Roof: bandwidth, then compute ceiling")
        ax.axvline(r.ridge_flop_per_byte, color=TEAL, linestyle="--", linewidth=0.9,
                   label=f"Ridge point {r.ridge_flop_per_byte:,.0f} FLOP/B")
        ax.plot([r.intensity_flop_per_byte], [r.achieved_tflops], marker="o", color=ORANGE,
                linestyle="none", markersize=6,
                label=f"Operating point ({label}): {r.intensity_flop_per_byte:,.1f} FLOP/B, "
                      f"{r.achieved_tflops:,.1f} TFLOP/s")
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
        ax.legend(loc="lower right", fontsize=7, frameon=False)
        return to_svg(fig)
