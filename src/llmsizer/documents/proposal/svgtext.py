"""SVG chart text drawn one line at a time instead of one letter at a time.

WeasyPrint 70 draws an SVG ``<text>`` letter by letter: each letter is shaped by Pango as a
line of its own and drawn with its own text matrix, so that per-letter ``x``/``dx``/
``rotate`` lists and ``letter-spacing`` work. The proposal's charts use none of those, and
their ~1,800 letters per proposal were about a tenth of its WeasyPrint time
(docs/benchmarks.md). :func:`install` replaces WeasyPrint's text drawer with one that
shapes and draws a plain ``<text>`` (one ``x`` and ``y`` at most, no per-letter lists, no
``letter-spacing`` or ``textLength``) as one line, and hands every other text node to
WeasyPrint's own drawer. Kerning and ligatures are off in that line, as they are between
letters shaped one by one, so every glyph lands where WeasyPrint would have put it
(tests/test_svgtext.py compares the glyph positions and the page text of both).

The replacement is installed only on the WeasyPrint version it was written against; on any
other, WeasyPrint's drawer stays (slower, same picture).
"""

from __future__ import annotations

from collections.abc import Callable
from math import inf
from typing import Any

__all__ = ["install", "installed", "uninstall"]

_VERSION = "70.0"
# Attributes that need WeasyPrint's letter-by-letter drawer.
_PER_LETTER = ("dx", "dy", "rotate", "letter-spacing", "textLength")

_state: dict[str, Any] = {}


def installed() -> bool:
    """Whether the one-line drawer is in place (WeasyPrint's version matched)."""
    return bool(_state)


def install() -> bool:
    """Put the one-line drawer in place of WeasyPrint's SVG text drawer (once per process);
    return whether it is installed."""
    if _state:
        return True
    import importlib

    import weasyprint

    svg_module = importlib.import_module("weasyprint.svg")
    # weasyprint.svg's name ``text`` is the drawer function, which hides the submodule
    text_module = importlib.import_module("weasyprint.svg.text")
    original: Callable[..., None] | None = getattr(svg_module, "text", None)
    unpatched = original is getattr(text_module, "text", None)
    if weasyprint.__version__ != _VERSION or not unpatched or original is None:
        return False
    drawer = original

    def text(svg: Any, node: Any, font_size: float) -> None:
        if not _one_line(svg, node, font_size):
            drawer(svg, node, font_size)

    # draw_node compares TAGS' entry with the module's ``text`` to find text nodes (for
    # text-anchor): both names must point at the replacement.
    for tag, fn in list(svg_module.TAGS.items()):
        if fn is original:
            svg_module.TAGS[tag] = text
    setattr(svg_module, "text", text)  # noqa: B010 - a module mypy sees only as ModuleType
    _state.update(original=original, replacement=text)
    return True


def uninstall() -> None:
    """Put WeasyPrint's own drawer back (tests compare both)."""
    if not _state:
        return
    import importlib

    svg_module = importlib.import_module("weasyprint.svg")
    for tag, fn in list(svg_module.TAGS.items()):
        if fn is _state["replacement"]:
            svg_module.TAGS[tag] = _state["original"]
    setattr(svg_module, "text", _state["original"])  # noqa: B010
    _state.clear()


def _single(node: Any, name: str) -> str | None:
    """The attribute's value when it holds at most one length, else ``"many"``."""
    value = node.attrib.get(name)
    if value is None:
        return None
    from weasyprint.svg.utils import normalize

    parts = normalize(value).strip().split(" ")
    return parts[0] if len(parts) == 1 else "many"


def _one_line(svg: Any, node: Any, font_size: float) -> bool:
    """Draw ``node`` as one line when it is plain text; return False to let WeasyPrint's
    drawer do it."""
    if not node.text or any(a in node.attrib for a in _PER_LETTER):
        return False
    x_attr, y_attr = _single(node, "x"), _single(node, "y")
    if "many" in (x_attr, y_attr):
        return False
    from weasyprint.css.properties import INITIAL_VALUES
    from weasyprint.draw.text import draw_emojis, draw_first_line
    from weasyprint.matrix import Matrix
    from weasyprint.svg.bounding_box import extend_bounding_box
    from weasyprint.svg.text import Style, TextBox
    from weasyprint.svg.utils import size
    from weasyprint.text.line_break import split_first_line

    # The style WeasyPrint's drawer builds (svg/text.py), with kerning and ligatures off:
    # letters shaped one by one have neither.
    style = Style()
    style.update(INITIAL_VALUES)
    style.font_config = svg.font_config
    style["font_family"] = [f.strip("\"'") for f in node.get("font-family", "sans-serif")
                            .split(",")]
    style["font_style"] = node.get("font-style", "normal")
    style["font_size"] = font_size
    style["font_kerning"] = "none"
    style["font_variant_ligatures"] = "none"
    if node.get("direction") in ("ltr", "rtl"):
        style["direction"] = node.get("direction")
    weight = node.get("font-weight", 400)
    if weight == "normal":
        style["font_weight"] = 400
    elif weight == "bold":
        style["font_weight"] = 700
    else:
        try:
            style["font_weight"] = int(weight)
        except ValueError:
            style["font_weight"] = 400

    layout, _, _, width, height, baseline = split_first_line(node.text, style, svg.context,
                                                             inf, 0)
    ascent, descent = font_size * .8, font_size * .2  # as WeasyPrint's drawer assumes
    y_align = 0.0
    display_anchor = node.get("display-anchor")
    alignment = node.get("dominant-baseline", node.get("alignment-baseline"))
    if display_anchor == "middle":
        y_align = -height / 2
    elif display_anchor == "top":
        pass
    elif display_anchor == "bottom":
        y_align = -height
    elif alignment in ("central", "middle"):
        y_align = (ascent + descent) / 2 - descent
    elif alignment in ("text-before-edge", "before_edge", "top", "hanging", "text-top"):
        y_align = ascent
    elif alignment in ("text-after-edge", "after_edge", "bottom", "text-bottom"):
        y_align = -descent

    # As svg/text.py does for a text's first letter: a non-zero x or y restarts the
    # relative shift; a missing one continues from the cursor.
    x_given = size(x_attr, font_size, svg.inner_width) if x_attr else None
    y_given = size(y_attr, font_size, svg.inner_height) if y_attr else None
    if x_given:
        svg.cursor_d_position[0] = 0
    if y_given:
        svg.cursor_d_position[1] = 0
    x = svg.cursor_position[0] if x_given is None else x_given
    y = svg.cursor_position[1] if y_given is None else y_given
    svg.cursor_position = x + width, y
    x_position = x + svg.cursor_d_position[0]
    y_position = y + svg.cursor_d_position[1] + y_align
    node.text_bounding_box = extend_bounding_box(
        node.text_bounding_box,
        ((x_position, y_position - baseline), (x_position + width, y_position - baseline + height)))

    svg.stream.push_state()
    fill, stroke = svg.set_graphical_state(node, font_size)
    svg.stream.begin_text()
    layout.reactivate(style)
    svg.fill_stroke(fill, stroke, text=True)
    box = TextBox(layout, style)
    box.baseline = baseline
    emojis = draw_first_line(svg.stream, box, "none", "none",
                             Matrix(a=1, d=-1, e=x_position, f=y_position))
    svg.stream.end_text()
    svg.stream.pop_state()
    draw_emojis(svg.stream, style, x, y, emojis)
    return True
