"""Model.from_hf_config: head_dim, and the configs it refuses rather than size wrongly."""

from __future__ import annotations

import pytest

import kvlesson as kv
from kvlesson.memory.specs import LLAMA_31_8B_CONFIG

# Qwen3 0.6B's config.json: head_dim 128 although hidden_size / heads is 64, tied embeddings.
QWEN3_06B = {
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "model_type": "qwen3",
    "sliding_window": None,
    "use_sliding_window": False,
}
# A Qwen3-Next-style hybrid: linear attention in three layers of four.
HYBRID = {
    **QWEN3_06B,
    "num_hidden_layers": 48,
    "full_attention_interval": 4,
    "layer_types": ["linear_attention"] * 3 * 12 + ["full_attention"] * 12,
}
MLA = {**LLAMA_31_8B_CONFIG, "kv_lora_rank": 512, "qk_rope_head_dim": 64}
WINDOWED = {**LLAMA_31_8B_CONFIG, "sliding_window": 4096}
MOE = {**LLAMA_31_8B_CONFIG, "num_local_experts": 8}


def test_head_dim_from_the_config():
    model = kv.Model.from_hf_config(QWEN3_06B)
    assert model.head_size == 128
    assert model.bytes_per_token == 2 * 28 * 8 * 128 * 2 == 114_688
    assert model.params == 596_049_920  # Qwen3 0.6B's count, q and k norms included


def test_a_multimodal_config_is_read_from_its_text_config():
    assert (
        kv.Model.from_hf_config({"text_config": LLAMA_31_8B_CONFIG}).params == kv.LLAMA_31_8B.params
    )


@pytest.mark.parametrize(
    "config, words",
    [
        (HYBRID, ["hybrid model", "12 full_attention layers", "cache_layers=", "params="]),
        (MLA, ["MLA (kv_lora_rank=512)", "latent of 576 numbers", "head_size=288"]),
        (WINDOWED, ["sliding-window attention (window 4096 tokens)", "cache_layers="]),
        (
            {
                **LLAMA_31_8B_CONFIG,
                "layer_types": ["sliding_attention", "full_attention"] * 16,
                "sliding_window": 1024,
            },
            ["sliding-window attention (window 1024 tokens)"],
        ),
        (MOE, ["mixture-of-experts", "params="]),
    ],
)
def test_configs_it_cannot_size_are_refused(config, words):
    with pytest.raises(ValueError) as error:
        kv.Model.from_hf_config(config)
    for word in words:
        assert word in str(error.value)


def test_a_hybrid_model_with_its_cache_layers_and_params():
    model = kv.Model.from_hf_config(HYBRID, cache_layers=12, params=80_000_000_000)
    assert model.layers == 12 and model.params == 80_000_000_000
    assert model.bytes_per_token == 2 * 12 * 8 * 128 * 2
    with pytest.raises(ValueError, match=r"cache_layers must be in 1\.\.48, got 49"):
        kv.Model.from_hf_config(HYBRID, cache_layers=49, params=1)


def test_a_windowed_model_with_its_full_layers():
    assert kv.Model.from_hf_config(WINDOWED, cache_layers=32) == kv.LLAMA_31_8B


def test_sliding_window_turned_off_is_a_plain_model():
    assert kv.Model.from_hf_config({**WINDOWED, "use_sliding_window": False}) == kv.LLAMA_31_8B


def test_moe_with_params():
    assert kv.Model.from_hf_config(MOE, params=46_702_792_704).params == 46_702_792_704
