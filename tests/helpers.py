"""Shared test helpers: evaluate the calculation list for one hand-built option."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from llmsizer.inputs.modelconfig import model_from_config
from llmsizer.inputs.schema import Requirements
from llmsizer.model.catalog import Model, load_catalog
from llmsizer.sizing.evaluate import (
    Choice,
    account_inputs,
    build_tables,
    evaluate_choice,
    workload_inputs,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
EXAMPLE = ROOT / "inputs" / "example.yaml"


def seed_70b() -> Model:
    """A Llama-3-70B-class model with exactly 70e9 parameters, as the seeds compute it."""
    return model_from_config(DATA / "llama-70b-class", "config.json")


def example_dict() -> dict[str, Any]:
    data = yaml.safe_load(EXAMPLE.read_text())
    assert isinstance(data, dict)
    return data


def option_values(model: Model, gpu: str, *, tp: int = 1, weights: str = "fp8", kv: str = "bf16",
                  prompt: int = 1, output: int = 1, context: int | None = None,
                  overrides: dict[str, float] | None = None,
                  policy: dict[str, Any] | None = None, targets: dict[str, float] | None = None,
                  users: int = 1) -> dict[str, Any]:
    """Every input and calculation value for one option, through the engine's own program."""
    cat = load_catalog()
    req = Requirements.model_validate({
        "schema_version": 1, "account": {"name": "t"},
        "workloads": [{"name": "w", "model": "x", "concurrent_users": users,
                       "prompt_tokens": prompt, "output_tokens": output,
                       "max_context_tokens": context,
                       "targets": targets or {"system_tokens_per_s": 1.0}}],
        "policy": policy or {}})
    base = {**account_inputs(req, cat), **workload_inputs(req.workloads[0], model)}
    plat = cat.gpus[gpu].default_platform
    return evaluate_choice(base, Choice(gpu, plat, weights, kv, tp), build_tables(req, cat), req,
                           cat, overrides)
