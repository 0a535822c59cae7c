"""The Inputs sheet of a returned workbook back to requirement fields: each named input cell
llmsizer wrote is read, and a changed one is mapped to the requirement field it came from
(users, lengths, targets, speculative decoding, policy, costs, GPU/cloud/node and hosted-API
prices) or refused with why it is not re-read. Validating the edited requirements is
:mod:`.reread`'s (errors name the cells).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base.errors import InputError
from ..base.textsafe import printable
from ..model.calculations import CLOUD_TIER_CODES, INPUTS, PERCENTILE_TARGETS
from .xlsxsafe import Cells


@dataclass(frozen=True)
class Change:
    """An input cell whose value differs from what llmsizer wrote."""

    cell: str  # 'Inputs!C5'
    label: str  # 'Headroom policy' / 'Concurrent users at peak (Internal assistant)'
    field: str  # requirement field it maps to ('policy.headroom'), '' when not re-read
    old: float | str
    new: float | str | None


def shown(v: Any) -> str:
    """A value for a one-line message: printable, at most 60 characters, text quoted."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    text = repr(v) if isinstance(v, str) else str(v)
    return printable(text if len(text) <= 60 else text[:57] + "...")


_ACCOUNT_FIELDS: dict[str, tuple[str, str]] = {
    "headroom": ("policy", "headroom"),
    "survive_node_loss": ("policy", "survive_node_loss"),
    "gpu_memory_utilization": ("policy", "gpu_memory_utilization"),
    "runtime_reserve_gb": ("policy", "runtime_reserve_gb"),
    "storage_read_gb_per_s": ("policy", "storage_read_gb_per_s"),
    "electricity_per_kwh": ("costs", "electricity_per_kwh"),
    "pue": ("costs", "pue"),
    "amortization_years": ("costs", "amortization_years"),
    "support_rate": ("costs", "support_rate"),
    "average_load": ("costs", "average_load"),
    "network_per_node": ("costs", "network_per_node"),
    "hours_per_year": ("costs", "hours_per_year"),
    "storage_tb_per_node": ("costs", "storage_tb_per_node"),
    "storage_per_tb_month": ("costs", "storage_per_tb_month"),
    "software_per_gpu_year": ("costs", "software_per_gpu_year"),
    "colocation_per_kw_month": ("costs", "colocation_per_kw_month"),
}
# workload input -> (path inside the workload, 0 means "not set")
_WORKLOAD_FIELDS: dict[str, tuple[tuple[str, ...], bool]] = {
    "users": (("concurrent_users",), True),
    "requests_per_s": (("requests_per_s",), True),
    "named_users": (("named_users",), True),
    "requests_per_user_per_hour": (("requests_per_user_per_hour",), True),
    "peak_to_average": (("peak_to_average",), False),
    "burstiness": (("burstiness",), False),
    "prompt_tokens": (("prompt_tokens",), False),
    "output_tokens": (("output_tokens",), False),
    "max_context_tokens": (("max_context_tokens",), True),
    "prefix_cache_hit": (("prefix_cache_hit",), False),
    "target_tokens_per_s_per_user": (("targets", "tokens_per_s_per_user"), True),
    "target_response_time_s": (("targets", "response_time_s"), True),
    "target_ttft_s": (("targets", "ttft_s"), True),
    **{f"target_{k}": (("targets", k), True) for k in PERCENTILE_TARGETS},
    "target_system_tokens_per_s": (("targets", "system_tokens_per_s"), True),
}
_INTEGER = frozenset({"concurrent_users", "named_users", "prompt_tokens", "output_tokens",
                      "max_context_tokens", "draft_tokens"})
_PRICE_FIELDS = {("gpus", "price"): "gpu_prices", ("gpus", "cloud_gpu_hour"): "cloud_gpu_hour",
                 ("platforms", "base_price"): "node_prices",
                 ("models", "api_input_per_million"): "api_input_per_million",
                 ("models", "api_output_per_million"): "api_output_per_million",
                 ("retrieval", "api_per_million_tokens"): "retrieval_api_per_million"}
_PRICE_LABELS = {"price": "Purchase price", "cloud_gpu_hour": "Cloud price per GPU-hour",
                 "base_price": "Node price without GPUs",
                 "api_input_per_million": "Hosted API price per million input tokens",
                 "api_output_per_million": "Hosted API price per million output tokens",
                 "api_per_million_tokens": "Hosted API price per million tokens"}
# speculative decoding: workload input -> field of the workload's speculative block
_SPECULATIVE_FIELDS = {"spec_draft_tokens": "draft_tokens",
                       "spec_acceptance_length": "acceptance_length",
                       "spec_draft_cost": "draft_cost"}
_LABELS = {i.name: i.label for i in INPUTS}
_BOUNDS = {i.name: (i.low, i.high, i.integer) for i in INPUTS}
# account inputs that are no requirement field but move every cost: read back as the fields
# they stand for (the GPU price multiplier as the prices it multiplies, the tier code as
# costs.cloud_tier), so what finance saw recalculated is what the re-run sizes
_WHAT_IFS = ("gpu_price_factor", "cloud_tier_what_if")
_TIER_BY_CODE = {code: tier for tier, code in CLOUD_TIER_CODES.items()}
_WORKLOAD_NAME = re.compile(r"^in_w(\d+)_(.+)$")


def _cell_value(sheets: Mapping[str, Cells], target: str, filename: str, label: str
                ) -> tuple[str, float]:
    sheet, _, ref = target.lstrip("=").partition("!")
    sheet = sheet.strip("'")
    ref = ref.replace("$", "")
    where = printable(f"{sheet}!{ref}"[:60])
    if sheet not in sheets:
        raise InputError(f"the cell name for {label} points at {where}, outside the sheets "
                         "llmsizer wrote; undo the change", file=filename)
    value = sheets[sheet].get(ref.upper(), (None, "n"))[0]
    if isinstance(value, bool):
        return where, 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return where, float(value)
    found = "nothing (the cell is empty)" if value is None else shown(value)
    raise InputError(f"{where} ({label}): must be a number, found {found}", file=filename)


def _changed(old: float, new: float) -> bool:
    return abs(new - old) > 1e-12 * max(abs(old), abs(new), 1e-300)


def _typed(key: str, value: float) -> float | int:
    if key in _INTEGER and value.is_integer():
        return int(value)
    return value


def edited_requirements(sheets: Mapping[str, Cells], names: Mapping[str, str],
                        meta: Mapping[str, Any], source: Mapping[str, Any], filename: str
                        ) -> tuple[list[Change], dict[str, Any], dict[str, str]]:
    """The embedded requirements with the Inputs sheet's edits applied: (the changes, the
    requirements data, each changed field -> 'Inputs!C5 (label)' for :func:`at_cells`)."""
    data: dict[str, Any] = copy.deepcopy(dict(source.get("requirements") or {}))
    workloads: list[dict[str, Any]] = data.get("workloads") or []
    inputs: dict[str, Any] = dict(meta.get("inputs") or {})
    prices: dict[str, Any] = dict(meta.get("prices") or {})
    changes: list[Change] = []
    cells: dict[str, str] = {}  # requirement field (dotted) -> 'Inputs!C5 (label)'
    # the multiplier last: it multiplies the GPU prices as edited
    for name in sorted(inputs, key=lambda n: (n == "in_gpu_price_factor", n)):
        old = inputs[name]
        if not isinstance(old, int | float) or name not in names:
            continue
        label, fieldname, setter = _target(name, workloads, prices, inputs)
        where, new = _cell_value(sheets, names[name], filename, label)
        if not _changed(float(old), new):
            continue
        if setter is None:
            raise InputError(f"{where} ({label}) was changed from {shown(old)} to "
                             f"{shown(new)}; {fieldname}", file=filename)
        twin = next((c for c in changes if c.field == fieldname), None)
        if twin is not None and twin.new != new:  # two workloads' cells of one model's price
            raise InputError(f"{where} ({label}) and {twin.cell} set {fieldname} to "
                             f"{shown(new)} and {shown(twin.new)}: give both the same value",
                             file=filename)
        _check_bounds(name, new, where, label, filename)
        setter(data, new)
        changes.append(Change(cell=where, label=label, field=fieldname, old=float(old), new=new))
        cells[fieldname] = f"{where} ({label})"
    return changes, data, cells


def _check_bounds(name: str, value: float, where: str, label: str, filename: str) -> None:
    """A what-if cell's value within the Inputs sheet's validation (a requirement field's is
    validated with the requirements; these stand for several fields or a code)."""
    key = name.removeprefix("in_")
    if key not in _WHAT_IFS:
        return
    low, high, integer = _BOUNDS[key]
    if (low is not None and value < low) or (high is not None and value > high) or (
            integer and not value.is_integer()):
        span = f"{shown(low)} to {shown(high)}"
        raise InputError(f"{where} ({label}): must be {'a whole number ' if integer else ''}"
                         f"from {span}, found {shown(value)}", file=filename)


def at_cells(exc: InputError, cells: Mapping[str, str], filename: str) -> InputError:
    """A validation error of the rebuilt requirements, named by the cell(s) that caused it."""
    fieldname = exc.field or ""
    hits = [c for f, c in cells.items() if f == fieldname or f.startswith(fieldname + ".")
            or fieldname.startswith(f + ".") or (fieldname and f.startswith(fieldname + "["))]
    if not hits:
        hits = [c for f, c in cells.items() if fieldname and f.startswith(fieldname)]
    where = "; ".join(hits) if hits else "the Inputs sheet"
    return InputError(f"{where}: {exc.message}", file=filename, field=exc.field)


def _set(path: tuple[str | int, ...], zero_is_none: bool = False,
         integer_key: str | None = None) -> Any:
    def setter(data: dict[str, Any], value: float) -> None:
        cur: Any = data
        for part in path[:-1]:
            if isinstance(part, str) and isinstance(cur, dict) and cur.get(part) is None:
                cur[part] = {}
            cur = cur[part]
        key = path[-1]
        cur[key] = None if zero_is_none and value == 0 else _typed(str(integer_key or key), value)
    return setter


def _dotted(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def speculative_lock(key: str, draft_tokens: float, draft_layers: float) -> str | None:
    """Why a speculative-decoding cell of a workload is not read back (the workbook writes
    it locked, not as an input), or None when it is: ``draft_tokens`` and ``draft_layers``
    are the workload's spec_draft_tokens and spec_draft_layers as written."""
    if key == "spec_draft_layers":
        return ("it follows from the draft method (an MTP module or EAGLE head runs one layer "
                "unless a draft cost is stated): change speculative in the requirements")
    if key not in _SPECULATIVE_FIELDS:
        return None
    if draft_tokens <= 0:
        return ("speculative decoding is off for this workload and its draft method is not "
                "in the workbook: add a speculative block to the requirements")
    if key == "spec_draft_cost" and draft_layers > 0:
        return ("the draft's cost is its model layer (Draft forward in model layers); a "
                "stated draft_cost replaces that layer: state it in the requirements")
    return None


def _speculative(k: int, key: str, w: Mapping[str, Any], inputs: Mapping[str, Any]
                 ) -> tuple[str, Any]:
    """(requirement field or why not, setter or None) of a speculative-decoding cell."""
    why = speculative_lock(key, float(inputs.get(f"in_w{k + 1}_spec_draft_tokens", 0)),
                           float(inputs.get(f"in_w{k + 1}_spec_draft_layers", 0)))
    if why is not None or w.get("speculative") is None:
        return why or "speculative decoding is off for this workload", None
    path = ("workloads", k, "speculative", _SPECULATIVE_FIELDS[key])
    if key == "spec_draft_tokens":  # 0 drafted tokens: speculative decoding off
        def setter(data: dict[str, Any], value: float) -> None:
            w = data["workloads"][k]
            if value == 0:
                w["speculative"] = None
            else:
                w["speculative"]["draft_tokens"] = _typed("draft_tokens", value)
        return _dotted(path), setter
    return _dotted(path), _set(path)


def _target(name: str, workloads: list[dict[str, Any]], prices: Mapping[str, Any],
            inputs: Mapping[str, Any]) -> tuple[str, str, Any]:
    """(label, requirement field or why it is not re-read, setter or None) of a named cell."""
    if name in prices:
        table, tid, column = prices[name]
        section = _PRICE_FIELDS.get((table, column))
        label = _PRICE_LABELS.get(column, column) + f": {tid}"
        if section is None:
            return label, "it is not an account price", None
        path: tuple[str | int, ...] = ("costs", section, str(tid))
        return label, _dotted(path), _set(path)
    m = _WORKLOAD_NAME.match(name)
    if m is None:
        key = name.removeprefix("in_")
        label = _LABELS.get(key, key)
        if key == "gpu_price_factor":
            return label, "costs.gpu_prices", _factor_setter(prices, inputs)
        if key == "cloud_tier_what_if":
            return label, "costs.cloud_tier", _tier_setter
        if key == "network_per_node_stated":  # after network_per_node (names sort so)
            return label, "costs.network_per_node (stated or not)", _network_stated_setter(inputs)
        if key in ("network_per_fabric_port", "network_per_frontend_gbps"):
            return label, ("it is the catalog's price per port; to cost the network your own "
                           "way, type the network per node and set \"Network per node "
                           "stated\" to 1"), None
        if key not in _ACCOUNT_FIELDS:
            return label, "it is not a requirements field; set it in the requirements", None
        section, fieldname = _ACCOUNT_FIELDS[key]
        path = (section, fieldname)
        if key == "survive_node_loss":
            return label, _dotted(path), _flag_setter(path)
        return label, _dotted(path), _set(path)
    k, key = int(m.group(1)) - 1, m.group(2)
    if not 0 <= k < len(workloads):
        return name, "it names a workload the requirements do not have", None
    w = workloads[k]
    label = f"{_LABELS.get(key, key)}, workload {w.get('name')!r}"
    if key in _WORKLOAD_FIELDS:
        rel, zero_none = _WORKLOAD_FIELDS[key]
        path = ("workloads", k, *rel)
        return label, _dotted(path), _set(path, zero_none, rel[-1])
    if key in _SPECULATIVE_FIELDS or key == "spec_draft_layers":
        return (label, *_speculative(k, key, w, inputs))
    if key == "fixed_users_per_replica":
        return label, ("the sizing gives every user a slot; users per replica at a fixed "
                       "replica count are for llmsizer estimate --concurrency"), None
    if key == "measured_tokens_per_s_per_replica":
        measured = w.get("measured")
        if measured is None:
            return label, ("the workload is modelled: a measured throughput also needs the GPU "
                           "and GPUs per replica it was measured on; add a measured block to the "
                           "requirements"), None
        if measured.get("file") is not None:
            return label, ("it comes from the benchmark file(s) "
                           f"{measured.get('file')!r}: change the files (or state "
                           "tokens_per_s_per_replica instead) in the requirements"), None
        path = ("workloads", k, "measured", "tokens_per_s_per_replica")
        return label, _dotted(path), _measured_setter(k)
    return label, (f"it describes the model ({w.get('model')}), which llmsizer reads from the "
                   "catalog or its config.json, not from the workbook: undo the change, or name "
                   "another model in the requirements"), None


def _factor_setter(prices: Mapping[str, Any], inputs: Mapping[str, Any]) -> Any:
    """The GPU price multiplier as the purchase prices it multiplies: every GPU price of the
    workbook (as edited: this setter runs after the price cells') and every one the
    requirements state, times the multiplier; an unknown price (0) stays unknown."""
    def setter(data: dict[str, Any], value: float) -> None:
        costs = data.get("costs")
        if costs is None:
            costs = data["costs"] = {}
        own: dict[str, Any] = dict(costs.get("gpu_prices") or {})
        for name, (table, tid, column) in prices.items():
            written = inputs.get(name)
            if (table, column) == ("gpus", "price") and isinstance(written, int | float):
                own.setdefault(str(tid), float(written))
        costs["gpu_prices"] = {g: float(p) * value for g, p in own.items() if float(p) > 0}
    return setter


def _tier_setter(data: dict[str, Any], value: float) -> None:
    """A cloud tier code (1-4) as costs.cloud_tier; 0 (the price as written) changes
    nothing."""
    tier = _TIER_BY_CODE.get(int(value))
    if tier is not None:
        costs = data.get("costs")
        if costs is None:
            costs = data["costs"] = {}
        costs["cloud_tier"] = tier


def _network_stated_setter(inputs: Mapping[str, Any]) -> Any:
    """The account's network per node stated (1) or not (0, the catalog's prices per port):
    1 keeps a figure typed beside it, else the one the workbook held."""
    def setter(data: dict[str, Any], value: float) -> None:
        section = data.setdefault("costs", {})
        if value == 0:
            section["network_per_node"] = None
        elif section.get("network_per_node") is None:
            section["network_per_node"] = float(inputs.get("in_network_per_node", 0))
    return setter


def _flag_setter(path: tuple[str, str]) -> Any:
    def setter(data: dict[str, Any], value: float) -> None:
        section = data.setdefault(path[0], {})
        section[path[1]] = (value == 1) if value in (0, 1) else value
    return setter


def _measured_setter(k: int) -> Any:
    def setter(data: dict[str, Any], value: float) -> None:
        w = data["workloads"][k]
        if value == 0:  # 0 = no measured figure: the model sizes the workload again
            w["measured"] = None
        else:
            w["measured"]["tokens_per_s_per_replica"] = value
    return setter

