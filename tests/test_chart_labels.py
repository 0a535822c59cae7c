"""Chart labels cannot collide: every text of every chart of every shipped account, read back
from the SVG (position, anchor, rotation, font; extent measured with the same font metrics
matplotlib lays text out with), lies inside the chart and overlaps no other text, no curve
or line, no marker and no bar, and keeps clear of a bar's end."""

from __future__ import annotations

import base64
import itertools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path

from llmsizer.documents.proposal import build_context
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]
INPUTS = sorted((ROOT / "inputs").glob("*.y*ml"))
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
MARKER_RADIUS = 2.5  # points: the chosen-batch dot is markersize 5
BAR_CLEARANCE = 1.5  # points between a bar's end and a text beside it: less reads as touching


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float
    what: str

    def overlaps(self, o: Box) -> bool:
        return self.x0 < o.x1 and o.x0 < self.x1 and self.y0 < o.y1 and o.y0 < self.y1

    def widened(self, dx: float) -> Box:
        return Box(self.x0 - dx, self.y0, self.x1 + dx, self.y1, self.what)

    def hits_segment(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        """Whether the segment a-b passes through the box's interior (sampled finely)."""
        steps = max(2, int(max(abs(b[0] - a[0]), abs(b[1] - a[1])) / 0.25))
        for i in range(steps + 1):
            x = a[0] + (b[0] - a[0]) * i / steps
            y = a[1] + (b[1] - a[1]) * i / steps
            if self.x0 < x < self.x1 and self.y0 < y < self.y1:
                return True
        return False


def _style(el: ET.Element) -> dict[str, str]:
    out = {}
    for part in (el.get("style") or "").split(";"):
        if ":" in part:
            k, v = part.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def _drawn(text: str) -> str:
    """A text as SVG draws it without xml:space="preserve": newlines dropped, tabs as spaces,
    runs of spaces collapsed and leading and trailing ones stripped (no-break spaces kept).
    Measured with its leading spaces, "  USD 422 k" seemed clear of the bar it touched."""
    return re.sub(" +", " ", text.replace("\n", "").replace("\t", " ")).strip(" ")


def _text_box(el: ET.Element) -> Box:
    style = _style(el)
    text = _drawn(el.text or "")
    prop = FontProperties(family="DejaVu Sans", size=float(style["font-size"].rstrip("px")),
                          weight=style.get("font-weight", "normal"))
    width, height, descent = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
    ascent = height - descent
    anchor = {"start": 0.0, "middle": 0.5, "end": 1.0}[style.get("text-anchor", "start")]
    transform = el.get("transform", "")
    moved = re.match(r"translate\(([-\d.e]+) ([-\d.e]+)\)(?: rotate\(([-\d.e]+)\))?", transform)
    if moved:
        x, y = float(moved.group(1)), float(moved.group(2))
        angle = float(moved.group(3) or 0)
    else:
        x, y = float(el.get("x", 0)), float(el.get("y", 0))
        turned = re.match(r"rotate\(([-\d.e]+)", transform)
        angle = float(turned.group(1)) if turned else 0.0
    if abs(angle) < 1e-6:
        left = x - anchor * width
        return Box(left, y - ascent, left + width, y + descent, text)
    assert abs(angle + 90) < 1e-6, f"unexpected rotation {angle} of {text!r}"
    bottom = y + anchor * width  # reads upwards from (x, y)
    return Box(x - ascent, bottom - width, x + descent, bottom, text)


def _points(d: str) -> list[list[tuple[float, float]]]:
    """The polylines of an SVG path made of M/L/z commands (what matplotlib writes)."""
    runs: list[list[tuple[float, float]]] = []
    for cmd, args in re.findall(r"([MLz])\s*([-\d.e\s]*)", d):
        if cmd == "z":
            if runs and runs[-1]:
                runs[-1].append(runs[-1][0])
            continue
        nums = [float(n) for n in args.split()]
        pts = list(zip(nums[0::2], nums[1::2], strict=True))
        if cmd == "M":
            runs.append(pts)
        else:
            runs[-1].extend(pts)
    return runs


def _chart_parts(svg: str) -> tuple[Box, list[Box], list[list[tuple[float, float]]], list[Box]]:
    root = ET.fromstring(svg)
    _, _, vw, vh = (float(v) for v in root.get("viewBox", "").split())
    texts = [_text_box(t) for t in root.iter(f"{SVG}text") if (t.text or "").strip()]
    lines: list[list[tuple[float, float]]] = []
    solids: list[Box] = []
    for group in root.iter(f"{SVG}g"):
        gid = group.get("id", "")
        if gid.startswith(("line2d_", "patch_")):
            for path in group.findall(f"{SVG}path"):
                lines += _points(path.get("d", ""))
            for use in group.iter(f"{SVG}use"):
                x, y = float(use.get("x", 0)), float(use.get("y", 0))
                solids.append(Box(x - MARKER_RADIUS, y - MARKER_RADIUS, x + MARKER_RADIUS,
                                  y + MARKER_RADIUS, "marker"))
        elif gid.startswith("PolyCollection_"):
            for path in group.iter(f"{SVG}path"):
                for run in _points(path.get("d", "")):
                    xs, ys = [p[0] for p in run], [p[1] for p in run]
                    solids.append(Box(min(xs), min(ys), max(xs), max(ys), "bar"))
    return Box(0, 0, vw, vh, "chart"), texts, lines, solids


def _svgs(path: Path) -> list[tuple[str, str]]:
    ctx = build_context(size(load(path)), detail=True)  # every chart: the detailed proposal
    charts = [("memory", ctx["memory_chart"]), ("cost", ctx["cost_chart"]),
              ("what-if", ctx.get("tornado_chart"))]
    charts += [(f"throughput {wv.w.name}", wv.throughput_chart) for wv in ctx["workloads"]]
    out = []
    for name, markup in charts:
        if markup is None:
            continue
        data = re.search(r"base64,([^\"]+)", str(markup))
        assert data is not None
        out.append((name, base64.b64decode(data.group(1)).decode("utf-8")))
    return out


def collisions(svg: str) -> list[str]:
    frame, texts, lines, solids = _chart_parts(svg)
    found = []
    for t in texts:
        if t.x0 < frame.x0 or t.y0 < frame.y0 or t.x1 > frame.x1 or t.y1 > frame.y1:
            found.append(f"{t.what!r} crosses the chart's edge")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if a.overlaps(b):
                found.append(f"{a.what!r} overlaps {b.what!r}")
        for run in lines:
            if any(a.hits_segment(p, q) for p, q in itertools.pairwise(run)):
                found.append(f"{a.what!r} lies on a line or curve")
                break
        for s in solids:
            if a.overlaps(s.widened(BAR_CLEARANCE if s.what == "bar" else 0.0)):
                found.append(f"{a.what!r} overlaps or touches a {s.what}")
    return found


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_no_chart_label_collides(path: Path) -> None:
    charts = _svgs(path)
    assert charts
    problems = [f"{name}: {p}" for name, svg in charts for p in collisions(svg)]
    assert not problems, "\n".join(problems)
    # formats by their usual names, as the tables say them: the memory chart's bars read
    # "fp8 · TP2" (the catalog's ids) in the appendix of rag-knowledge-base
    words = [t.what for _name, svg in charts for t in _chart_parts(svg)[1]]
    ids = re.compile(r"\b(?:fp8|fp4|nvfp4|mxfp4|bf16|fp16|int8|int4)\b")
    assert not [w for w in words if ids.search(w)]
    assert any(re.search(r"\b(?:FP8|FP4|BF16|INT4|MXFP4)\b.* · TP\d", w) for w in words), words
    # no shipped name is cut: the memory chart read "RTX PRO 6000 Blackwell Se…" (Wide World
    # Importers); a long name is wrapped at its words instead
    assert not [w for w in words if w.endswith("…")]


def test_the_checker_sees_a_collision() -> None:
    """The checker itself: two texts at one spot, a text on a curve, a text past the edge."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 50">'
           '<g id="line2d_1"><path d="M 0 20 L 100 20"/></g>'
           '<text style="font-size: 7px; text-anchor: start" x="10" y="22">on the line</text>'
           '<text style="font-size: 7px; text-anchor: start" x="12" y="22">same spot</text>'
           '<text style="font-size: 7px; text-anchor: start" x="90" y="45">past the edge</text>'
           '</svg>')
    found = collisions(svg)
    assert any("overlaps 'same spot'" in f for f in found)
    # a label whose padding is leading spaces touches its bar: SVG drops the spaces
    touching = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 50">'
                '<g id="PolyCollection_1"><path d="M 0 10 L 40 10 L 40 20 L 0 20 z"/></g>'
                '<text style="font-size: 7px; text-anchor: start" x="40" y="17">  USD 1 k</text>'
                '</svg>')
    assert collisions(touching) == ["'USD 1 k' overlaps or touches a bar"]
    assert any("lies on a line" in f for f in found)
    assert any("'past the edge' crosses" in f for f in found)


LONG_NAMES = """\
schema_version: 1
account: {name: Wide Letters Holdings}
workloads:
  - name: "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW"
    model: llama-3.1-70b
    concurrent_users: 20000
    prompt_tokens: 1000
    output_tokens: 200
    targets: {tokens_per_s_per_user: 20}
  - name: Second workload with quite a long descriptive name for the chart
    model: llama-3.1-8b
    concurrent_users: 50
    prompt_tokens: 100
    output_tokens: 2000
    targets: {tokens_per_s_per_user: 90, ttft_s: 0.5}
costs: {gpu_prices: {h100-sxm: 9999999}}
"""


def test_long_names_and_large_figures_stay_inside_the_charts(tmp_path: Path) -> None:
    """A name of wide letters is cut to the room left of the bars; eight-digit costs fit."""
    path = tmp_path / "wide.yaml"
    path.write_text(LONG_NAMES, encoding="utf-8")
    charts = _svgs(path)
    assert len(charts) == 5  # memory, cost, what-if and a throughput chart per workload
    problems = [f"{name}: {p}" for name, svg in charts for p in collisions(svg)]
    assert not problems, "\n".join(problems)
    assert any("WWW…" in svg for _name, svg in charts)


def test_tornado_labels_sit_on_their_own_bars() -> None:
    """Each estimate's lower change labels the upper (teal) bar and its higher change the
    lower (orange) bar, with the cost the results give for that change. The example's output
    length -50 % and +50 % cost the same (USD 690 k a year, results JSON): picking the bars by
    cost once labelled both "-50 %"."""
    result = size(load(ROOT / "inputs" / "example.yaml"))
    ctx = build_context(result, detail=True)  # the tornado is the detailed proposal's
    fmt = ctx["fmt"]
    data = re.search(r"base64,([^\"]+)", str(ctx["tornado_chart"]))
    assert data is not None
    root = ET.fromstring(base64.b64decode(data.group(1)).decode("utf-8"))
    boxes = [_text_box(el) for el in root.iter(f"{SVG}text")]
    by_text = {" ".join(b.what.split()): b for b in boxes}
    groups: dict[str, list[tuple[str, float]]] = {}
    for s in result.sensitivity:
        if s.label != "Cloud price":
            groups.setdefault(s.label, []).append((s.change, s.annual_cost_onprem))
    output = groups["Output length"]
    assert [c for c, _ in output] == ["-50 %", "+50 %"] and output[0][1] == output[1][1]
    for label, changes in groups.items():
        (low, low_cost), (high, high_cost) = changes[0], changes[-1]
        low = low.replace("x", "×", 1) if low.startswith("x") else low
        high = high.replace("x", "×", 1) if high.startswith("x") else high
        row = by_text[label]
        lower = by_text[" ".join(f"{low}: {fmt.money(low_cost)}".split())]
        higher = by_text[" ".join(f"{high}: {fmt.money(high_cost)}".split())]
        # SVG y grows downwards: the lower change's label above the row's middle, the
        # higher's below it
        middle = (row.y0 + row.y1) / 2
        assert (lower.y0 + lower.y1) / 2 < middle < (higher.y0 + higher.y1) / 2, label
