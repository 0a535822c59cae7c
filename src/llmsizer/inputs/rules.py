"""The checks across the fields of a workload, and of the whole file (currency, unique
names): each returns every finding, not the first, and reads plain values, so that one
wording serves both callers:

* the models' ``mode="after"`` validators (:mod:`.schema_workload`, :mod:`.schema`), on the
  validated values, which raise the first finding;
* the loader, on the file's raw data when some field failed its own check (then pydantic
  never reaches those validators), so that a file's every problem is told in one run
  (:func:`.loader.parse`). A value that failed its own check is :data:`STATED`: given, its
  value unknown, so no rule compares it and no rule calls it missing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from itertools import pairwise
from typing import Any

from pydantic import BaseModel

from .kinds import keys_of_its_kind, population_keys, retrieval_consistent


class _Unknown:
    """A value the file states that failed its own check (its message is told already)."""

    def __repr__(self) -> str:
        return "STATED"


STATED: Any = _Unknown()

# The load keys and what each takes (for the message when one is left without a value).
_LOAD_KEYS = {"concurrent_users": "a whole number from 1 to 10,000,000",
             "requests_per_s": "a number above 0 (requests per second)",
             "burstiness": "a number from 0 to 10 (1 = random arrivals)",
             "named_users": "a whole number from 1 to 100,000,000",
             "requests_per_user_per_hour": "a number above 0",
             "peak_to_average": "a number from 1 to 100"}

# The most each money amount may be, in US dollars with its unit: a bound against a typo (a
# price with three zeros too many), checked at the account's exchange rate so that it means the
# same in yen as in dollars (schema.Costs carries them as `usd_maximum`).
MONEY_LIMITS_USD = {"electricity_per_kwh": 10, "network_per_node": 10_000_000,
                    "gpu_prices": 10_000_000, "cloud_gpu_hour": 1_000,
                    "node_prices": 100_000_000, "storage_per_tb_month": 100_000,
                    "software_per_gpu_year": 1_000_000, "colocation_per_kw_month": 100_000,
                    "api_input_per_million": 10_000, "api_output_per_million": 10_000,
                    "retrieval_api_per_million": 10_000}
_MONEY_UNITS = {"electricity_per_kwh": " per kWh", "network_per_node": " per node",
                "gpu_prices": " per GPU", "cloud_gpu_hour": " per GPU-hour",
                "node_prices": " per node", "storage_per_tb_month": " per TB-month",
                "software_per_gpu_year": " per GPU-year", "colocation_per_kw_month": " per kW-month",
                "api_input_per_million": " per million tokens",
                "api_output_per_million": " per million tokens",
                "retrieval_api_per_million": " per million tokens"}

_REQUIRED_TO_GENERATE = {"prompt_tokens": "prompt_tokens: 500",
                         "output_tokens": "output_tokens: 300",
                         "targets": "targets: {tokens_per_s_per_user: 30}"}


class _Fields(Mapping[str, Any]):
    """A validated model read as the keys its file stated (a key stated without a value
    included, as ``None``); nested models read the same way, so the rules read one shape.
    A view, not a copy: validating a model reads only the keys its rules ask for."""

    __slots__ = ("_model",)

    def __init__(self, model: BaseModel) -> None:
        self._model = model

    # pydantic keeps a model's values in __dict__ and the keys given in its fields set: read
    # directly (not through model_fields, a descriptor), the rules add little to validation
    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (self._model.__dict__.get(key) is not None
                                         or key in self._model.__pydantic_fields_set__)

    def get(self, key: str, default: Any = None) -> Any:
        value = self._model.__dict__.get(key)
        if value is None:
            return None if key in self._model.__pydantic_fields_set__ else default
        if isinstance(value, list):
            return [_Fields(v) if isinstance(v, BaseModel) else v for v in value]
        return _Fields(value) if isinstance(value, BaseModel) else value

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(key)
        return self.get(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k in type(self._model).model_fields if k in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def values_of(model: BaseModel) -> Mapping[str, Any]:
    """``model`` as the rules read a file's keys (:class:`_Fields`)."""
    return _Fields(model)


def number(values: Mapping[str, Any], key: str) -> float | None:
    """The value at ``key`` when it is a plain number (not a boolean, not :data:`STATED`)."""
    value = values.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def workload_problems(w: Mapping[str, Any], defaults: Mapping[str, Any]) -> list[str]:
    """Every cross-field problem of one workload (``w``: its keys as written or validated;
    ``defaults``: each field's default, a key at its default being no statement)."""
    found = [f"{key}: has no value (nothing after the colon); write {allowed}, or delete the "
             "line" for key, allowed in _LOAD_KEYS.items() if key in w and w[key] is None]
    kind = w.get("kind", "generate")
    found += keys_of_its_kind(w, defaults)
    if isinstance(w.get("model"), list):
        if kind in ("embed", "rerank"):
            found.append(f"model: a list of alternatives is for generating workloads; an "
                         f"{kind} workload names one model")
        if w.get("measured") is not None:
            found.append("model: a list of alternatives cannot share one benchmark "
                         "(measured); name the model that was measured")
    if kind in ("embed", "rerank"):
        return found + retrieval_consistent(w) + population_keys(w)
    if kind != "generate":
        return found  # the kind's own message lists the kinds
    for key, example in _REQUIRED_TO_GENERATE.items():
        if w.get(key) is None:
            found.append(f"required key '{key}' is missing: a generating workload "
                         f"(kind: generate, the default) needs it, e.g. `{example}`")
    found += _one_load(w)
    t = w.get("targets")
    if isinstance(t, Mapping):
        found += _generating_targets(t)
    tokens = [number(w, k) for k in ("max_context_tokens", "prompt_tokens", "output_tokens")]
    most, prompt, output = tokens
    if most is not None and prompt is not None and output is not None and most < prompt + output:
        found.append(f"max_context_tokens ({most}) is smaller than prompt_tokens + "
                     f"output_tokens ({prompt + output})")
    return found


def _given(w: Mapping[str, Any], key: str) -> bool:
    # a load key without a value is told as such, and counts as the form the file chose
    return w.get(key) is not None or (key in _LOAD_KEYS and key in w)


def _one_load(w: Mapping[str, Any]) -> list[str]:
    """Exactly one load form: each alone is a complete statement of the peak."""
    found = []
    forms = [key for key in ("concurrent_users", "requests_per_s", "named_users")
             if _given(w, key)]
    if len(forms) != 1:
        shown = " and ".join(forms) if forms else "none of them"
        found.append(
            "state the load exactly one way: concurrent_users (users at the same time), "
            "requests_per_s (peak arrivals per second) or named_users with "
            f"requests_per_user_per_hour and peak_to_average; found {shown}")
    found += population_keys(w)
    if w.get("burstiness") is not None and w.get("concurrent_users") is not None:
        found.append("burstiness describes arrivals: use it with requests_per_s or "
                     "named_users (or delete it)")
    return found


def context_problem(name: str, limit: int, prompt: int, output: int, stated: int | None,
                    *, options: bool = False) -> str | None:
    """A request longer than the model's context window cannot be served at all: sized
    anyway, the proposal would price a deployment that fails on its first long prompt.
    ``stated``: max_context_tokens when the file gives it; ``options``: the words of
    ``llmsizer estimate``'s options instead of the file's keys."""
    need = stated if stated is not None else prompt + output
    if need <= limit:
        return None
    if stated is not None:
        what, fix = "max_context_tokens", "lower max_context_tokens"
    elif options:
        what = f"--prompt-tokens + --output-tokens = {prompt:,} + {output:,}"
        fix = "shorten them"
    else:
        what = f"prompt_tokens + output_tokens = {prompt:,} + {output:,}"
        fix = "shorten the prompt or the answer"
    config = (" (a config.json's window is its max_position_embeddings, or its rope_scaling's "
              "original_max_position_embeddings × factor where the engine serves it scaled, "
              "as with YaRN)") if name.endswith(".json") else ""
    return (f"{name} serves at most {limit:,} tokens of context, but one request here needs "
            f"{need:,} ({what}); {fix} to fit, or choose a model with a longer context "
            "(`llmsizer catalog models` lists each model's max context tokens)" + config)


def _speed_hint(t: Mapping[str, Any]) -> str:
    """The speed a file's latency targets already imply, as the fix: an ITL percentile or a
    whole-answer time alone sets no speed for the sizing to meet (the mean is what sizes)."""
    for q in (50, 90, 95, 99):
        itl = number(t, f"itl_p{q}_ms")
        if itl is not None and itl > 0:
            return (f" (itl_p{q}_ms bounds the gaps between tokens but sets no mean speed: "
                    f"{itl:g} ms is {1000 / itl:.3g} tokens/s, e.g. "
                    f"`tokens_per_s_per_user: {1000 / itl:.3g}`)")
    e2e = number(t, "e2e_p95_s")
    if e2e is not None:
        return (f" (e2e_p95_s bounds 95 % of the answers but sets no mean speed: add e.g. "
                f"`response_time_s: {e2e:g}`)")
    # nothing to derive it from: the three forms, each with the schema's example
    return ("; add e.g. `tokens_per_s_per_user: 30` (the speed each user sees), "
            "`response_time_s: 10` (a whole answer) or `system_tokens_per_s: 5000` (batch work)")


def _generating_targets(t: Mapping[str, Any]) -> list[str]:
    found = []
    if t.get("latency_p95_s") is not None:
        found.append("targets.latency_p95_s is for kind: embed or rerank workloads; a "
                     "generating workload states ttft_s and tokens_per_s_per_user "
                     "(or response_time_s)")
    if all(t.get(k) is None for k in ("tokens_per_s_per_user", "response_time_s",
                                      "system_tokens_per_s")):
        found.append("targets needs tokens_per_s_per_user, response_time_s or "
                     "system_tokens_per_s" + _speed_hint(t))
    found += _percentiles_in_order(t)
    first, whole = number(t, "ttft_s"), number(t, "response_time_s")
    if first is not None and whole is not None and first >= whole:
        found.append(f"targets.ttft_s ({first:g} s) must be shorter than "
                     f"targets.response_time_s ({whole:g} s): the first token comes before "
                     "the whole answer")
    return found


def _percentiles_in_order(t: Mapping[str, Any]) -> list[str]:
    """A higher percentile's target below a lower one's: 95 % of the requests within 1 s
    already puts half of them within 1 s, so the lower target (2 s) never binds; written
    so, the two were almost surely swapped."""
    found = []
    for key, unit, what in (("ttft_p{}_s", "s", "first tokens"),
                            ("itl_p{}_ms", "ms", "gaps between tokens")):
        stated = [(q, v) for q in (50, 90, 95, 99)
                  if (v := number(t, key.format(q))) is not None]
        for (low, low_v), (high, high_v) in pairwise(stated):
            if high_v < low_v:
                found.append(
                    f"targets.{key.format(high)} ({high_v:g} {unit}) is below "
                    f"targets.{key.format(low)} ({low_v:g} {unit}): the p{high} target bounds "
                    f"{high} % of the {what}, so it cannot be below the p{low} one, which "
                    f"bounds {low} %; swap the two values, or raise "
                    f"{key.format(high)} to at least {low_v:g}")
    return found


def requirements_problems(data: Mapping[str, Any]) -> list[str]:
    """Every cross-section problem of a file: the currency and its exchange rate; workload
    names told apart (``data``: the file's keys as written or validated)."""
    found = []
    account, costs = data.get("account"), data.get("costs")
    currency = account.get("currency", "USD") if isinstance(account, Mapping) else STATED
    rate = (costs.get("usd_exchange_rate") if isinstance(costs, Mapping)
            else None if costs is None else STATED)
    if isinstance(currency, str) and currency != "USD" and rate is None:
        found.append(
            f"account.currency is {currency}, but catalog prices are in USD: add "
            f"costs.usd_exchange_rate ({currency} per US dollar, e.g. 0.92)")
    if currency == "USD" and rate not in (None, 1.0, STATED):
        found.append("costs.usd_exchange_rate must be 1 (or left out) when "
                     "account.currency is USD")
    if isinstance(costs, Mapping) and isinstance(currency, str):
        found += _money_problems(costs, currency, rate)
    workloads = data.get("workloads")
    names = [w.get("name") if isinstance(w, Mapping) else None
             for w in (workloads if isinstance(workloads, list) else [])]
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        if isinstance(name, str):
            groups.setdefault(name.lower(), []).append(i)
    # every name used more than once, each told once with all its workloads (not only the
    # first pair: a file with two pairs was otherwise fixed in two runs)
    suggested: set[str] = set()
    for group in groups.values():
        if len(group) > 1:
            found.append(duplicate_name(names, group, suggested))
    return found


_COUNTS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
           9: "nine", 10: "ten"}


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def duplicate_name(names: list[Any], group: list[int], suggested: set[str]) -> str:
    """The workloads of one name (compared whatever their case, ``group``: their indexes):
    each named by index (the loader's message puts their lines in: schema_messages.py) and a
    free name suggested for each but the first, so the fix is one edit per repeat; a name
    suggested is added to ``suggested`` (lower case), so two messages never offer the same."""
    taken = {n.lower() for n in names if isinstance(n, str)} | suggested
    fixes = []
    for i in group[1:]:
        n = 2
        while f"{names[i]} ({n})".lower() in taken:
            n += 1
        taken.add(f"{names[i]} ({n})".lower())
        suggested.add(f"{names[i]} ({n})".lower())
        fixes.append(f"name: {names[i]} ({n})")
    spellings = list(dict.fromkeys(repr(names[i]) for i in group))
    case = ", whatever their case" if len(spellings) > 1 else ""
    count = _COUNTS.get(len(group), f"{len(group)}")
    which = "the second" if len(group) == 2 else "all but the first"
    return (f"{count} workloads are named {_listed(spellings)} "
            f"({_listed([f'workloads[{i}]' for i in group])}): names must be unique{case}; "
            f"rename {which}, e.g. {_listed(fixes)}")


def _money_problems(costs: Mapping[str, Any], currency: str, rate: Any) -> list[str]:
    """Each money amount above its bound in US dollars, converted at the exchange rate."""
    if currency != "USD" and (isinstance(rate, bool) or not isinstance(rate, int | float)
                              or not 0 < rate < math.inf):
        return []  # no usable rate: its own message says so
    per_usd = 1.0 if currency == "USD" else float(rate)
    found = []
    for key, limit in MONEY_LIMITS_USD.items():
        value = costs.get(key)
        items = value.items() if isinstance(value, Mapping) else [(None, value)]
        for item, amount in items:
            if isinstance(amount, bool) or not isinstance(amount, int | float) \
                    or amount <= limit * per_usd:
                continue
            where = f"costs.{key}" + (f".{item}" if item is not None else "")
            bound = f"{limit:,} USD{_MONEY_UNITS[key]}"
            if currency != "USD":
                most = limit * per_usd
                bound = (f"{most:,.0f}" if most >= 100 else f"{most:.3g}") + (
                    f" {currency}{_MONEY_UNITS[key]}, the worth of {bound} at "
                    f"costs.usd_exchange_rate {per_usd:g}")
            hint = ""
            if currency != "USD" and per_usd < 0.1 and amount * per_usd <= limit:
                # fits at the inverse rate: US dollars per JPY written for JPY per US dollar
                hint = (f"; or is the rate inverted? costs.usd_exchange_rate is {currency} per "
                        f"US dollar: 1 / {per_usd:g} = {1 / per_usd:,.4g}")
            found.append(f"{where}: too high (found {amount:.10g}); allowed: at most {bound}"
                         + hint)
    return found


def measured_problems(m: Mapping[str, Any]) -> list[str]:
    """A workload's benchmark (``measured:``): one source, and the keys of a file with it."""
    found = []
    figure, file = m.get("tokens_per_s_per_replica"), m.get("file")
    if figure is None and file is None:
        found.append("measured needs tokens_per_s_per_replica (the measured figure) or "
                     "file (a benchmark result file, or a list of them for a curve)")
    if figure is not None and file is not None:
        found.append("measured takes tokens_per_s_per_replica or file, not both: the "
                     "file's figures would be ignored")
    if file is None and (m.get("format") is not None or m.get("gpu_count") is not None):
        found.append("format and gpu_count describe benchmark files: use them with "
                     "`file:` (or delete them)")
    gpus, group = number(m, "gpu_count"), number(m, "gpus_per_replica")
    if gpus is not None and group and gpus % group:
        found.append(f"gpu_count ({gpus}) must be a whole number of replicas of "
                     f"gpus_per_replica ({group}) GPUs")
    return found


def speculative_problems(spec: Mapping[str, Any]) -> list[str]:
    """Speculative decoding: what a step can yield, and the figures each method needs."""
    found = []
    accepted, drafted = number(spec, "acceptance_length"), number(spec, "draft_tokens")
    if accepted is not None and drafted is not None and accepted > drafted + 1:
        found.append(f"acceptance_length ({accepted:g}) cannot exceed draft_tokens + 1 "
                     f"({drafted + 1}): a step yields at most the drafted tokens and the "
                     "model's own")
    method = spec.get("method")
    if method == "draft_model" and spec.get("draft_cost") is None:
        found.append("a draft_model needs draft_cost: its forward as a share of the model's "
                     "step (about its active parameters / the model's)")
    if isinstance(method, str) and method != "mtp" and spec.get("acceptance_length") is None:
        found.append(f"{method} needs acceptance_length: the mean tokens a step yields on your "
                     "content (only mtp has a published default)")
    return found
