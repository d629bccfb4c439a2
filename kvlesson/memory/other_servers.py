"""Other servers' versions of the same three settings, and two servers on one card.

The same words mean different budgets from server to server:

* vLLM's `gpu_memory_utilization` is a share of the card's total memory, for
  everything the server holds (weights, workspace and cache);
* TensorRT-LLM's `free_gpu_memory_fraction` (v1.4) is a share of the memory
  still free once the weights are loaded, and all of it goes to the cache;
* llama.cpp's `--ctx-size` is the context of all `--parallel` slots together.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.arguments import of_type, positive, whole
from kvlesson.memory.specs import GPU, Model


def llama_cpp_slot_context(ctx_size: int, parallel: int) -> int:
    """Tokens each llama.cpp slot gets: --ctx-size split over --parallel slots.

    >>> llama_cpp_slot_context(98_304, 3)
    32768
    """
    ctx_size = whole("ctx_size", ctx_size, 1)
    parallel = whole("parallel", parallel, 1)
    return ctx_size // parallel


def share_each(servers: int, share: float = 0.9) -> float:
    """The gpu_memory_utilization each of `servers` vLLM servers on one card should ask for:
    the share is of the card's total, so they split it (0.45 each for two, not 0.9 twice).

    >>> share_each(2)
    0.45
    """
    servers = whole("servers", servers, 1)
    share = positive("share", share)
    if share > 1:
        raise ValueError(f"share must be a fraction in (0, 1], got {share!r}")
    return round(share / servers, 4)


@dataclass(frozen=True)
class CacheBudgets:
    """The cache each server's fraction gives on one card, bytes."""

    vllm_bytes: float
    tensorrt_llm_bytes: float


def cache_budgets(fraction: float, gpu: GPU, model: Model, reserve_bytes: float) -> CacheBudgets:
    """The same `fraction` (0.9) read by vLLM (of the total, minus weights and
    reserve) and by TensorRT-LLM (of what is free after the weights load)."""
    fraction = positive("fraction", fraction)
    if fraction > 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    of_type("gpu", gpu, GPU)
    of_type("model", model, Model)
    reserve = positive("reserve_bytes", reserve_bytes, zero_ok=True)
    free_after_weights = gpu.memory_bytes - model.weights_bytes
    vllm = fraction * gpu.memory_bytes - model.weights_bytes - reserve
    return CacheBudgets(vllm, fraction * free_after_weights)
