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
