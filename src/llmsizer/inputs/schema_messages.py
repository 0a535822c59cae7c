"""What the requirements schema refuses, told as one :class:`InputError` a person can act on.

A pydantic error becomes a message with the YAML line and column, what the field allows (in
words, from the JSON schema of :mod:`.schema`) and a concrete fix where the value shows one:
'did you mean' for a misspelt key, ``ttft_s: 2`` for ``'2s'``, quotes for an id read as a number.
"""

from __future__ import annotations

import difflib
import math
import re
from functools import cache
from typing import Any

from pydantic import BaseModel

from ..base.errors import InputError
from ..base.textsafe import printable
from ..model.catalog import load_catalog, suggest
from .kinds import other_kinds_keys
from .schema import Requirements
from .schema_numbers import _leading_zero_fix, _number_fix, _time_unit_hint, _unit_key_fix
from .schema_words import _allowed, _plain, _schema_at, said
from .schema_words import shown as _shown
from .yamlpositions import Located


def _model_at(loc: tuple[str | int, ...], start: Any = Requirements) -> type[BaseModel] | None:
    """The pydantic model class that owns the field at ``loc`` (for 'did you mean')."""
    cls: Any = start
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = cls.model_fields.get(part)
        if field is None:
            return None
        ann = field.annotation
        nxt = None
        for cand in (ann, *getattr(ann, "__args__", ())):
            for inner in (cand, *getattr(cand, "__args__", ())):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    nxt = inner
        if nxt is None:
            return None
        cls = nxt
    return cls if isinstance(cls, type) else None


@cache
def _homes() -> dict[str, str]:
    """Where each key of the file belongs, for a key written in the wrong block (`targets:`
    at the top level, `headroom:` under hardware); a key of two blocks (`name`) is left out."""
    found: dict[str, list[str]] = {}

    def walk(cls: Any, where: str) -> None:
        for key in cls.model_fields:
            found.setdefault(key, []).append(where)
            inner = _model_at((key, "?"), cls)
            if inner is not None:
                walk(inner, "in each workload (an item under `workloads:`)" if key == "workloads"
                     else f"under `{key}:`" + (" in a workload" if where != "at the top level"
                                              else ""))
    walk(Requirements, "at the top level")
    return {key: homes[0] for key, homes in found.items() if len(homes) == 1}


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            # a key may hold a line break or ESC: escaped, the message stays one line
            text = printable(str(part))
            text = text if len(text) <= 40 else text[:37] + "..."
            out += f".{text}" if out else text
    return out


_ABSENT = object()


def _value_at(data: Any, loc: tuple[str | int, ...]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return _ABSENT
    return data


def _short(text: str, limit: int = 60) -> str:
    """``repr`` of untrusted text, bounded (a 1 MB key must not make a 1 MB message)."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


_MISSING_EXAMPLES = {
    "schema_version": "`schema_version: 1` as the first line",
    "account": "`account: {name: Acme Corp}`",
    "workloads": "`workloads:` followed by one `- name: ...` item per workload (see inputs/example.yaml)",
    "model": "`model: llama-3.1-70b` (`llmsizer catalog models` lists the ids; a path to a "
             "config.json works too)",
    "concurrent_users": "`concurrent_users: 200`",
    "prompt_tokens": "`prompt_tokens: 500`",
    "output_tokens": "`output_tokens: 300`",
    "targets": "`targets: {tokens_per_s_per_user: 30}`",
    "gpu": "`gpu: h100-sxm`",
    "gpus_per_replica": "`gpus_per_replica: 8`",
    "tokens_per_s_per_replica": "`tokens_per_s_per_replica: 2500`",
}

def _quoted(key: str, raw: str) -> str:
    return f'{key}: "{raw}"'


def _type_hint(kind: str, loc: tuple[str | int, ...], found: Any, located: Located,
               schema: dict[str, Any] | None) -> str:
    """How to fix a value of the wrong type, as concretely as the value allows."""
    key = next((str(p) for p in reversed(loc) if isinstance(p, str)), "value")
    numeric = (schema or {}).get("type") in ("integer", "number")
    if numeric and isinstance(found, str):
        fix = _leading_zero_fix(key, found.strip())
        if fix:
            return f"write `{fix}` (with a leading zero the value is read as text)"
        if re.fullmatch(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", found.strip()):
            return f"write the number without quotes: `{key}: {found.strip()}`"
        fix = _number_fix(key, found)
        if fix:
            unit = " (seconds: the unit is in the key name)" if key.endswith("_s") else ""
            return f"write a plain number without units: `{fix}`{unit}"
        return ("write a plain number without units or quotes, e.g. "
                f"`{key}: {'300' if schema and schema.get('type') == 'integer' else '2'}`")
    if numeric and isinstance(found, bool):
        return f"write a number, e.g. `{key}: 2`, not true/false"
    if numeric and isinstance(found, float) and (schema or {}).get("type") == "integer":
        lo, hi = (schema or {}).get("minimum", 0), (schema or {}).get("maximum", 1e15)
        if not math.isfinite(found) or not lo <= found <= hi:
            return "write a whole number, e.g. 300"
        return f"write a whole number, e.g. `{key}: {max(round(found), int(lo))}`"
    if kind == "string_type" and isinstance(found, bool | int | float):
        raw = located.source_text(loc) or str(found).lower()
        if _inline(raw) and isinstance(loc[-1], int):
            return f'put it in quotes so it is read as text: "{raw}"'
        if _inline(raw):
            return f"put it in quotes so it is read as text: `{_quoted(key, raw)}`"
        return "put the text in quotes"
    if kind == "bool_type" and isinstance(found, str) and found.strip() in ("true", "false"):
        return f"write it without quotes: `{key}: {found.strip()}`"
    if kind == "bool_type" and isinstance(found, str):
        return (f"write `{key}: true` or `{key}: false` (yes/no/on/off are read as text, "
                "not as a boolean)")
    if kind == "list_type" and isinstance(found, str) and loc[-1:] in _ID_LISTS:
        items = [x.strip() for x in found.split(",") if x.strip()] or [found]
        if not all(_inline(x) for x in items) or len(items) > 10:
            return "write a list: [a, b] or one `- item` per line"
        extra = ""
        if loc[-1:] == ("gpus",):
            gpus = load_catalog().gpus
            unknown = [x for x in items if x not in gpus]
            if unknown:
                close = suggest(unknown[0], sorted(gpus))
                fixed = [x if x in gpus else (_best(x, sorted(gpus)) or x) for x in items]
                extra = f"; {_short(unknown[0], 40)} is not a catalog GPU id{close}"
                items = fixed
        return f"write a list, e.g. `{key}: [{', '.join(items)}]`{extra}"
    if kind == "list_type" and loc[-1:] == ("tensor_parallel",) and isinstance(found, int) \
            and not isinstance(found, bool):  # `tensor_parallel: 3`: a list of degrees
        degrees = (_schema_at((*loc, 0)) or {}).get("enum", [])
        if found in degrees:
            return f"write a list, e.g. `{key}: [{found}]`"
        near = [int(c) for c in re.findall(r"\d+", _nearest(found, degrees))]
        return (f"write a list of the degrees to try, e.g. `{key}: [{', '.join(map(str, near))}]`"
                if near else "write a list, e.g. `tensor_parallel: [8]`") + \
            f" ({found} is not a degree: allowed are {', '.join(map(str, degrees))})"
    if kind == "list_type" and loc == ("workloads",) and not isinstance(found, dict):
        return ("write `workloads:` followed by one `- name: ...` item per workload, "
                "as in inputs/example.yaml")
    if kind == "list_type" and isinstance(found, dict):
        return "write a list: start each item with `- ` (e.g. `- name: ...`), as in inputs/example.yaml"
    if kind == "model_type" and isinstance(loc[-1], int):  # an item of `workloads:`
        name = found if isinstance(found, str) and _inline(found) else "Internal assistant"
        return (f"each item is a workload: write `- name: {name}` and its other keys "
                "(model:, targets:, ...) on the lines below, lined up under name:")
    if kind in ("model_type", "dict_type") and isinstance(found, list) and found \
            and all(isinstance(x, dict) for x in found):  # `- key: value` lines under it
        return f"the lines under `{key}:` start with `- ` (a list): delete the dashes"
    if kind in ("model_type", "dict_type"):
        example = _MISSING_EXAMPLES.get(key, "")
        return (f"write `{key}:` followed by `key: value` lines indented under it"
                + (f", or e.g. {example}" if example.startswith(f"`{key}: {{") else ""))
    hint = _HINTS.get(kind)
    return hint or ""


# Keys people write for a field under another word, that no spelling distance finds
# (`power_price` is closest to `node_prices`, a mapping of node prices).
_SYNONYMS = {w: "electricity_per_kwh" for w in (
    "power_price", "power_cost", "power_per_kwh", "electricity_price", "electricity_cost",
    "electricity", "energy_price", "energy_cost", "price_per_kwh", "kwh_price", "cost_per_kwh")}
# TPOT (time per output token) is what the targets call the inter-token latency (ITL)
_SYNONYMS.update({"tpot_ms": "itl_p50_ms", "tpot_s": "itl_p50_ms", "tpot": "itl_p50_ms",
                  **{f"tpot_p{p}_ms": f"itl_p{p}_ms" for p in (50, 90, 95, 99)}})


def _takes(loc: tuple[str | int, ...]) -> str:
    """The shape the field at ``loc`` holds, in words ("" when the schema does not say)."""
    node = _schema_at(loc) or {}
    kind = node.get("type")
    if kind == "object":
        return "a mapping"
    if kind == "array":
        return "a list"
    return "a single value" if kind in ("number", "integer", "string", "boolean") else ""


_ID_LISTS = frozenset({("gpus",), ("weight_precisions",), ("kv_precisions",), ("tensor_parallel",)})


def _inline(text: str) -> bool:
    """True when untrusted text is short and plain enough to quote inside a suggestion."""
    return 0 < len(text) <= 40 and text.isprintable() and "`" not in text


def _timed(allowed: str, key: str) -> str:
    """A time's range with its unit, which the key's name holds: "a number of seconds from
    0.01 to 120" for ``ttft_s`` (session 23: "a number from 0.01 to 120" said no unit)."""
    for suffix, unit in (("_ms", "milliseconds"), ("_s", "seconds"), ("_hours", "hours")):
        # a rate's "_per_s" (requests_per_s) is no time
        if (key.endswith(suffix) and not key.endswith("_per" + suffix)
                and allowed.startswith("a number ")):
            return f"a number of {unit} " + allowed.removeprefix("a number ")
    return allowed


def _best(word: str, names: list[str]) -> str | None:
    close = difflib.get_close_matches(word.lower(), [n.lower() for n in names], n=1, cutoff=0.5)
    if not close:
        return None
    return next(n for n in names if n.lower() == close[0])


def best_key(key: str, names: list[str], data: Any, loc: tuple[str | int, ...]) -> str | None:
    """The one key a misspelt ``key`` at ``loc`` is taken for: a word for the same thing
    (_SYNONYMS), else the closest spelling among ``names``, never a key its block already
    has (review round 24: `tpot_sms:` under a `ttft_s: 2` said "(did you mean ttft_s?);
    write it as `ttft_s: 3`", a second `ttft_s`, which the loader refuses)."""
    best = _SYNONYMS.get(key.lower())  # a word for the same thing, even where written
    return best if best in names else _best(key, _unwritten(names, data, loc))


def _unwritten(names: list[str], data: Any, loc: tuple[str | int, ...]) -> list[str]:
    """The ``names`` the block holding ``loc`` has not written yet: those a fix may name."""
    owner = _value_at(data, loc[:-1])
    return [n for n in names if not (isinstance(owner, dict) and n in owner)]


def _nearest(found: float, choices: list[Any]) -> str:
    """'; did you mean 2 or 4?' for `tensor_parallel: 3`: the allowed numbers either side of
    it ('' when none are numbers or it is beyond them all by more than the largest)."""
    numbers = sorted(c for c in choices if isinstance(c, int | float) and not isinstance(c, bool))
    if not numbers or not math.isfinite(found) or not 0 <= found <= 2 * numbers[-1]:
        return ""
    below = [c for c in numbers if c < found][-1:]
    above = [c for c in numbers if c > found][:1]
    return "; did you mean " + " or ".join(str(c) for c in below + above) + "?"


_HINTS = {
    "list_type": "write a list, e.g. [h100-sxm] or one '- item' per line",
    "float_parsing": "write a plain number without units, e.g. 2 or 0.5",
    "int_parsing": "write a whole number without units, e.g. 300",
    "float_type": "write a plain number without units, e.g. 2 or 0.5",
    "int_type": "write a whole number without units, e.g. 300",
    "int_from_float": "write a whole number, e.g. 300",
    "string_type": "put the text in quotes",
    "bool_type": "write true or false",
    "finite_number": "use a finite number",
    "dict_type": "write a mapping of 'key: value' lines indented under this key",
    "model_type": "write a mapping of 'key: value' lines indented under this key",
}

_RANGE_KINDS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})
_LENGTH_KINDS = frozenset({"string_too_short", "string_too_long", "too_short", "too_long"})


def _clean_loc(loc: tuple[str | int, ...], data: Any) -> tuple[str | int, ...]:
    """The error's path without pydantic's union/validator branch markers (such as
    ``function-after[...]``), which it inserts between field names. A part that exists in the
    data is a field, whatever it looks like (a user's key may well contain ``[``)."""
    out: list[str | int] = []
    cur: Any = data
    for part in loc:
        in_dict = isinstance(cur, dict) and part in cur
        in_list = (isinstance(cur, list) and isinstance(part, int) and not isinstance(part, bool)
                   and -len(cur) <= part < len(cur))
        if in_dict or in_list:
            cur = cur[part]
        elif isinstance(part, str) and ("[" in part or part.startswith("function")):
            continue
        else:
            cur = None
        out.append(part)
    return tuple(out)


def _keys_of(data: Any, loc: tuple[str | int, ...], dotted: str
             ) -> tuple[str | int, ...] | None:
    """The keys a dotted path names below ``loc``, each the longest key of the file that
    the rest of the path starts with (a key may hold dots); None if the file lacks one."""
    node = _value_at(data, loc)
    keys: list[str | int] = list(loc)
    rest = dotted
    while rest:
        if not isinstance(node, dict):
            return None
        key = max((k for k in node if isinstance(k, str)
                   and (rest == k or rest.startswith(k + "."))), key=len, default=None)
        if key is None:
            return None
        keys.append(key)
        node, rest = node[key], rest[len(key) + 1:]
    return tuple(keys)


def _format(err: dict[str, Any], data: Any, located: Located, filename: str) -> InputError:
    loc = _clean_loc(tuple(err["loc"]), data)
    kind = err["type"]
    pos = located.position(loc)
    line, col = pos if pos else (None, None)
    field = _dotted(loc) or None
    schema = _schema_at(loc)
    allowed = _allowed(schema)
    found = _value_at(data, loc)
    shown = "nothing" if found is _ABSENT else _shown(found)
    if kind == "extra_forbidden":
        owner = _model_at(loc)
        names = sorted(owner.model_fields) if owner else []
        key = str(loc[-1]) if loc else "?"
        best = best_key(key, names, data, loc)
        # one guess, the key the fix writes (session 23: "(did you mean prompt_tokens or
        # output_tokens or corpus_tokens?); write it as `prompt_tokens: 500`")
        msg = (f"unknown key {_short(key)} (did you mean {best}?)" if best is not None
               else f"unknown key {_short(key)}{suggest(key, _unwritten(names, data, loc))}")
        takes = _takes((*loc[:-1], best)) if best is not None else ""
        if best is not None and best not in _unwritten([best], data, loc):
            # `power_price: 0.15` beside `electricity_per_kwh: 0.12`: the fix is no second key
            msg += f"; this block already has `{best}:`: keep one of the two"
            best, takes = None, ""
        gives = ("a mapping" if isinstance(found, dict) else "a list"
                 if isinstance(found, list) else "a single value")
        if best is not None and found is not _ABSENT and takes and takes != gives:
            # `node_prices: 0.15` is no fix: the key it names holds another shape
            under = " (`key: value` lines indented under it)" if takes == "a mapping" else ""
            msg += f"; `{best}:` takes {takes}{under}, not {gives}"
        elif best is not None and not isinstance(found, dict | list):
            value = found if found is not _ABSENT else None
            fix = _number_fix(best, value) if isinstance(value, str) else None
            if fix is None and value is not None:
                fix = _unit_key_fix(key, best, value)
            if fix is None and value is not None:
                text = located.source_text(loc) or str(value)
                fix = f"{best}: {text}" if _inline(text) else None
            msg += f"; write it as `{fix}`" if fix else f"; rename it to `{best}:`"
        elif best is not None:
            msg += f"; rename it to `{best}:`"
        elif (home := _homes().get(key)) is not None:
            msg += f"; `{key}:` belongs {home}: move it there, lined up with that block's keys"
        owner_data = _value_at(data, loc[:-1]) if loc[:1] == ("workloads",) else None
        if len(loc) == 3 and isinstance(owner_data, dict):  # a workload: the keys of its kind
            others = other_kinds_keys(owner_data.get("kind", "generate"))
            names = [n for n in names if n not in others]
        msg += f"; allowed here: {', '.join(names)}"
        field = _dotted(loc[:-1]) or None
    elif kind == "missing":
        name = str(loc[-1]) if loc else "?"
        msg = f"required key {name!r} is missing"
        example = _MISSING_EXAMPLES.get(name)
        if name == "name":
            example = "`name: Acme Corp`" if loc[:1] == ("account",) else "`name: Internal assistant`"
        if example:
            msg += f"; add it, e.g. {example}"
        field = _dotted(loc[:-1]) or None
    elif kind == "value_error":
        msg = str(err["msg"]).removeprefix("Value error, ")
        # a cross-field rule names the field it is about first: point at that line
        # (a catalog id in it may hold hyphens: costs.gpu_prices.h100-sxm)
        # (a model id may hold dots too: costs.api_output_per_million.llama-3.1-8b)
        named = re.match(r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_][a-z0-9_.-]*)?(?=[:\s]|$)", msg)
        if named is not None:
            sub = _keys_of(data, loc, named.group())
            if sub is not None and (pos := located.position(sub)):
                line, col = pos
        twins = re.search(r" \((workloads\[\d+\](?:, workloads\[\d+\])* and "
                          r"workloads\[\d+\])\)", msg)
        if loc == () and re.match(r"\w+ workloads are named", msg) and twins:
            # point at the second one's name, and say the line of each (rules.duplicate_name)
            indexes = [int(i) for i in re.findall(r"\d+", twins.group(1))]
            where = [located.position(("workloads", i, "name")) for i in indexes]
            field = f"workloads[{indexes[1]}].name"
            lines = [str(pos[0]) for pos in where if pos]
            if len(lines) == len(indexes) and where[1]:
                line, col = where[1]
                msg = msg.replace(twins.group(), f" (lines {', '.join(lines[:-1])} and "
                                                 f"{lines[-1]})")
    elif found is None and kind not in _RANGE_KINDS:
        msg = "has no value (nothing after the colon)"
        if allowed:
            msg += f"; write {allowed}"
        msg += ", or delete the line if the key is optional"
    elif isinstance(found, float) and not math.isfinite(found):
        msg = f"must be a finite number (found {shown})"
        if allowed:
            msg += f"; allowed: {allowed}"
    elif kind in _RANGE_KINDS:
        msg = f"{said(err)} (found {shown})"
        if allowed:
            msg += f"; allowed: {_timed(allowed, str(loc[-1]) if loc else '')}"
        # a percentage typed into a fraction (headroom: 25): also where the maximum is above 1
        maximum = (schema or {}).get("maximum")
        fraction = maximum is not None and (maximum <= 1 or (schema or {}).get("unit") == "fraction")
        if (isinstance(found, int | float) and maximum is not None and fraction
                and max(1, maximum) < found <= 100):
            msg += f"; this is a fraction: write {_plain(found / 100)} for {_plain(found)} %"
        elif isinstance(found, int | float) and not isinstance(found, bool):
            msg += _time_unit_hint(str(loc[-1]), found, schema or {})
    elif kind in _LENGTH_KINDS and isinstance(found, list):
        msg = f"holds {len(found) or 'no'} item{'' if len(found) == 1 else 's'}"
        if allowed:
            msg += f"; allowed: {allowed}"
        if not found and str(loc[-1]) in _MISSING_EXAMPLES:
            msg += f"; write {_MISSING_EXAMPLES[str(loc[-1])]}"
    elif kind in _LENGTH_KINDS:
        size = f", {len(found):,} characters" if isinstance(found, str) else (
            f", {len(found):,} items" if isinstance(found, list | dict) else "")
        msg = f"{said(err)} (found {shown}{size})"
        if allowed:
            msg += f"; allowed: {allowed}"
    elif kind == "literal_error":
        choices = [str(e) for e in (schema or {}).get("enum", [])]
        msg = f"{said(err)} (found {shown})"
        if isinstance(found, str) and choices:
            msg += suggest(found, choices)
        elif isinstance(found, int | float) and not isinstance(found, bool):
            msg += _nearest(found, (schema or {}).get("enum", []))
    elif kind == "string_pattern_mismatch":
        msg = f"must be {allowed or 'text in the documented format'} (found {shown})"
        if isinstance(found, str) and re.fullmatch(r"[A-Za-z]{3}", found.strip()):
            msg += f"; write `{loc[-1]}: {found.strip().upper()}`"
    elif kind == "tiny_number":  # a subnormal: in range, but no spreadsheet holds it
        ctx = err.get("ctx") or {}
        loc = (*loc, *ctx.get("below", ()))  # a price in a mapping: its own key and line
        pos = located.position(loc) or pos
        line, col = pos if pos else (None, None)
        field = _dotted(loc) or None
        schema = _schema_at(loc) or {}
        allowed = _allowed(schema)
        fix = "write 0 for none" if schema.get("minimum") == 0 else "write the value meant"
        msg = (f"{float(ctx.get('found', 0.0))!r} is nearer zero than a spreadsheet holds "
               f"(2.2e-308 at the least): {fix}")
        if allowed:
            msg += f"; allowed: {allowed}"
    elif kind in ("single_line", "unsafe_text"):
        msg = f"{err['msg']} (found {shown})"
    else:
        problem = said(err)
        if kind in ("model_type", "dict_type"):
            problem = "must be a mapping of `key: value` lines"
        elif kind == "string_unicode":  # a "\ud800" escape: half a character, unprintable
            problem = ("holds a surrogate escape such as \\ud83d (half of a character; YAML "
                       "does not join two of them into one): write the character itself, or "
                       "one escape of 8 hex digits such as \\U0001F680")
        msg = f"{problem} (found {shown})"
        hint = _type_hint(kind, loc, found, located, schema)
        if hint:
            msg += f"; {hint}"
        if allowed and (schema or {}).get("type") in ("integer", "number"):
            msg += f" (allowed: {allowed})"
    # keys echoed in a fix (`\n: 2`) are the file's text: one line, no escapes, whatever it holds
    return InputError(printable(msg), file=filename, line=line, column=col, field=field)
