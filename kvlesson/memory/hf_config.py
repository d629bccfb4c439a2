"""Reading a Hugging Face `config.json` into what the floor plan needs.

A plain decoder keeps a key and a value for every layer and KV head, so its
cache per token follows from the config alone. Some configs cannot be sized
that way, and for them this module refuses with a message that says what to
give instead, rather than return a wrong number:

* hybrid models (linear-attention or Mamba layers beside attention layers):
  only some layers keep a KV cache; give `cache_layers=` and `params=`;
* sliding-window attention: a windowed layer keeps only its last W tokens;
* MLA (DeepSeek-style `kv_lora_rank`): one compressed latent per layer, not K and V;
* mixture-of-experts: the parameter count needs the experts; give `params=`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvlesson.arguments import whole

NEEDED = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "vocab_size",
)
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "float8_e4m3fn": 1}
# Keys by which hybrid configs mark their non-attention layers (Qwen3-Next, Jamba,
# Zamba, Nemotron-H, MiniMax configs on the Hugging Face hub).
HYBRID_KEYS = (
    "full_attention_interval",
    "attn_layer_period",
    "layers_block_type",
    "hybrid_override_pattern",
    "attn_type_list",
    "linear_num_key_heads",
)
# Keys by which mixture-of-experts configs give their experts (Mixtral, Qwen MoE, DeepSeek).
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
# The keys vLLM 0.33 reads a model's longest context from, the smallest winning, and
# model_max_length over all (derive_max_model_len_and_key,
# vllm/transformers_utils/model_arch_config_convertor.py:374-407).
CONTEXT_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
# RoPE types whose max_position_embeddings is already the scaled length, so vLLM does not
# multiply it by the factor again (vllm/config/model.py:2611-2618).
SCALED_ROPE = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")


def load(config: Mapping[str, Any] | str | Path) -> Mapping[str, Any]:
    """The config as a dict: a dict as it is, a path read as JSON; a multimodal
    config's `text_config` when the top level has no `hidden_size`."""
    if isinstance(config, (str, Path)):
        config = json.loads(Path(config).read_text())
    if not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a dict or the path of a config.json, "
            f"not {type(config).__name__} {config!r}"
        )
    if "hidden_size" not in config and isinstance(config.get("text_config"), Mapping):
        return {**config["text_config"], "_name_or_path": config.get("_name_or_path", "model")}
    return config


def model_fields(
    config: Mapping[str, Any], cache_layers: int | None = None, params: int | None = None
) -> dict[str, Any]:
    """The fields of a `Model` (name, params, layers, kv_heads, head_size, bytes_per_number,
    heads, context, hybrid, mlp_size).

    `layers` is the number of layers that keep a KV cache: all of them in a
    plain decoder, `cache_layers` when a hybrid or windowed config needs it given.
    """
    missing = [key for key in NEEDED if key not in config]
    if missing:
        raise ValueError(
            f"config is missing {', '.join(missing)}; a Llama-style config.json has them"
        )
    hidden = whole("hidden_size", config["hidden_size"], 1)
    layers = whole("num_hidden_layers", config["num_hidden_layers"], 1)
    heads = whole("num_attention_heads", config["num_attention_heads"], 1)
    kv_heads = whole("num_key_value_heads", config.get("num_key_value_heads", heads), 1)
    # Many Qwen3 configs set head_dim (128) apart from hidden_size / heads (64).
    head_size = whole("head_dim", config.get("head_dim") or hidden // heads, 1)
    vocab = whole("vocab_size", config["vocab_size"], 1)
    inner = whole("intermediate_size", config["intermediate_size"], 1)
    dtype = config.get("torch_dtype") or config.get("dtype") or "bfloat16"
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"torch_dtype must be one of {', '.join(DTYPE_BYTES)}, got {dtype!r}")
    _refuse_what_it_cannot_size(config, layers, cache_layers, params)
    if cache_layers is not None:
        layers_with_cache = whole("cache_layers", cache_layers, 1, layers)
    else:
        layers_with_cache = layers
    if params is None:
        params = _llama_style_params(
            config, hidden, layers, heads, kv_heads, head_size, vocab, inner
        )
    context, key = derived_context(config)
    return {
        "name": config.get("_name_or_path", "model"),
        "params": whole("params", params, 1),
        "layers": layers_with_cache,
        "kv_heads": kv_heads,
        "head_size": head_size,
        "bytes_per_number": DTYPE_BYTES[dtype],
        "heads": heads,
        "context": context,
        "context_key": key,
        "hybrid": _is_hybrid(config),
        "mlp_size": inner,
    }


def derived_context(config: Mapping[str, Any]) -> tuple[int | None, str]:
    """The longest request the config allows, as vLLM 0.33 derives it, and the key it comes
    from: the smallest of the length keys, `model_max_length` over all, times a RoPE
    scaling factor unless the RoPE type is one whose length is already scaled (llama3,
    yarn, ...). (None, "max_position_embeddings") when the config gives no length.

    >>> derived_context({"max_position_embeddings": 32768})
    (32768, 'max_position_embeddings')
    """
    found = [(config[key], key) for key in CONTEXT_KEYS if isinstance(config.get(key), int)]
    if not found:
        return None, "max_position_embeddings"
    length, key = min(found)
    if isinstance(config.get("model_max_length"), int):
        length, key = config["model_max_length"], "model_max_length"
    rope = config.get("rope_scaling") or config.get("rope_parameters")
    if isinstance(rope, Mapping):
        kind = rope.get("rope_type") or rope.get("type") or "default"
        factor = rope.get("factor")
        if kind not in SCALED_ROPE and isinstance(factor, (int, float)) and factor:
            length = int(length * factor)
    return whole(key, length, 1), key


def _llama_style_params(
    config: Mapping[str, Any],
    hidden: int,
    layers: int,
    heads: int,
    kv_heads: int,
    head_size: int,
    vocab: int,
    inner: int,
) -> int:
    """Embeddings, attention with grouped KV heads, a gated MLP, RMS norms and an LM head
    (tied or not): Llama, Mistral, Qwen2 (with its q, k, v biases) and Qwen3 (with its
    q and k norms). For Llama 3.1 8B it gives 8,030,261,248."""
    attention = hidden * heads * head_size * 2 + hidden * kv_heads * head_size * 2
    if config.get("model_type") == "qwen2" or config.get("attention_bias"):
        attention += heads * head_size + 2 * kv_heads * head_size
    if config.get("model_type") == "qwen3":
        attention += 2 * head_size
    per_layer = attention + 3 * hidden * inner + 2 * hidden
    head = 0 if config.get("tie_word_embeddings", False) else vocab * hidden
    return vocab * hidden + layers * per_layer + hidden + head


def _is_hybrid(config: Mapping[str, Any]) -> bool:
    """True for a config with layers that keep a state, not a KV cache (linear attention,
    Mamba): the keys of HYBRID_KEYS, or a `layer_types` list with other kinds than attention."""
    kinds = set(config.get("layer_types") or ())
    return bool(
        kinds - {"full_attention", "sliding_attention"}
        or any(config.get(key) is not None for key in HYBRID_KEYS)
    )


def _refuse_what_it_cannot_size(
    config: Mapping[str, Any], layers: int, cache_layers: int | None, params: int | None
) -> None:
    """Raise ValueError for configs whose cache or size the plain formula gets wrong."""
    if config.get("kv_lora_rank"):
        latent = config["kv_lora_rank"] + config.get("qk_rope_head_dim", 0)
        raise ValueError(
            f"this config uses MLA (kv_lora_rank={config['kv_lora_rank']}): each layer caches one "
            f"latent of {latent} numbers per token, kept whole on every GPU, not K and V per head. "
            f"from_hf_config cannot size it; build Model(name, params, layers, kv_heads=1, "
            f"head_size={latent / 2:g}) by hand (K and V count twice in the formula), with params "
            f"from the model card"
        )
    kinds = set(config.get("layer_types") or ())
    if _is_hybrid(config):
        full = sum(kind == "full_attention" for kind in config.get("layer_types") or ())
        hint = f" (its layer_types lists {full} full_attention layers)" if full else ""
        if cache_layers is None or params is None:
            raise ValueError(
                f"this is a hybrid model{hint}: only some of its {layers} layers keep a KV cache, "
                f"and its other layers keep a fixed state per request, which vLLM keeps in the "
                f"same pool, so no per-token formula sizes that pool. Give cache_layers= (the "
                f"number of layers that keep a KV cache) and params= (the parameter count from "
                f"the model card) to size the weights and the KV cache alone; read the pool "
                f"from the server's log"
            )
        return
    window = config.get("sliding_window")
    windowed = "sliding_attention" in kinds or (
        window is not None and config.get("use_sliding_window", True) is not False
    )
    if windowed and cache_layers is None:
        raise ValueError(
            f"this config uses sliding-window attention (window {window} tokens): a windowed "
            f"layer keeps only its last {window} tokens, so the cache is not a fixed number of "
            f"bytes per token. Give cache_layers= the number of layers that attend to the whole "
            f"chat (all {layers} if your chats stay within the window), and count the windowed "
            f"layers' {window}-token cache apart"
        )
    if any(config.get(key) for key in EXPERT_KEYS) and params is None:
        raise ValueError(
            "this is a mixture-of-experts config: its parameter count needs every "
            "expert, which the Llama formula leaves out. Give params= (the total "
            "parameter count from the model card)"
        )
