"""Read a Hugging Face ``config.json`` named by a workload (``model: my-model/config.json``).

The path is relative to the requirements file and must stay inside its folder (symbolic
links are resolved first, so a link pointing out is refused too). The parameter count is
derived from the architecture (embeddings + attention + MLP/experts) unless the config
states it (``num_parameters``/``llmsizer_params_total``).

A config.json is untrusted input like the YAML: it is read only if it is a regular file of
at most :data:`MAX_CONFIG_BYTES`; ``NaN``/``Infinity``, numbers with thousands of digits and
deeply nested JSON are refused; every architecture number must be a positive integer within
a generous bound; the model name is stripped of control and bidirectional-override
characters. Every problem is an :class:`~llmsizer.base.errors.InputError`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..base.errors import InputError
from ..base.jsonsafe import DuplicateKeyError, no_duplicates
from ..base.textsafe import clean_text
from ..model.catalog import Model

MAX_CONFIG_BYTES = 1_000_000

# Generous upper bounds (the largest public models are far below them); a value above one is
# a broken or hostile file, and unbounded values would overflow the sizing arithmetic.
_LIMITS = {
    "hidden": 1_000_000,
    "layers": 10_000,
    "heads": 100_000,
    "head_dim": 100_000,
    "inter": 10_000_000,
    "vocab": 100_000_000,
    "experts": 100_000,
    "context": 1_000_000_000,
}
MAX_PARAMS = 1e15


def _int(cfg: dict[str, Any], rel: str, *keys: str, limit: int, default: int | None = None) -> int:
    for k in keys:
        if k not in cfg or cfg[k] is None:
            continue
        v = cfg[k]
        if not isinstance(v, int) or isinstance(v, bool) or not 0 < v <= limit:
            raise InputError(
                f"config file {rel!r}: {k!r} must be a whole number from 1 to {limit:,} "
                f"(found {_shown(v)}); check that this is a model's config.json"
            )
        return v
    if default is not None:
        return default
    raise InputError(
        f"config file {rel!r} lacks a positive integer {keys[0]!r}"
        + (f" (or {', '.join(repr(k) for k in keys[1:])})" if len(keys) > 1 else "")
        + "; use the model's own config.json from Hugging Face"
    )


def _context(cfg: dict[str, Any], rel: str) -> int:
    """The longest request the model serves: max_position_embeddings, or the RoPE-scaled
    length where the config enables scaling (Qwen's YaRN: factor 4 on 32,768 original
    positions serves 131,072), which the requirements' context check reads."""
    positions = _int(cfg, rel, "max_position_embeddings", limit=_LIMITS["context"], default=8192)
    scaling = cfg.get("rope_scaling")
    if not isinstance(scaling, dict):
        return positions
    factor, original = scaling.get("factor"), scaling.get("original_max_position_embeddings")

    def plain(x: Any) -> float | None:
        ok = isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x > 0
        return float(x) if ok else None

    f, o = plain(factor), plain(original)
    if f is None or o is None:
        return positions
    return int(min(max(positions, o * f), _LIMITS["context"]))


def _shown(v: Any) -> str:
    text = repr(v) if isinstance(v, int | float | str | bool) or v is None else type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _read(target: Path, rel: str) -> dict[str, Any]:
    try:
        if target.stat().st_size > MAX_CONFIG_BYTES:
            raise InputError(
                f"config file {rel!r} is larger than {MAX_CONFIG_BYTES:,} bytes: "
                "not a model config.json"
            )
        with target.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read config file {rel!r} ({exc.strerror or exc})") from None
    return _parse(raw, rel)


def _parse(raw: bytes, rel: str) -> dict[str, Any]:
    if len(raw) > MAX_CONFIG_BYTES:
        raise InputError(f"config file {rel!r} is larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        cfg = json.loads(raw.decode("utf-8-sig"), parse_constant=_refuse_constant,
                         object_pairs_hook=no_duplicates)
    except DuplicateKeyError as exc:
        raise InputError(f"config file {rel!r} {exc}; a config.json states each setting "
                         "once: download the model's config.json again") from None
    except UnicodeDecodeError:
        raise InputError(
            f"config file {rel!r} is not UTF-8 text: save it as UTF-8 (is it really a config.json?)"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"config file {rel!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg}); download the model's config.json again"
        ) from None
    except RecursionError:
        raise InputError(f"config file {rel!r} nests too deeply to be a model config.json") from None
    except ValueError as exc:  # NaN/Infinity, or an integer with thousands of digits
        raise InputError(f"config file {rel!r} is not usable JSON: {str(exc)[:80]}") from None
    if not isinstance(cfg, dict):
        raise InputError(
            f"config file {rel!r} must hold a JSON object ({{...}}) with the model's "
            f"architecture, not a {type(cfg).__name__}"
        )
    return cfg


def _layer_kinds(cfg: dict[str, Any], rel: str, layers: int) -> tuple[int, int, int, int]:
    """(sliding window, sliding-window layers, linear-attention layers, state values per
    linear layer) from the fields the model families use: ``layer_types`` (gpt-oss, Gemma 3,
    Qwen3-Next in newer configs), ``sliding_window_pattern`` (Gemma 3: every n-th layer is
    global), Gemma 2's alternation, ``full_attention_interval`` (Qwen3-Next: every n-th layer
    is full attention, the rest linear), or one window on every layer (Mistral 7B v0.1)."""
    types = cfg.get("layer_types")
    if types is not None and not (isinstance(types, list) and len(types) == layers
                                  and all(isinstance(t, str) for t in types)):
        raise InputError(f"config file {rel!r}: 'layer_types' must list one attention kind per "
                         f"layer ({layers} names such as \"full_attention\"); check the config")
    use_window = cfg.get("use_sliding_window", True) is not False
    window = (_int(cfg, rel, "sliding_window", limit=_LIMITS["context"], default=0)
              if use_window and cfg.get("sliding_window") is not None else 0)
    interval = (_int(cfg, rel, "full_attention_interval", limit=_LIMITS["layers"], default=0)
                if cfg.get("full_attention_interval") is not None else 0)
    linear = 0
    if types is not None:
        sliding = sum(t == "sliding_attention" for t in types)
        linear = sum(t == "linear_attention" for t in types)
    elif cfg.get("sliding_window_pattern") is not None:
        pattern = _int(cfg, rel, "sliding_window_pattern", limit=_LIMITS["layers"])
        sliding = layers - layers // pattern
    elif cfg.get("model_type") == "gemma2":  # even layers local, odd layers global
        sliding = (layers + 1) // 2
    else:
        sliding = layers if window else 0
        if interval and "linear_num_value_heads" in cfg:
            linear = layers - layers // interval
    if not window:
        sliding = 0
    if not sliding:
        window = 0
    state = 0
    if linear:
        k_heads = _int(cfg, rel, "linear_num_key_heads", limit=_LIMITS["heads"])
        v_heads = _int(cfg, rel, "linear_num_value_heads", limit=_LIMITS["heads"])
        k_dim = _int(cfg, rel, "linear_key_head_dim", limit=_LIMITS["head_dim"])
        v_dim = _int(cfg, rel, "linear_value_head_dim", limit=_LIMITS["head_dim"])
        kernel = _int(cfg, rel, "linear_conv_kernel_dim", limit=_LIMITS["head_dim"], default=4)
        # the delta-rule state (value heads x key dim x value dim) and the short convolution's
        # last kernel-1 inputs of the query, key and value projections
        state = v_heads * k_dim * v_dim + (2 * k_heads * k_dim + v_heads * v_dim) * (kernel - 1)
    return window, sliding, linear, state


def _indexer(cfg: dict[str, Any], rel: str) -> tuple[int, int, int]:
    """(indexer heads, indexer key width, tokens attended) of DeepSeek Sparse Attention
    (DeepSeek-V3.2's config.json: index_n_heads, index_head_dim, index_topk); zeros for
    dense attention."""
    if cfg.get("index_topk") is None:
        return 0, 0, 0
    return (_int(cfg, rel, "index_n_heads", limit=_LIMITS["heads"]),
            _int(cfg, rel, "index_head_dim", limit=_LIMITS["head_dim"]),
            _int(cfg, rel, "index_topk", limit=_LIMITS["context"]))


def _index_list(cfg: dict[str, Any], rel: str, key: str, layers: int) -> list[Any] | None:
    value = cfg.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > _LIMITS["layers"]:
        raise InputError(f"config file {rel!r}: {key!r} must be a list (one entry per layer "
                         "or layer numbers); check the config")
    return value


def _moe_layers(cfg: dict[str, Any], rel: str, layers: int) -> int:
    """How many layers hold the routed experts, from the fields the families use (the rest
    run a dense MLP): ``mlp_layer_types`` ("sparse" / "dense"), ``moe_layer_freq`` as a 0/1
    list per layer (MiniMax, MiMo), ``moe_layers`` (the layer numbers, Llama 4), DeepSeek's
    ``first_k_dense_replace`` with ``moe_layer_freq`` (layer i from k on, every freq-th:
    DeepSeek-V3, Kimi K2, GLM-4.5), Llama 4's ``interleave_moe_layer_step`` (layers s-1,
    2s-1, ...), Qwen's ``decoder_sparse_step`` with ``mlp_only_layers`` (layer i unless
    listed, when (i + 1) is a multiple of the step); else every layer (Mixtral, gpt-oss)."""
    kinds = _index_list(cfg, rel, "mlp_layer_types", layers)
    if kinds is not None:
        if len(kinds) != layers:
            raise InputError(f"config file {rel!r}: 'mlp_layer_types' must name one MLP kind "
                             f"per layer ({layers}); check the config")
        return sum(k == "sparse" for k in kinds)
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list):
        if len(freq) != layers or not all(f in (0, 1) for f in freq):
            raise InputError(f"config file {rel!r}: 'moe_layer_freq' as a list must hold a 0 or "
                             f"1 per layer ({layers}); check the config")
        return sum(freq)
    listed = _index_list(cfg, rel, "moe_layers", layers)
    if listed is not None:
        return len({i for i in listed if isinstance(i, int) and 0 <= i < layers})
    step = 1
    if "first_k_dense_replace" in cfg or "moe_layer_freq" in cfg:
        dense = cfg.get("first_k_dense_replace") or 0
        if not isinstance(dense, int) or isinstance(dense, bool) or not 0 <= dense <= layers:
            raise InputError(f"config file {rel!r}: 'first_k_dense_replace' must be a whole "
                             f"number from 0 to the layers ({layers}); check the config")
        step = _int(cfg, rel, "moe_layer_freq", limit=_LIMITS["layers"], default=1)
        return len([i for i in range(dense, layers) if i % step == 0])
    if cfg.get("interleave_moe_layer_step") is not None:
        step = _int(cfg, rel, "interleave_moe_layer_step", limit=_LIMITS["layers"])
        return len(range(step - 1, layers, step))
    step = _int(cfg, rel, "decoder_sparse_step", limit=_LIMITS["layers"], default=1)
    dense_listed = _index_list(cfg, rel, "mlp_only_layers", layers) or []
    return len([i for i in range(layers) if i not in dense_listed and (i + 1) % step == 0])


def _text(value: Any) -> str:
    return clean_text(value).strip()[:200] if isinstance(value, str) else ""


def model_name(cfg: dict[str, Any], base: Path | None, rel: str) -> str:
    """The name a customer knows the model by, never "config.json" (issue 22, item 7): the
    Hugging Face id (``_name_or_path``), else an optional ``model_name`` key, else the folder
    that holds the file (resolved, so a config.json beside the requirements takes their
    folder's name)."""
    folder = Path(rel).parent.name or (
        (base / rel).resolve().parent.name if base is not None else "")
    return (_text(cfg.get("_name_or_path")) or _text(cfg.get("model_name"))
            or clean_text(folder)[:200] or "the customer's model")


def model_from_config(base: Path, rel: str) -> Model:
    try:
        base = base.resolve()
        target = (base / rel).resolve()
    except (OSError, RuntimeError, ValueError):  # symlink loops, NUL bytes, over-long paths
        raise InputError(f"config file path {rel!r} cannot be resolved") from None
    if not target.is_relative_to(base):
        raise InputError(f"{rel!r} points outside the requirements file's folder; "
                         "copy the config.json next to the YAML file (or into a folder beside it)")
    if not target.is_file():
        what = "is a folder, not a file" if target.is_dir() else "not found"
        raise InputError(f"config file {rel!r} {what} (looked in {str(target.parent)!r}); "
                         "paths are relative to the requirements file")
    return _model(_read(target, rel), rel, base)


def model_from_json(raw: bytes, rel: str) -> Model:
    """A model from a config.json's content (the web app's upload; ``rel`` names it in
    messages and is where the downloaded requirements put the file)."""
    return _model(_parse(raw, rel), rel, None)


def _model(cfg: dict[str, Any], rel: str, base: Path | None) -> Model:
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrappers
        cfg = {**cfg, **cfg["text_config"]}
    hidden = _int(cfg, rel, "hidden_size", "d_model", "n_embd", limit=_LIMITS["hidden"])
    layers = _int(cfg, rel, "num_hidden_layers", "n_layer", "num_layers", limit=_LIMITS["layers"])
    heads = _int(cfg, rel, "num_attention_heads", "n_head", limit=_LIMITS["heads"])
    kv_heads = _int(cfg, rel, "num_key_value_heads", limit=_LIMITS["heads"], default=heads)
    if kv_heads > heads:  # grouped-query attention shares KV heads; it never adds any
        raise InputError(f"config file {rel!r}: num_key_value_heads ({kv_heads}) is larger than "
                         f"num_attention_heads ({heads}); a model has at most one KV head per "
                         "attention head: check that this is the model's config.json")
    if hidden // heads < 1 and "head_dim" not in cfg:
        raise InputError(f"config file {rel!r}: num_attention_heads ({heads}) is larger than "
                         f"hidden_size ({hidden}); check that this is a model's config.json")
    head_dim = _int(cfg, rel, "head_dim", limit=_LIMITS["head_dim"], default=max(1, hidden // heads))
    inter = _int(cfg, rel, "intermediate_size", "ffn_dim", limit=_LIMITS["inter"], default=4 * hidden)
    vocab = _int(cfg, rel, "vocab_size", limit=_LIMITS["vocab"], default=32000)
    experts = _int(cfg, rel, "num_local_experts", "n_routed_experts", "num_experts",
                   limit=_LIMITS["experts"], default=1)
    per_tok = _int(cfg, rel, "num_experts_per_tok", "experts_per_token", limit=_LIMITS["experts"],
                   default=1)
    if experts > 1 and per_tok >= experts:
        raise InputError(f"config file {rel!r}: num_experts_per_tok ({per_tok}) must be smaller "
                         f"than the number of experts ({experts}); check the mixture-of-experts "
                         "settings")
    moe_inter = _int(cfg, rel, "moe_intermediate_size", limit=_LIMITS["inter"], default=inter)
    moe_layers = _moe_layers(cfg, rel, layers) if experts > 1 else 0
    if experts > 1 and not moe_layers:
        raise InputError(f"config file {rel!r} states {experts} experts but no layer that holds "
                         "them; check the mixture-of-experts settings")
    # the dense layers' MLP width (Llama 4 names it apart; elsewhere intermediate_size)
    dense_inter = _int(cfg, rel, "intermediate_size_mlp", limit=_LIMITS["inter"], default=inter)
    kv_lora = (_int(cfg, rel, "kv_lora_rank", limit=_LIMITS["hidden"], default=0)
               if "kv_lora_rank" in cfg else 0)
    rope = _int(cfg, rel, "qk_rope_head_dim", limit=_LIMITS["head_dim"], default=0) if kv_lora else 0
    tied = cfg.get("tie_word_embeddings", False) is True
    # Parameter count from the architecture; gated MLPs have three matrices.
    attn = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    mlp_one = 3 * hidden * (moe_inter if experts > 1 else inter)
    dense_mlp = 3 * hidden * dense_inter * (layers - moe_layers) if experts > 1 else 0
    embed = vocab * hidden * (1 if tied else 2)
    stated = cfg.get("llmsizer_params_total") or cfg.get("num_parameters")
    total = float(embed + layers * attn + dense_mlp
                  + (moe_layers if experts > 1 else layers) * mlp_one * experts)
    if stated is not None and not isinstance(stated, bool):
        if not isinstance(stated, int | float) or not (
            math.isfinite(float(stated)) and 0 < stated <= MAX_PARAMS
        ):
            raise InputError(f"config file {rel!r}: the stated parameter count must be a number "
                             f"from 1 to {MAX_PARAMS:.0e} (found {_shown(stated)})")
        total = float(stated)
    active = float(embed + layers * attn + dense_mlp + moe_layers * mlp_one * min(per_tok, experts))
    if experts <= 1:
        active = total
    if not 0 < total <= MAX_PARAMS:
        raise InputError(f"config file {rel!r} describes a model of {total:.3g} parameters; "
                         "check that this is a real model's config.json")
    window, window_layers, linear_layers, state = _layer_kinds(cfg, rel, layers)
    index_heads, index_dim, index_topk = _indexer(cfg, rel)
    hf_id = _text(cfg.get("_name_or_path"))
    try:
        return Model(
            name=model_name(cfg, base, rel),
            hf_id=hf_id,
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
            moe_layers=moe_layers if experts > 1 else None,
            sliding_window=window,
            window_layers=window_layers,
            linear_attention_layers=linear_layers,
            linear_state_elements=state,
            indexer_heads=index_heads,
            indexer_head_dim=index_dim,
            indexer_topk=index_topk,
            max_context=_context(cfg, rel),
            source=f"config.json at {clean_text(rel)[:200]}",
        )
    except ValidationError as exc:  # pragma: no cover - the checks above pre-empt it
        first = exc.errors(include_input=False, include_url=False)[0]
        raise InputError(f"config file {rel!r}: {first['loc']}: {first['msg']}") from None
