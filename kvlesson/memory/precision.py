"""Precisions: how many bits the weights and the cache keep per number.

The names are the ones a vLLM user types: `--dtype bfloat16` or `float16` for
the weights (`--quantization fp8` for 8-bit weights), and `--kv-cache-dtype`
for the cache. The cache's "auto" means the model's data type (`--dtype`,
`model_config.dtype`; vllm/utils/torch_utils.py, v0.33.0), which quantized
weights do not change: FP8 weights beside a BF16 model keep a 16-bit cache,
although on an H100 they are multiplied in FP8. One exception: a checkpoint
that declares an FP8 KV cache (ModelOpt's `kv_cache_quant_algo`, or
llm-compressor's `kv_cache_scheme`) gets an FP8 cache under "auto".
"""

from __future__ import annotations

from dataclasses import dataclass

# Bits per weight, by the names vLLM's --dtype and --quantization take.
WEIGHT_BITS = {
    "bf16": 16,
    "bfloat16": 16,
    "fp16": 16,
    "float16": 16,
    "half": 16,
    "fp32": 32,
    "float32": 32,
    "float": 32,
    "fp8": 8,
}
# Bits per cached number for --kv-cache-dtype. "fp8" is fp8_e4m3 on NVIDIA cards.
CACHE_BITS = {
    "bf16": 16,
    "bfloat16": 16,
    "fp16": 16,
    "float16": 16,
    "fp8": 8,
    "fp8_e4m3": 8,
    "fp8_e5m2": 8,
}
MODEL_DTYPE_BITS = 16  # the model's dtype (BF16 or FP16) beside FP8 weights: "auto"'s cache


@dataclass(frozen=True)
class Precisions:
    """Bytes per weight and bits per cached number, from the names a user types."""

    weight_bytes: int
    cache_bits: int


def precisions(weights: str, cache: str = "auto", declared_cache: str | None = None) -> Precisions:
    """The precisions that `--dtype`/`--quantization` `weights` and `--kv-cache-dtype` `cache`
    give; `declared_cache` is the KV-cache precision the checkpoint declares (an FP8 checkpoint
    made with ModelOpt or llm-compressor may), which "auto" follows.

    >>> precisions("fp8", "auto"), precisions("fp8", "auto", declared_cache="fp8")
    (Precisions(weight_bytes=1, cache_bits=16), Precisions(weight_bytes=1, cache_bits=8))
    """
    weight_bits = _lookup("weights", weights, WEIGHT_BITS)
    if isinstance(cache, str) and cache.lower() == "auto":
        if declared_cache is not None:
            cache_bits = _lookup("declared_cache", declared_cache, CACHE_BITS)
        else:
            cache_bits = max(weight_bits, MODEL_DTYPE_BITS)
    else:
        cache_bits = _lookup("cache", cache, CACHE_BITS, extra=("auto",))
    return Precisions(weight_bits // 8, cache_bits)


def _lookup(name: str, value: object, table: dict[str, int], extra: tuple[str, ...] = ()) -> int:
    allowed = ", ".join([*extra, *table])
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a precision name ({allowed}), not {type(value).__name__} {value!r}"
        )
    if value.lower() not in table:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return table[value.lower()]


# turboquant_k8v4, vLLM 0.33's cache of FP8 keys and 4-bit values: per head and token, the key
# takes head_size bytes, the value ceil(head_size x 4 / 8) bytes and 4 more for its scale and
# zero (two FP16 numbers) (model_executor/layers/quantization/turboquant/config.py:128-175).
K8V4_SCALE_ZERO_BYTES = 4
# A dense model keeps its first and last 2 attention layers at the model's own dtype under
# every turboquant_* cache (TurboQuantConfig.get_boundary_skip_layers(n=2), config.py:178-213,
# added to kv_cache_dtype_skip_layers by engine/arg_utils.py:2334-2351); a hybrid model keeps
# none back (the function returns no layer when model_config.is_hybrid).
K8V4_BOUNDARY_LAYERS = 2


def k8v4_slot_bytes(head_size: int) -> int:
    """Bytes one head's key and value take in turboquant_k8v4, per token: head + head/2 + 4."""
    return head_size + -(-head_size * 4 // 8) + K8V4_SCALE_ZERO_BYTES


def k8v4_gain_over_fp8(
    layers: int, head_size: int, hybrid: bool = False, model_bytes: int = 2
) -> float:
    """How many more tokens a pool holds in turboquant_k8v4 than in fp8 (0.087: 8.7% more),
    for a model whose `layers` attention layers keep a cache of heads of `head_size`: a dense
    model keeps its first and last two of them at `model_bytes` a number (BF16: 2); a hybrid
    one compresses every one.

    >>> round(k8v4_gain_over_fp8(32, 128), 3), round(k8v4_gain_over_fp8(16, 128, hybrid=True), 3)
    (0.087, 0.306)
    """
    edge = 0 if hybrid else min(K8V4_BOUNDARY_LAYERS, layers // 2)
    kept = len(set(range(edge)) | set(range(layers - edge, layers)))
    k8v4 = (layers - kept) * k8v4_slot_bytes(head_size) + kept * 2 * head_size * model_bytes
    return layers * 2 * head_size / k8v4 - 1
