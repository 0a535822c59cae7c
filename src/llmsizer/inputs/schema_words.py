"""The requirements schema in words: what a field allows ('a number more than 0 and at most
600', from the JSON schema of :mod:`.schema`), what pydantic refused said in the house style
('must be at most 120', not 'Input should be less than or equal to 120') and a value shown as
the file has it (`true`, 'a list of 2 entries', not Python's `True` or `[{'name': ...}]`).
The messages that use them are :mod:`.schema_messages`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from ..base.textsafe import printable
from .schema import Requirements


def _num(x: float) -> str:
    """A bound or a suggested value as a person writes it: 10,000,000 / 0.99 / 1e-05."""
    if isinstance(x, int) or (math.isfinite(x) and x == int(x) and abs(x) < 1e15):
        return f"{int(x):,}"
    return f"{x:g}"


def _plain(x: float) -> str:
    """A number as it should be typed into the YAML file (no thousands separators)."""
    if isinstance(x, int) and not isinstance(x, bool):  # exact, and never overflows a float
        text = str(x)
        return text if len(text) <= 20 else f"{text[:12]}… ({len(text)} digits)"
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


@cache
def _schema() -> dict[str, Any]:
    return Requirements.model_json_schema()


def _schema_at(loc: tuple[str | int, ...]) -> dict[str, Any] | None:
    """The JSON-schema node of the field at ``loc`` (refs resolved, ``| None`` removed)."""
    root = _schema()
    defs: dict[str, Any] = root.get("$defs", {})

    def settle(node: dict[str, Any]) -> dict[str, Any]:
        for _ in range(10):
            if "$ref" in node:
                node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            elif "anyOf" in node:
                options = [o for o in node["anyOf"] if o.get("type") != "null"]
                node = options[0] if options else {}
            else:
                break
        return node

    node: dict[str, Any] | None = root
    for part in loc:
        if node is None:
            return None
        node = settle(node)
        if isinstance(part, int):
            node = node.get("items")
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return settle(node) if node is not None else None


def _allowed(schema: dict[str, Any] | None) -> str:
    """What a field accepts, in words: 'a number more than 0 and at most 600'."""
    if not schema:
        return ""
    if "const" in schema:
        return str(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(str(e) for e in schema["enum"])
    kind = schema.get("type")
    if kind in ("integer", "number"):
        what = "a whole number" if kind == "integer" else "a number"
        lo, hi = schema.get("minimum"), schema.get("maximum")
        xlo = schema.get("exclusiveMinimum")
        if hi is None and schema.get("usd_maximum") is not None:  # a money bound (rules.py)
            most = (f"{_num(schema['usd_maximum'])} USD, or its worth in the account's "
                    "currency")
            return (f"{what} from {_num(lo)} to {most}" if lo is not None
                    else f"{what} more than {_num(xlo or 0)} and at most {most}")
        if lo is not None and hi is not None:
            return f"{what} from {_num(lo)} to {_num(hi)}"
        if xlo is not None and hi is not None:
            return f"{what} more than {_num(xlo)} and at most {_num(hi)}"
        if lo is not None:
            return f"{what} of at least {_num(lo)}"
        return what
    if kind == "string":
        if schema.get("pattern") == "^[A-Z]{3}$":
            return "a three-letter currency code in capitals, such as USD, EUR or GBP"
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if hi is not None and lo:
            return f"one line of text, {lo} to {_num(hi)} characters"
        if hi is not None:
            return f"text of at most {_num(hi)} characters"
        return "text"
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        items = _allowed(schema.get("items"))
        size = ""
        if schema.get("maxItems") is not None:
            size = f" of {schema.get('minItems', 0)} to {schema['maxItems']} items"
        elif schema.get("minItems"):
            size = f" of at least {schema['minItems']} item" + ("s" if schema["minItems"] > 1 else "")
        return f"a list{size}" + (f", each {items}" if items else "")
    if kind == "object":
        return "a mapping of `key: value` lines indented under this key"
    return ""


# pydantic's error kinds in the house words; a bound from the error's context is written as
# a person writes it (_num: 2,000,000)
_SAID = {
    "greater_than": "must be more than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "string_type": "must be text",
    "string_too_long": "must be at most {max_length} characters long",
    "string_too_short": "must be at least {min_length} characters long",
    "too_long": "must hold at most {max_length} items",
    "too_short": "must hold at least {min_length} items",
    "literal_error": "must be {expected}",
    "finite_number": "must be a finite number",
}


def said(err: dict[str, Any]) -> str:
    """What pydantic refused, in the house words: 'must be at most 120'."""
    kind, ctx = str(err.get("type", "")), dict(err.get("ctx") or {})
    words = {k: _num(v) if isinstance(v, int | float) and not isinstance(v, bool) else str(v)
             for k, v in ctx.items()}
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind in ("too_short", "too_long") and 1 in (ctx.get("min_length"), ctx.get("max_length")):
        return _SAID[kind].format(**words).removesuffix("s")  # 1 item, not 1 items
    template = _SAID.get(kind)
    if template is not None:
        try:
            return template.format(**words)
        except KeyError:  # a context without the bound: the library's own words, reworded
            pass
    msg = str(err.get("msg", "is not allowed"))
    for lead in ("Input should", "String should", "List should", "Value should"):
        if msg.startswith(lead):
            return "must" + msg[len(lead):]
    return msg


def shown(found: Any) -> str:
    """A value as the file writes it, bounded: true (not True), null, 'a list of 2 entries'."""
    if isinstance(found, str):
        text = repr(found)
        return text if len(text) <= 60 else text[:56] + "...'"
    if isinstance(found, bool):
        return "true" if found else "false"
    if found is None:
        return "null"
    if isinstance(found, list):
        n = len(found)
        return "an empty list" if not n else f"a list of {n:,} entr{'y' if n == 1 else 'ies'}"
    if isinstance(found, dict):
        n = len(found)
        return "an empty mapping" if not n else f"a mapping of {n:,} key{'' if n == 1 else 's'}"
    text = printable(repr(found))
    return text if len(text) <= 60 else text[:57] + "..."


def _bare(text: str) -> str:
    return re.sub(r"[-_ .]", "", text.casefold())


def guesses(value: str, close: Iterable[str], names: dict[str, str]) -> list[str]:
    """The catalog ids an unknown id's message guesses, the CLI's and the web app's alike
    (review round 24: for `h100-sxn` the CLI guessed one GPU, the web three): the closest id
    (``close``, closest first, from :func:`.catalog.close_matches`) alone; the ids that
    share the beginning written where several do (`h100`: h100-sxm, h100-nvl, h100-pcie);
    with no id close, the id whose name is closest (`nvidia t4`: l4). ``names``: id -> name."""
    from ..model.catalog import close_matches

    close = list(close)
    if not close:
        by_name = {n: cid for cid, n in sorted(names.items(), reverse=True)}
        close = [by_name[n] for n in close_matches(value, sorted(by_name, key=str.casefold))]
    begun = [c for c in close if _bare(c).startswith(_bare(value))]
    return begun if len(begun) > 1 else close[:1]


def did_you_mean(said: list[str]) -> str:
    """The one wording of an unknown id's guesses, each ``said`` as its reader knows it (the
    CLI's id with its name, the web form's name): ': did you mean A, B or C?', '.' without
    one. The sentence that follows (the catalog's list, what to do in the form) starts anew."""
    if not said:
        return "."
    either = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " or " + said[-1]
    return f": did you mean {either}?"
