"""Read a Hugging Face ``config.json`` named by a workload (``model: my-model/config.json``).

The path is relative to the requirements file and must stay inside its folder. The
parameter count is derived from the architecture (embeddings + attention + MLP/experts)
unless the config states it (``num_parameters``/``llmsizer_params_total``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .catalog import Model
from .errors import InputError

MAX_CONFIG_BYTES = 1_000_000


def _int(cfg: dict[str, Any], *keys: str, default: int | None = None) -> int:
    for k in keys:
        v = cfg.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    if default is not None:
        return default
    raise InputError(f"config.json lacks a positive integer {keys[0]!r}")


def model_from_config(base: Path, rel: str) -> Model:
    base = base.resolve()
    target = (base / rel).resolve()
    if not target.is_relative_to(base):
        raise InputError(f"{rel!r} points outside the requirements file's folder; "
                         "copy the config.json next to the YAML file")
    if not target.is_file():
        raise InputError(f"config file {rel!r} not found next to the requirements file")
    if target.stat().st_size > MAX_CONFIG_BYTES:
        raise InputError(f"config file {rel!r} is larger than 1 MB: not a model config.json")
    try:
        cfg = json.loads(target.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"config file {rel!r} is not valid JSON ({exc})") from None
    if not isinstance(cfg, dict):
        raise InputError(f"config file {rel!r} must hold a JSON object")
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrappers
        cfg = {**cfg, **cfg["text_config"]}
    hidden = _int(cfg, "hidden_size", "d_model", "n_embd")
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(cfg, "num_attention_heads", "n_head")
    kv_heads = _int(cfg, "num_key_value_heads", default=heads)
    head_dim = _int(cfg, "head_dim", default=hidden // heads)
    inter = _int(cfg, "intermediate_size", "ffn_dim", default=4 * hidden)
    vocab = _int(cfg, "vocab_size", default=32000)
    experts = _int(cfg, "num_local_experts", "n_routed_experts", "num_experts", default=1)
    per_tok = _int(cfg, "num_experts_per_tok", "experts_per_token", default=1)
    moe_inter = _int(cfg, "moe_intermediate_size", default=inter)
    kv_lora = _int(cfg, "kv_lora_rank", default=0) if "kv_lora_rank" in cfg else 0
    rope = _int(cfg, "qk_rope_head_dim", default=0) if kv_lora else 0
    tied = bool(cfg.get("tie_word_embeddings", False))
    # Parameter count from the architecture; gated MLPs have three matrices.
    attn = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    mlp_one = 3 * hidden * (moe_inter if experts > 1 else inter)
    embed = vocab * hidden * (1 if tied else 2)
    stated = cfg.get("llmsizer_params_total") or cfg.get("num_parameters")
    total = float(stated) if isinstance(stated, int | float) and stated > 0 else float(
        embed + layers * (attn + mlp_one * experts))
    active = float(embed + layers * (attn + mlp_one * min(per_tok, experts)))
    if experts <= 1:
        active = total
    return Model(
        name=str(cfg.get("_name_or_path") or Path(rel).parent.name or rel)[:200],
        hf_id=str(cfg.get("_name_or_path") or "")[:200],
        params_total=total,
        params_active=min(active, total),
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=rope,
        experts=experts if experts > 1 else 0,
        experts_per_token=per_tok if experts > 1 else 0,
        max_context=_int(cfg, "max_position_embeddings", default=8192),
        source=f"config.json at {rel}",
    )
