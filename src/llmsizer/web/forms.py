"""The account form and the requirements, both ways: form fields named by the field paths
the loader's messages use (``workloads[1].targets.ttft_s``), so an error lands beside its
field; form → requirements data → YAML text (what the loader reads, what the user
downloads); requirements data → form values. No number is computed here.

A field left empty is left out of the YAML, so the schema's default applies, exactly as
in a hand-written file. A workload's load is stated one of the schema's three ways
(``LOAD_FORMS``): the form shows the fields of the way chosen in ``workloads[i].load_as``
and sends only those to the YAML, so a value left in a hidden field never makes the load
ambiguous. A workload's kind (``KIND_FORMS``: generate, embed, rerank) works the same way:
only the chosen kind's fields are sent, so no key of another kind reaches the schema.
The fields themselves (labels, kinds, help, the load's and the kind's groups) are
:mod:`.fields`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from ..base.textsafe import printable
from ..model.catalog import load_catalog
from . import percent
from .fields import (
    ACCOUNT_FIELDS,
    COMPARE,
    CONFIG,
    COST_FIELDS,
    ENGINE_FIELDS,
    HARDWARE_LISTS,
    KIND,
    KIND_FIELDS,
    KIND_FORMS,
    LOAD_AS,
    LOAD_FIELDS,
    LOAD_FORMS,
    MEASURED_FIELDS,
    POLICY_FIELDS,
    PRICE_LABELS,
    PRICE_MAPS,
    WORKLOAD_FIELDS,
    platform_field,
    shown,
)

MAX_WORKLOADS = 50  # the schema's limit
MAX_CONFIGS = 4  # uploaded config.json models one form carries
# (path the requirements name, config.json text) of each uploaded model: hashable and
# picklable, so it travels with the requirements text to the document and chart workers
Configs = tuple[tuple[str, str], ...]
_INDEX = re.compile(r"^workloads\[(\d{1,3})\]\.(.+)$")
_INT = re.compile(r"^[+-]?\d{1,18}$")

_LOAD_KEYS = {key: {f.key for f in fields} for key, _, fields in LOAD_FORMS}
_KIND_KEYS = {key: {f.key for f in fields} for key, _, fields in KIND_FORMS}
_LINES = {"account.reasons"}

_TEXT = {f"account.{f.key}" for f in ACCOUNT_FIELDS} | {
    "hardware.platform", "costs.cloud_tier", "policy.deployment"} | {
    f"workloads[].{f.key}" for f in (*WORKLOAD_FIELDS, KIND, MEASURED_FIELDS[0], *ENGINE_FIELDS)}
_LISTS = {f"hardware.{f.key}" for f in HARDWARE_LISTS}
# the lists of catalog ids: a box an uploaded file made of `gpus: 8` is the id '8' (an unknown
# GPU, told as one), not the number 8 ("must be text ...: put it in quotes", review round 20)
_TEXT |= {"hardware.gpus", "hardware.weight_precisions", "hardware.kv_precisions"}
_BOOLS = {"policy.survive_node_loss"}


def _generic(name: str) -> str:
    m = _INDEX.match(name)
    return f"workloads[].{m.group(2)}" if m else name


def _typed(generic: str, value: str) -> Any:
    """A form string as the YAML loader would have typed it for this field."""
    if generic in _TEXT:
        return value
    if generic in _BOOLS:
        return {"true": True, "false": False}.get(value, value)
    if generic in percent.FRACTIONS:
        return percent.typed(value)
    if _INT.match(value):
        return int(value)
    try:
        x = float(value)
    except ValueError:
        return value  # the schema says what is wrong with it, beside the field
    if "e" in value.lower() and x.is_integer() and abs(x) < 1e18:
        # "1e12" tokens is a whole number: the schema says it is too many ("must be at most
        # 2,000,000"), not "must be a whole number (found 1000000000000.0)" (review round 22)
        return int(x)
    return x if math.isfinite(x) else value


def _put(data: dict[str, Any], path: list[str], value: Any) -> None:
    for part in path[:-1]:
        data = data.setdefault(part, {})
    data[path[-1]] = value


def form_to_data(items: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The requirements data of a submitted form (repeated names: list fields). Names that
    are no field of the form are ignored; workloads keep the form's order."""
    data: dict[str, Any] = {"schema_version": 1}
    workloads: dict[int, dict[str, Any]] = {}
    load_as: dict[int, str] = {}
    lists: dict[str, list[Any]] = {}
    models: dict[int, list[str]] = {}  # the model, then the alternatives compared with it
    for name, raw in items:
        value = raw.strip() if "notes" not in name else raw
        generic = _generic(name)
        chooser = _INDEX.match(name)
        if chooser and chooser.group(2) == LOAD_AS:
            if value in _LOAD_KEYS:
                load_as[int(chooser.group(1))] = value
            continue
        if (chooser and chooser.group(2) in ("model", COMPARE)
                and int(chooser.group(1)) < MAX_WORKLOADS * 4):
            if value:
                models.setdefault(int(chooser.group(1)), []).append(value)
            continue
        if generic not in KNOWN and not is_price_field(name):
            continue
        if generic in _LINES:  # a textarea: one item a line, blank lines dropped
            lines = [line.strip() for line in value.splitlines() if line.strip()]
            if lines:
                _put(data, name.split("."), lines)
            continue
        if generic in _LISTS:
            if value:
                lists.setdefault(name, []).append(_typed(generic, value))
            continue
        if value == "":
            continue
        typed = _typed(generic, value)
        m = _INDEX.match(name)
        if m:
            index = int(m.group(1))
            if index < MAX_WORKLOADS * 4:
                _put(workloads.setdefault(index, {}), m.group(2).split("."), typed)
        else:
            _put(data, name.split("."), typed)
    for name, values in lists.items():
        _put(data, name.split("."), values)
    for i, way in load_as.items():  # the other ways' fields are hidden: not sent
        for key in {f.key for f in LOAD_FIELDS} - _LOAD_KEYS[way]:
            workloads.get(i, {}).pop(key, None)
    for i, names in models.items():
        w = workloads.setdefault(i, {})
        if w.get("kind", "generate") != "generate":
            names = names[:1]  # alternatives are compared for language models only
        # the schema says what is wrong with a list (one model listed twice, more than 4)
        w["model"] = names[0] if len(names) == 1 else names
        workloads[i] = {**{k: v for k, v in w.items() if k == "name"}, "model": w["model"],
                        **{k: v for k, v in w.items() if k not in ("name", "model")}}
    for w in workloads.values():  # the other kinds' fields are hidden too: not sent
        kind = w.get("kind", "generate")
        if kind in _KIND_KEYS:
            for key in {f.key for f in KIND_FIELDS} - _KIND_KEYS[kind]:
                _drop(w, key.split("."))
            if kind == "generate":
                w.pop("kind", None)  # the default, as a hand-written file leaves it
    data["workloads"] = [workloads[i] for i in sorted(workloads)]
    return _ordered(data)


def form_configs(items: Iterable[tuple[str, str]]) -> dict[int, tuple[str, str]]:
    """The uploaded config.json of each workload that has one: index -> (the model path the
    requirements name, the file's text). Only a model path ending in config.json counts; the
    content was checked on upload and is read again by the same reader before any sizing."""
    models: dict[int, str] = {}
    texts: dict[int, str] = {}
    for name, raw in items:
        m = _INDEX.match(name)
        if m and m.group(2) == "model":
            models[int(m.group(1))] = raw.strip()
        elif m and m.group(2) == CONFIG and raw.strip():
            texts[int(m.group(1))] = raw
    out = {i: (models[i], t) for i, t in texts.items()
           if models.get(i, "").endswith("/config.json")}
    return dict(sorted(out.items())[:MAX_CONFIGS])


def configs_of(found: Mapping[int, tuple[str, str]]) -> Configs:
    """The distinct (path, text) pairs, in a stable order (the sizing cache's key)."""
    return tuple(sorted(set(found.values())))


def config_path(name: str) -> str:
    """Where the downloaded requirements put an uploaded config.json: models/<its name>/."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")[:60] or "model"
    return f"models/{slug}/config.json"


def _drop(data: dict[str, Any], path: list[str]) -> None:
    """Remove one key by its path; a section left empty goes too (``targets: {}``)."""
    node = data.get(path[0])
    if len(path) == 1:
        data.pop(path[0], None)
    elif isinstance(node, dict):
        _drop(node, path[1:])
        if not node:
            del data[path[0]]


_ORDER = ("schema_version", "account", "workloads", "hardware", "policy", "costs")


def _ordered(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in _ORDER if k in data} | {
        k: v for k, v in data.items() if k not in _ORDER}


class _Dumper(yaml.SafeDumper):
    """Text holding a character YAML reads as a line break (U+0085, U+2028, U+2029: pasted
    from a web page) is double-quoted, where it is written as an escape: the loader refuses
    such characters raw in a file, and the field they came from is checked as typed."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(c in value for c in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def to_yaml(data: Mapping[str, Any]) -> str:
    """YAML text the loader reads back to the same requirements."""
    head = "# Requirements written by llmsizer serve; size them with `llmsizer size FILE`.\n"
    return head + yaml.dump(dict(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                            width=100)


def form_values(data: Mapping[str, Any]) -> dict[str, Any]:
    """Requirements data (as a file holds it) → form field values by field name."""
    out: dict[str, Any] = {}

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, Mapping):
            for k, v in node.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(node, list) and prefix == "workloads":
            for i, v in enumerate(node):
                walk(f"workloads[{i}]", v)
        elif isinstance(node, list) and prefix in _LINES:
            out[prefix] = "\n".join(shown(v) for v in node)
        elif isinstance(node, list):
            out[prefix] = [shown(v) for v in node]
        else:  # a fraction in percent, as the form takes it
            out[prefix] = (percent.shown(node) if _generic(prefix) in percent.FRACTIONS
                           else shown(node))

    walk("", data)
    for i in range(workload_count(out)):  # the load's way, from the fields the file states
        p = f"workloads[{i}]."
        listed = out.get(p + "model")
        if isinstance(listed, list):  # alternatives: the first in the model's own list
            out[p + "model"], out[p + COMPARE] = (listed[0] if listed else ""), listed[1:]
        out[p + LOAD_AS] = ("population" if out.get(p + "named_users") else
                            "rate" if out.get(p + "requests_per_s") else "users")
        out.setdefault(p + KIND.key, "generate")
    return out


def workload_count(values: Mapping[str, Any]) -> int:
    found = [int(m.group(1)) for k in values if (m := _INDEX.match(k))]
    return max(found) + 1 if found else 0


KNOWN = frozenset(
    {f"account.{f.key}" for f in ACCOUNT_FIELDS}
    | {f"workloads[].{f.key}" for f in (*WORKLOAD_FIELDS, KIND, *LOAD_FIELDS, *KIND_FIELDS)}
    | _LISTS | {"hardware.platform"}
    | {f"policy.{f.key}" for f in POLICY_FIELDS} | {f"costs.{f.key}" for f in COST_FIELDS})


def is_price_field(name: str) -> bool:
    parts = name.split(".")
    return len(parts) == 3 and parts[0] == "costs" and parts[1] in PRICE_MAPS



# The form's sections (their legends) and each field's label by its generic path: an error's
# field path is said in these words (field_words), never as the loader's path.
_SECTIONS = {"account": "Account", "hardware": "Hardware", "policy": "Policy", "costs": "Costs"}
# every field by its generic path (one list of the form's sections)
FIELDS_BY_PATH = ({f"account.{f.key}": f for f in ACCOUNT_FIELDS}
            | {f"workloads[].{f.key}": f
               for f in (*WORKLOAD_FIELDS, KIND, *LOAD_FIELDS, *KIND_FIELDS)}
            | {f"hardware.{f.key}": f for f in (*HARDWARE_LISTS, platform_field(()))}
            | {f"policy.{f.key}": f for f in POLICY_FIELDS}
            | {f"costs.{f.key}": f for f in COST_FIELDS})
_LABELS = ({path: f.label for path, f in FIELDS_BY_PATH.items()}
           | {f"workloads[].{COMPARE}": "Compare with", f"workloads[].{LOAD_AS}": "Load stated as"})
_ITEM = re.compile(r"\[\d+\]")  # a list item's index: its field's label names the list
_WHOLE = re.compile(r"^workloads\[(\d{1,3})\]$")
# each field's kind by its generic path, and the groups of fields a file writes as a mapping
_KINDS = ({path: f.kind for path, f in FIELDS_BY_PATH.items()}
          | {k: "group" for k in (*_SECTIONS, "workloads[]", "workloads[].targets",
                                  "workloads[].measured")})


def _generic_path(path: str) -> str:
    """'workloads[1].targets.ttft_s' -> 'workloads[].targets.ttft_s'; 'hardware.gpus[0]' ->
    'hardware.gpus' (a list's item is told under its list)."""
    m = _INDEX.match(path) or _WHOLE.match(path)
    if m:
        return f"workloads[].{_ITEM.sub('', m.group(2))}" if m.re is _INDEX else "workloads[]"
    return _ITEM.sub("", path)


def field_kind(path: str) -> str:
    """The kind of form field a loader field path names (``Field.kind``: 'bool', 'list' (a
    group of boxes), 'lines' ...), 'group' for a group of fields (a section, a workload, its
    targets), '' when the form has none."""
    return _KINDS.get(_generic_path(path), "")


def key_label(path: str, key: str) -> str:
    """The form's label of ``key`` under the group at ``path`` ('policy', 'headroom' ->
    'Headroom'), or the key in words where the form has no field for it."""
    return _LABELS.get(f"{_generic_path(path)}.{key}") or _key_words(key)


def field_words(path: str, data: Mapping[str, Any]) -> str:
    """A field path of the loader's messages as the form shows the field: its label under its
    workload's name or its section's legend ('workloads[0].concurrent_users' -> 'Chat API —
    Concurrent users at peak', 'policy.headroom' -> 'Policy — Headroom', 'workloads[1]' ->
    'RAG agent'). A field the form has no label for is said in its keys' words."""
    m = _INDEX.match(path) or _WHOLE.match(path)
    if m:
        head, section = _workload_name(data, int(m.group(1))), "workloads[]"
        rest = m.group(2) if m.re is _INDEX else ""
    else:
        section, _, rest = path.partition(".")
        head = _SECTIONS.get(section, _key_words(section))
    if not rest:
        return head
    price, _, item = rest.partition(".")
    if section == "costs" and price in PRICE_LABELS and item:
        cat = load_catalog()
        entry = (cat.platforms if price == "node_prices" else cat.gpus).get(item)
        return f"{head} — {PRICE_LABELS[price]}, {entry.name if entry else printable(item)}"
    label = _LABELS.get(f"{section}.{_ITEM.sub('', rest)}")
    return f"{head} — {label or _key_words(rest)}"


def _workload_name(data: Mapping[str, Any], i: int) -> str:
    """The workload's name as the form shows it, or its place ('Workload 2') when it has none."""
    workloads = data.get("workloads")
    w = workloads[i] if isinstance(workloads, list) and i < len(workloads) else None
    name = w.get("name") if isinstance(w, Mapping) else None
    if not isinstance(name, str) or not name.strip():
        return f"Workload {i + 1}"
    name = printable(name.strip())
    return name if len(name) <= 60 else name[:57] + "..."


def _key_words(keys: str) -> str:
    """'measured.file' -> 'Measured file': the keys of a field the form has no label for."""
    text = printable(" ".join(_ITEM.sub("", keys).replace("_", " ").split(".")))
    return text[:1].upper() + text[1:]


# A field's path inside a message of a rule across sections (inputs/rules.py: the currency
# and its exchange rate, a price above its bound): "costs.gpu_prices.h100-pcie: too high ...",
# "account.currency is EUR, but catalog prices are in USD: add costs.usd_exchange_rate (...)".
_PATH = re.compile(r"(?<![\w.])((?:account|hardware|policy|costs)\.[a-z_]+(?:\.[a-z0-9][\w.-]*?)?)"
                   r"(?=[\s:,;)]|$)")


def paths_words(message: str, data: Mapping[str, Any]) -> tuple[str | None, str]:
    """A message that names the form's fields by their paths in the file (and no field of its
    own): the field to mark (the one the message says to add, else the first it names) and the
    message in the form's words, each field by its label in quotes, "add" as "fill in", the
    marked field's own path left out where the message starts with it (review round 22: the
    form showed "error: costs.gpu_prices.h100-pcie: too high (found 1e+12) ...")."""
    named = [m[1] for m in _PATH.finditer(message)
             if field_kind(m[1]) not in ("", "group") or is_price_field(m[1])]
    if not named:
        return None, message
    added = re.search(r"\badd (\S+)", message)
    field = added[1] if added and added[1] in named else named[0]
    for lead in (f"{field}: ", f"{field} "):
        if message.startswith(lead):
            message = message[len(lead):]
            break

    def label(m: re.Match[str]) -> str:
        return f"“{field_words(m[1], data).split(' — ', 1)[-1]}”" if m[1] in named else m[0]

    return field, re.sub(r"\badd “", "fill in “", _PATH.sub(label, message))
