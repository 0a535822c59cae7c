"""Three of WeasyPrint 70's hottest layout helpers, with the same results in fewer calls.

- **Computed styles.** A computed style is a dict filled lazily: each property a layout or
  drawing step reads for the first time goes through ``ComputedStyle.__missing__``
  (~38,000 times a proposal), which handles the cascade, ``var()``, math functions,
  logical properties and the few properties that depend on others. Most look-ups are of a
  property the proposal's CSS does not set on that element (nor, for a physical property
  such as ``margin_left``, its logical counterpart): its computed value is then the
  initial value, or the parent's for an inherited property. :func:`_missing` answers those
  two cases directly and leaves every other one to WeasyPrint.
- **Used lengths.** Every box laid out resolves eleven margins, paddings, widths and
  heights (~50,000 a proposal) through two generic functions per property
  (``resolve_one_percentage``, ``percentage``). :func:`resolve_percentages` resolves a
  computed length (``Dimension``) inline and hands anything else (``auto``, ``calc()``) to
  WeasyPrint's ``percentage``.
- **Normal flow.** ``Box.is_in_normal_flow`` asks five methods in turn, two style look-ups
  in all: :func:`_in_normal_flow` makes the same two look-ups once.

Together ~35-40 ms of the example's ~430 ms layout (docs/benchmarks.md, sixth round); every
shipped proposal's PDF is byte for byte the same (tests/test_proposal_writer.py). Installed
only on the WeasyPrint version they were written against; on any other, WeasyPrint's own
stay (slower, same pages).
"""

from __future__ import annotations

import importlib
from math import inf
from typing import Any

import weasyprint
from weasyprint.css import ComputedStyle
from weasyprint.css.computed_values import PHYSICAL_FUNCTIONS
from weasyprint.css.functions import check_math
from weasyprint.css.properties import INHERITED, INITIAL_NOT_COMPUTED, INITIAL_VALUES, Dimension
from weasyprint.formatting_structure import boxes
from weasyprint.layout import percent

_VERSION = "70.0"

_MISSING = ComputedStyle.__missing__
# Properties whose computed value is never more than the initial or inherited value when
# the element's cascade does not name them (nor, for a physical property such as
# margin_left, its logical counterparts for either direction): no propagation (text
# decorations), no ancestor look-up (page), no dependence on other properties.
_PLAIN = frozenset(
    key for key in INITIAL_VALUES
    if key not in INITIAL_NOT_COMPUTED and not key.startswith(("text_decoration_", "__"))
    and key not in ("page", "position", "float", "display"))
_INITIAL = {key: INITIAL_VALUES[key] for key in _PLAIN
            if key not in INHERITED and not check_math(INITIAL_VALUES[key])}
_INHERITED = frozenset(key for key in _PLAIN if key in INHERITED)
_LOGICAL = {key: frozenset(function(block="ttb", inline=inline) for inline in ("ltr", "rtl"))
            for key, function in PHYSICAL_FUNCTIONS.items()}


def _missing(self: Any, key: str) -> Any:
    cascaded = self.cascaded
    logical = _LOGICAL.get(key)
    if key not in cascaded and (logical is None or cascaded.keys().isdisjoint(logical)):
        if key in _INITIAL:
            value = self[key] = _INITIAL[key]
            return value
        if key in _INHERITED and self.parent_style is not None:
            value = self.parent_style[key]
            if not check_math(value):
                self[key] = value
                return value
    return _MISSING(self, key)


_percentage = percent.percentage
_adjust_box_sizing = percent.adjust_box_sizing
_SIDES = ("top", "right", "bottom", "left")
_BORDERS = tuple(f"border_{side}_width" for side in _SIDES)
# The modules that imported WeasyPrint's function by name.
_USERS = ("percent", "page", "float", "absolute", "block", "column", "grid", "table",
          "inline")


def _used(style: Any, name: str, refer_to: Any) -> Any:
    value = style[name]
    if type(value) is Dimension and value.unit is not None:
        return refer_to * value.value / 100 if value.unit == "%" else value.value
    return _percentage(value, style, refer_to)


def resolve_percentages(box: Any, containing_block: Any) -> None:
    """Set used values as attributes of the box (``weasyprint.layout.percent``'s)."""
    if isinstance(containing_block, boxes.Box):
        cb_width = containing_block.width
        cb_height = containing_block.height
    else:
        cb_width, cb_height = containing_block
    maybe_height = cb_height if isinstance(box, boxes.PageBox) else cb_width
    style = box.style
    box.margin_left = _used(style, "margin_left", cb_width)
    box.margin_right = _used(style, "margin_right", cb_width)
    box.margin_top = _used(style, "margin_top", maybe_height)
    box.margin_bottom = _used(style, "margin_bottom", maybe_height)
    box.padding_left = _used(style, "padding_left", cb_width)
    box.padding_right = _used(style, "padding_right", cb_width)
    box.padding_top = _used(style, "padding_top", maybe_height)
    box.padding_bottom = _used(style, "padding_bottom", maybe_height)
    box.width = _used(style, "width", cb_width)
    min_width = _used(style, "min_width", cb_width)
    box.min_width = 0 if min_width == "auto" else min_width
    box.max_width = _used(style, "max_width", cb_width)
    if cb_height == "auto":
        # The containing block's height depends on its content.
        height = style["height"]
        if height == "auto" or check_math(height) or height.unit == "%":
            box.height = "auto"
        else:
            assert height.unit.lower() == "px"
            box.height = height.value
        min_height = _used(style, "min_height", 0)
        box.max_height = _used(style, "max_height", inf)
    else:
        box.height = _used(style, "height", cb_height)
        min_height = _used(style, "min_height", cb_height)
        box.max_height = _used(style, "max_height", cb_height)
    box.min_height = 0 if min_height == "auto" else min_height
    # Used value == computed value, except borders resolved by border-collapse.
    collapse = style["border_collapse"] == "collapse"
    for prop in _BORDERS:
        if not (collapse and hasattr(box, prop)):
            setattr(box, prop, style[prop])
    _adjust_box_sizing(box, "width")
    _adjust_box_sizing(box, "height")


_RESOLVE = percent.resolve_percentages
_IN_NORMAL_FLOW = boxes.Box.is_in_normal_flow
# Box.is_floated, is_footnote, is_absolutely_positioned, is_running and is_note, which
# WeasyPrint's is_in_normal_flow calls one by one (~15,000 times a proposal).
_OUT_OF_FLOW_FLOATS = ("left", "right", "inline-start", "inline-end", "footnote")


def _in_normal_flow(self: Any) -> bool:
    style = self.style
    position = style["position"]
    return not (style["float"] in _OUT_OF_FLOW_FLOATS or position in ("absolute", "fixed")
                or position[0] in ("running()", "note()"))


def install(on: bool = True) -> bool:
    """Put all three in place (``on=False``: WeasyPrint's own back); return whether they are in
    place. Same results either way, so a process may switch at any time between renders."""
    on = on and weasyprint.__version__ == _VERSION
    ComputedStyle.__missing__ = _missing if on else _MISSING
    boxes.Box.is_in_normal_flow = _in_normal_flow if on else _IN_NORMAL_FLOW
    function = resolve_percentages if on else _RESOLVE
    for name in _USERS:
        module = importlib.import_module(f"weasyprint.layout.{name}")
        if hasattr(module, "resolve_percentages"):
            vars(module)["resolve_percentages"] = function
    return on
