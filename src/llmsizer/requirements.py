"""Customer requirements: the strict schema of ``inputs/<account>.yaml`` and its loader.

The commented ``inputs/example.yaml`` is the input documentation; ``docs/requirements.schema.json``
is generated from these models (a test checks it did not drift).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .catalog import Catalog, Model, load_catalog, suggest
from .errors import InputError
from .yamlsafe import Located, load_file

SCHEMA_VERSION = 1
PrecisionId = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4"]
Text = Annotated[str, Field(min_length=1, max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Account(_Strict):
    name: Text
    id: Text | None = None
    prepared_by: Text | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "USD"
    notes: Annotated[str, Field(max_length=2000)] | None = None


class Targets(_Strict):
    tokens_per_s_per_user: Annotated[float, Field(gt=0, le=10_000)] | None = None
    response_time_s: Annotated[float, Field(gt=0, le=3600)] | None = None
    ttft_s: Annotated[float, Field(gt=0, le=600)] | None = None
    system_tokens_per_s: Annotated[float, Field(gt=0, le=1e9)] | None = None


class Measured(_Strict):
    gpu: Text
    gpus_per_replica: Annotated[int, Field(ge=1, le=72)]
    tokens_per_s_per_replica: Annotated[float, Field(gt=0, le=1e8)]


class Workload(_Strict):
    name: Text
    model: Text
    concurrent_users: Annotated[int, Field(ge=1, le=10_000_000)]
    prompt_tokens: Annotated[int, Field(ge=1, le=2_000_000)]
    output_tokens: Annotated[int, Field(ge=1, le=1_000_000)]
    max_context_tokens: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    prefix_cache_hit: Annotated[float, Field(ge=0, le=0.99)] = 0.0
    targets: Targets
    measured: Measured | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        t = self.targets
        if t.tokens_per_s_per_user is None and t.response_time_s is None and (
            t.system_tokens_per_s is None
        ):
            raise ValueError(
                "targets needs tokens_per_s_per_user, response_time_s or system_tokens_per_s"
            )
        if t.ttft_s is not None and t.response_time_s is not None and (
            t.ttft_s >= t.response_time_s
        ):
            raise ValueError(
                f"targets.ttft_s ({t.ttft_s:g} s) must be shorter than targets.response_time_s "
                f"({t.response_time_s:g} s): the first token comes before the whole answer"
            )
        if self.max_context_tokens is not None and (
            self.max_context_tokens < self.prompt_tokens + self.output_tokens
        ):
            raise ValueError(
                f"max_context_tokens ({self.max_context_tokens}) is smaller than prompt_tokens + "
                f"output_tokens ({self.prompt_tokens + self.output_tokens})"
            )
        return self


class Hardware(_Strict):
    gpus: Annotated[list[Text], Field(min_length=1, max_length=50)] | None = None
    platform: Text | None = None
    weight_precisions: Annotated[list[PrecisionId], Field(min_length=1)] = ["fp8", "bf16"]
    kv_precisions: Annotated[list[PrecisionId], Field(min_length=1)] = ["fp8"]
    tensor_parallel: Annotated[list[Literal[1, 2, 4, 8]], Field(min_length=1)] | None = None


class Policy(_Strict):
    headroom: Annotated[float, Field(ge=0, le=3)] = 0.25
    survive_node_loss: bool = False
    gpu_memory_utilization: Annotated[float, Field(ge=0.1, le=1)] = 0.90
    runtime_reserve_gb: Annotated[float, Field(ge=0, le=100)] | None = None
    max_batch_per_replica: Annotated[int, Field(ge=1, le=100_000)] | None = None
    mbu: Annotated[float, Field(gt=0.05, le=1)] | None = None
    mfu: Annotated[float, Field(gt=0.05, le=1)] | None = None


class Costs(_Strict):
    electricity_per_kwh: Annotated[float, Field(ge=0, le=10)] = 0.12
    pue: Annotated[float, Field(ge=1, le=3)] = 1.3
    amortization_years: Annotated[float, Field(ge=1, le=10)] = 3
    support_rate: Annotated[float, Field(ge=0, le=1)] = 0.10
    average_load: Annotated[float, Field(ge=0.01, le=1)] = 0.6
    network_per_node: Annotated[float, Field(ge=0, le=10_000_000)] = 0.0
    gpu_prices: dict[str, Annotated[float, Field(gt=0, le=10_000_000)]] = {}
    cloud_gpu_hour: dict[str, Annotated[float, Field(gt=0, le=1000)]] = {}


class Requirements(_Strict):
    schema_version: Literal[1]
    account: Account
    workloads: Annotated[list[Workload], Field(min_length=1, max_length=50)]
    hardware: Hardware = Hardware()
    policy: Policy = Policy()
    costs: Costs = Costs()

    @model_validator(mode="after")
    def _unique_names(self) -> Requirements:
        seen: set[str] = set()
        for w in self.workloads:
            if w.name.lower() in seen:
                raise ValueError(f"two workloads are named {w.name!r}: names must be unique")
            seen.add(w.name.lower())
        return self


class Loaded(BaseModel):
    """Validated requirements plus what the engine needs to know about where they came from."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    req: Requirements
    models: dict[str, Model]  # workload model string -> resolved model (catalog or config.json)
    source: str  # file name for messages


def json_schema() -> dict[str, Any]:
    return Requirements.model_json_schema()


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


# --- error formatting -------------------------------------------------------------------


def _model_at(loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The pydantic model class that owns the field at ``loc`` (for 'did you mean')."""
    cls: Any = Requirements
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


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _value_at(data: Any, loc: tuple[str | int, ...]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


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


def _format(err: dict[str, Any], data: Any, located: Located, filename: str) -> InputError:
    loc = tuple(err["loc"])
    # pydantic adds the union/validator branch names to loc; drop non-field markers
    loc = tuple(
        p for p in loc if not (isinstance(p, str) and ("[" in p or p.startswith("function")))
    )
    kind = err["type"]
    pos = located.position(loc)
    line, col = pos if pos else (None, None)
    field = _dotted(loc) or None
    if kind == "extra_forbidden":
        owner = _model_at(loc)
        names = sorted(owner.model_fields) if owner else []
        key = str(loc[-1])
        msg = f"unknown key {key!r}{suggest(key, names)}; allowed here: {', '.join(names)}"
        field = _dotted(loc[:-1]) or None
    elif kind == "missing":
        msg = f"required key {loc[-1]!r} is missing"
        field = _dotted(loc[:-1]) or None
    elif kind == "value_error":
        msg = str(err["msg"]).removeprefix("Value error, ")
    else:
        found = _value_at(data, loc)
        shown = repr(found)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg = f"{err['msg']} (found {shown})"
        if isinstance(found, float) and not math.isfinite(found):
            msg = f"must be a finite number (found {shown})"
        hint = _HINTS.get(kind)
        if hint:
            msg += f"; {hint}"
    return InputError(msg, file=filename, line=line, column=col, field=field)


# --- loading ----------------------------------------------------------------------------


def parse(located: Located, filename: str) -> Requirements:
    data = located.data
    if not isinstance(data, dict):
        raise InputError("the top level must be a mapping (key: value lines)", file=filename,
                         line=1, column=1)
    if "schema_version" in data and data["schema_version"] != SCHEMA_VERSION:
        pos = located.position(("schema_version",))
        raise InputError(
            f"schema_version {data['schema_version']!r} is not supported; this llmsizer reads "
            f"schema_version: {SCHEMA_VERSION}", file=filename,
            line=pos[0] if pos else None, column=pos[1] if pos else None, field="schema_version")
    try:
        return Requirements.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        # A misspelt key shows up as 'unknown key' AND 'missing key': the first explains both.
        errors.sort(key=lambda e: e["type"] != "extra_forbidden")
        raise _format(dict(errors[0]), data, located, filename) from None


def _err_at(located: Located, filename: str, loc: tuple[str | int, ...], msg: str) -> InputError:
    pos = located.position(loc)
    return InputError(msg, file=filename, line=pos[0] if pos else None,
                      column=pos[1] if pos else None, field=_dotted(loc))


def resolve(req: Requirements, located: Located, path: Path, catalog: Catalog) -> Loaded:
    """Check every catalog id the requirements name; resolve models (catalog or config.json)."""
    fname = str(path)

    def known(value: str, table: dict[str, Any], kind: str, loc: tuple[str | int, ...]) -> None:
        if value not in table:
            names = sorted(table)
            raise _err_at(located, fname, loc,
                          f"unknown {kind} {value!r}{suggest(value, names)}; "
                          f"valid: {', '.join(names)}")

    for i, gid in enumerate(req.hardware.gpus or []):
        known(gid, catalog.gpus, "GPU", ("hardware", "gpus", i))
    if req.hardware.platform:
        known(req.hardware.platform, catalog.platforms, "platform", ("hardware", "platform"))
        plat = catalog.platforms[req.hardware.platform]
        for i, gid in enumerate(req.hardware.gpus or []):
            if gid not in plat.gpus:
                raise _err_at(located, fname, ("hardware", "gpus", i),
                              f"GPU {gid!r} does not fit platform {req.hardware.platform!r}, "
                              f"which takes {', '.join(plat.gpus)}")
    for section in ("gpu_prices", "cloud_gpu_hour"):
        for gid in getattr(req.costs, section):
            known(gid, catalog.gpus, "GPU", ("costs", section, gid))
    models: dict[str, Model] = {}
    for i, w in enumerate(req.workloads):
        if w.measured:
            known(w.measured.gpu, catalog.gpus, "GPU", ("workloads", i, "measured", "gpu"))
        if w.model in models:
            continue
        if w.model.endswith(".json"):
            from .modelconfig import model_from_config

            try:
                models[w.model] = model_from_config(path.parent, w.model)
            except InputError as exc:
                raise _err_at(located, fname, ("workloads", i, "model"), exc.message) from None
        else:
            known(w.model, catalog.models, "model", ("workloads", i, "model"))
            models[w.model] = catalog.models[w.model]
    return Loaded(req=req, models=models, source=fname)


def load(path: Path | str, catalog: Catalog | None = None) -> Loaded:
    """Read, validate and resolve one requirements file; raises InputError."""
    p = Path(path)
    located = load_file(p)
    req = parse(located, str(p))
    return resolve(req, located, p, catalog or load_catalog())
