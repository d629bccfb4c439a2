"""Precisions: how many bits the weights and the cache keep per number.

The names are the ones a vLLM user types: `--dtype bfloat16` or `float16` for
the weights (`--quantization fp8` for 8-bit weights), and `--kv-cache-dtype`
for the cache. The cache's "auto" means the precision the model computes in:
BF16 or FP16 weights compute in their own precision, and FP8 weights are
multiplied out in BF16, so their "auto" cache stays at 16 bits (vLLM's own
rule: "auto" uses the model's data type, which quantized weights do not change).
"""

from __future__ import annotations

from dataclasses import dataclass

# Bits per weight, by the names vLLM's --dtype and --quantization take.
WEIGHT_BITS = {"bf16": 16, "bfloat16": 16, "fp16": 16, "float16": 16, "half": 16,
               "fp32": 32, "float32": 32, "float": 32, "fp8": 8}
# Bits per cached number for --kv-cache-dtype. "fp8" is fp8_e4m3 on NVIDIA cards.
CACHE_BITS = {"bf16": 16, "bfloat16": 16, "fp16": 16, "float16": 16,
              "fp8": 8, "fp8_e4m3": 8, "fp8_e5m2": 8}
COMPUTE_BITS = 16  # FP8 weights compute in BF16, so an "auto" cache beside them is 16-bit


@dataclass(frozen=True)
class Precisions:
    """Bytes per weight and bits per cached number, from the names a user types."""

    weight_bytes: int
    cache_bits: int


def precisions(weights: str, cache: str = "auto") -> Precisions:
    """The precisions that `--dtype`/`--quantization` `weights` and `--kv-cache-dtype` `cache` give.

    >>> precisions("fp8", "auto")
    Precisions(weight_bytes=1, cache_bits=16)
    """
    weight_bits = _lookup("weights", weights, WEIGHT_BITS)
    if isinstance(cache, str) and cache.lower() == "auto":
        cache_bits = COMPUTE_BITS if weight_bits < COMPUTE_BITS else weight_bits
    else:
        cache_bits = _lookup("cache", cache, CACHE_BITS, extra=("auto",))
    return Precisions(weight_bits // 8, cache_bits)


def _lookup(name: str, value: object, table: dict[str, int], extra: tuple[str, ...] = ()) -> int:
    allowed = ", ".join([*extra, *table])
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a precision name ({allowed}), "
                        f"not {type(value).__name__} {value!r}")
    if value.lower() not in table:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return table[value.lower()]
