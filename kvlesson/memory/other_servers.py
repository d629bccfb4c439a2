"""Other servers' versions of the same three settings, and two servers on one card.

The same words mean different budgets from server to server:

* vLLM's `gpu_memory_utilization` is a share of the card's total memory, for
  everything the server holds (weights, workspace and cache);
* TensorRT-LLM's `free_gpu_memory_fraction` (default 0.9) is a share of the
  memory still free after the weights load *and* a warm-up run has found the
  activations' peak, and all of it goes to the cache (PyTorch backend,
  `KvCacheCreator` in tensorrt_llm/_torch/pyexecutor/_util.py: (total - peak) x
  fraction, the peak being weights, activations and what is outside torch);
* llama.cpp's `--ctx-size` is the context of all `--parallel` slots together,
  split between them only when the slot count is given and the cache is not
  unified, and padded to a multiple of 256 (src/llama-context.cpp); the
  server's default is 4 slots sharing one unified cache, each allowed the
  whole context (tools/server/server.cpp).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.arguments import flag, of_type, positive, whole
from kvlesson.memory.specs import GPU, Model

LLAMA_CPP_PAD = 256  # GGML_PAD(n_ctx, 256) and GGML_PAD(n_ctx_seq, 256), src/llama-context.cpp
# The most slots (sequences) a llama.cpp context takes: LLAMA_MAX_SEQ in src/llama-cparams.h;
# more is refused, "n_seq_max must be <= 256" (llama_init_from_model, src/llama-context.cpp).
LLAMA_MAX_SEQ = 256
LLAMA_CPP_AUTO_SLOTS = 4  # --parallel -1 (the server's default): 4 slots, kv_unified = true


def pad(tokens: int, to: int = LLAMA_CPP_PAD) -> int:
    """`tokens` rounded up to a multiple of `to`, as ggml's GGML_PAD does."""
    return -(-tokens // to) * to


@dataclass(frozen=True)
class LlamaCppContext:
    """llama.cpp's cache for `slots` slots: the context it sizes (`n_ctx`, all slots
    together) and the tokens each slot may use (`n_ctx_seq`, at most the model's own)."""

    n_ctx: int
    slots: int
    unified: bool
    per_slot: int


def llama_cpp_context(
    ctx_size: int,
    parallel: int | None = None,
    kv_unified: bool = False,
    train_ctx: int | None = None,
) -> LlamaCppContext:
    """The context llama-server sizes for `--ctx-size ctx_size` and `--parallel parallel`.

    `parallel=None` is the server's default (-1, auto): 4 slots with a unified cache.
    With an explicit slot count and no `--kv-unified`, the padded context is split:
    each slot gets (n_ctx // slots) padded up to 256 again, and n_ctx becomes slots x
    that (llama.cpp warns "rounding down", though the total can grow). A slot is also
    held to the model's training context `train_ctx`, when given. More than 256 slots are
    refused, as llama.cpp refuses them (ValueError).

    >>> llama_cpp_context(262_144, 10)
    LlamaCppContext(n_ctx=263680, slots=10, unified=False, per_slot=26368)
    """
    ctx_size = whole("ctx_size", ctx_size, 1)
    kv_unified = flag("kv_unified", kv_unified)
    if parallel is None:
        parallel, kv_unified = LLAMA_CPP_AUTO_SLOTS, True
    parallel = whole("parallel", parallel, 1)
    if parallel > LLAMA_MAX_SEQ:
        raise ValueError(
            f"llama.cpp refuses --parallel {parallel}: n_seq_max must be <= {LLAMA_MAX_SEQ} "
            f"(its most slots, LLAMA_MAX_SEQ)"
        )
    n_ctx = pad(ctx_size)
    per_slot = n_ctx if kv_unified else pad(n_ctx // parallel)
    if not kv_unified:
        n_ctx = per_slot * parallel
    if train_ctx is not None:
        per_slot = min(per_slot, whole("train_ctx", train_ctx, 1))
    return LlamaCppContext(n_ctx, parallel, kv_unified, per_slot)


def llama_cpp_slot_context(
    ctx_size: int, parallel: int | None = None, kv_unified: bool = False
) -> int:
    """Tokens each llama.cpp slot may use: --ctx-size over --parallel slots, padded to 256.

    >>> llama_cpp_slot_context(98_304, 3), llama_cpp_slot_context(100, 3)
    (32768, 256)
    """
    return llama_cpp_context(ctx_size, parallel, kv_unified).per_slot


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
    """The same `fraction` (0.9) read by vLLM and by TensorRT-LLM, on the card as measured.

    vLLM: fraction x total - weights - the profiled peak (`reserve_bytes`).
    TensorRT-LLM: fraction x (total - weights - the warm-up's peak), the same peak.
    """
    fraction = positive("fraction", fraction)
    if fraction > 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    of_type("gpu", gpu, GPU)
    of_type("model", model, Model)
    reserve = positive("reserve_bytes", reserve_bytes, zero_ok=True)
    total = gpu.total_bytes
    vllm = fraction * total - model.weights_bytes - reserve
    return CacheBudgets(vllm, fraction * (total - model.weights_bytes - reserve))


TGI_WIGGLE_ROOM = 0.90  # TGI_WIGGLE_ROOM's default, server/.../models/globals.py:32 (v3.3.7)


def tgi_kv_bytes(
    free_bytes: float, total_bytes: float, fraction: float = 1.0, wiggle: float = TGI_WIGGLE_ROOM
) -> float:
    """The memory TGI (v3.3.7) gives its KV blocks after its warm-up batch: what is free then,
    less (1 - wiggle x fraction) of the card's total, never below 0. `fraction` is
    `--cuda-memory-fraction` (default 1.0), so by default a tenth of the card stays out.
    (get_cuda_free_memory, server/text_generation_server/utils/import_utils.py:13-17, called
    with MEMORY_FRACTION * TGI_WIGGLE_ROOM in models/flash_causal_lm.py:1556-1562; the warm-up
    batch's own blocks are added back.)

    >>> round(tgi_kv_bytes(60e9, 80e9) / 1e9, 1)
    52.0
    """
    free = positive("free_bytes", free_bytes, zero_ok=True)
    total = positive("total_bytes", total_bytes)
    for name, value in (("fraction", fraction), ("wiggle", wiggle)):
        if not 0 < positive(name, value) <= 1:
            raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return max(0.0, free - (1 - wiggle * fraction) * total)
