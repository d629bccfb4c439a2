"""The words of a vLLM start-up log, from 0.6 to 0.33: its figures, its refusals, and the
signs that its pool is not the one the per-token formula sizes.

Every pattern follows vLLM's own format strings, read in the wheels of 0.6.0,
0.6.4.post1, 0.7.3, 0.8.5, 0.9.2, 0.10.2, 0.11.0, 0.14.0, 0.19.0, 0.22.0,
0.28.0, 0.29.0 and 0.33.0 (file and line below are 0.33.0's unless a version
is named). `vllm_log` reads a log with them.
"""

from __future__ import annotations

from dataclasses import dataclass

NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)"
# Each figure and the wordings that give it, the newest first where they differ.
FIGURES = {
    "weights_gib": [
        rf"Loading model weights took\s+{NUMBER}\s*Gi?B",
        rf"Model loading took\s+{NUMBER}\s*Gi?B",
        rf"model weights take\s+{NUMBER}\s*GiB",
    ],
    "kv_cache_gib": [
        rf"Available KV cache memory:\s*{NUMBER}\s*GiB",
        rf"the rest of the memory reserved for KV Cache is\s+{NUMBER}\s*GiB",
        rf"kv_cache_size\s*=\s*{NUMBER}\s*GiB",
        rf"available_kv_cache_memory\s+{NUMBER}\s*GiB",
    ],
    "total_gib": [
        rf"total_gpu_memory\s*[(=]?\s*{NUMBER}\s*GiB",
        rf"Free memory on device[^(\n]*\(\s*[\d.]+\s*/\s*{NUMBER}\s*GiB\)",
    ],
    "share": [
        rf"gpu_memory_utilization\s*[(=]?\s*{NUMBER}(?![\d.])",
        rf"[Dd]esired GPU memory utilization(?: is)?\s*\(\s*{NUMBER},",
    ],
    "kv_tokens": [
        rf"KV cache size:\s*{NUMBER}\s+tokens",
        rf"maximum number of tokens that can be stored in KV cache\s*\({NUMBER}\)",
    ],
    # A block count must end at a comma or a line's end: a log cut inside it gives None.
    "gpu_blocks": [rf"(?:#\s*|^)(?:GPU|cuda|CUDA)\s+blocks:\s*{NUMBER}(?=\s*,|[ \t]*\r?\n)"],
    "concurrency_len": [rf"Maximum concurrency for\s+{NUMBER}\s+tokens per request"],
    "max_concurrency": [rf"Maximum concurrency for\s+[\d,]+\s+tokens per request:\s*{NUMBER}\s*x"],
    # 0.7's V1 error wrote "GB" for what were GiB
    "needed_gib": [rf"\(?{NUMBER}\s*Gi?B KV\s+cache is needed"],
    "available_gib": [rf"larger than the available KV\s+cache\s+memory\s*\({NUMBER}\s*Gi?B\)"],
    "estimated_max_len": [rf"estimated maximum model length is\s+{NUMBER}\."],
    "refused_len": [
        rf"max seq len\s*\({NUMBER}\)",
        rf"User-specified max_model_len \({NUMBER}\) is greater",
    ],
    # the page (block) size a log states: the hybrid alignment, a flag, a TPU cache's shape
    "page_tokens": [
        rf"Setting attention block size to\s+{NUMBER}\s+tokens",
        rf"['\"]block_size['\"]:\s*{NUMBER}",
        rf"--block[-_]size[ =]+{NUMBER}",
        rf"shape=\d+\s*\*\s*\(\d+,\s*{NUMBER},",
    ],
}
WHOLE = {
    "kv_tokens",
    "gpu_blocks",
    "concurrency_len",
    "estimated_max_len",
    "refused_len",
    "page_tokens",
}


@dataclass(frozen=True)
class Refusal:
    """One way vLLM stops at start-up: how its log says it, what it means, and where."""

    name: str
    pattern: str
    meaning: str
    source: str


REFUSALS = (
    Refusal(
        "free memory below the share",
        r"Free memory on device.{0,80}?on startup is less than",
        "another process held part of the card when vLLM started: what was free was less "
        "than the share asked for (the share is of the card's total, not of what is free)",
        "vllm/v1/worker/utils.py:740-770 (request_memory); since 0.9 (absent in 0.8.5)",
    ),
    Refusal(
        "longer than the model allows",
        r"User-specified max_model_len \(\d+\) is greater than the derived max_model_len",
        "max_model_len passes the length the model's config allows; refused before anything loads",
        "vllm/config/model.py:2655-2680; the same check since 0.6 (vllm/config.py:1764 in 0.6.0)",
    ),
    Refusal(
        "tensor parallel",
        r"Total number of attention heads \(\d+\) must be divisible by tensor parallel",
        "the tensor-parallel size does not divide the attention heads; refused before "
        "anything loads",
        "vllm/config/model.py:1557-1564",
    ),
    Refusal(
        "out of memory",
        r"(?:CUDA|HIP) out of memory|OutOfMemoryError",
        "PyTorch could not place a tensor on the card: the weights (or the profiling run) "
        "did not fit before vLLM reached its cache check",
        "PyTorch's CUDA allocator, not vLLM's words",
    ),
    Refusal(
        "memory profiling",
        r"Error in memory profiling",
        "the free memory changed while vLLM profiled (another process let go of memory), "
        "so it could not measure what profiling took",
        "vllm/v1/worker/gpu_worker.py:731-740 (0.33.0); vllm/worker/worker.py:232 (0.6.0)",
    ),
    Refusal(
        "no room for a cache",
        r"No available memory for the cache blocks",
        "the share, less the weights and what profiling took, left no memory for the KV cache",
        "vllm/v1/core/kv_cache_planning.py:50-65 (0.33.0); vllm/worker/worker.py:471 (V0, "
        "0.6.0 to 0.10.2)",
    ),
    Refusal(
        "auto-fit found no room",
        r"Cannot auto-fit max_model_len",
        "max_model_len=-1 asked for the longest length that fits, and not one token does",
        "vllm/v1/core/kv_cache_planning.py:1380-1384; since 0.14",
    ),
    Refusal(
        "one request does not fit",
        r"To serve at least one request with the models?'s max seq len",
        "the pool, less the null block, cannot hold one request of max_model_len tokens",
        'vllm/v1/core/kv_cache_planning.py:66-88 (0.33.0); "models\'s" and "GB" in '
        "0.7.3's vllm/v1/core/kv_cache_utils.py:466, \"model's\" since 0.22",
    ),
    Refusal(
        "one request does not fit",
        r"max seq len \(\d+\) is larger than the maximum number of tokens that can be\s+"
        r"stored in KV cache",
        "the pool cannot hold one request of max_model_len tokens (the V0 engine's check)",
        "vllm/worker/worker.py:474-482 (0.6.0 to 0.10.2, V0)",
    ),
    Refusal(
        "engine failed to start",
        r"EngineCore failed to start|Engine core initialization failed",
        "the engine stopped during start-up; the line that says why is not in what was "
        "pasted (look for the error just above the traceback)",
        "vllm/v1/engine/core.py:1584 and vllm/v1/engine/utils.py:1474",
    ),
)

# Signs that the pool holds more than a KV cache per token: a hybrid model's layers of
# linear attention or Mamba keep a fixed state per request in the same pool
# (MambaSpec.max_memory_usage_bytes, vllm/v1/kv_cache_interface.py:1135-1141, counted in the
# concurrency by vllm/v1/core/kv_cache_utils.py:1061-1094). The model names are families
# whose configs are hybrid (Qwen3-Next and Qwen3.5 on: Gated DeltaNet; Jamba, Nemotron-H,
# Falcon-H1, Granite 4.0 H: Mamba; Kimi Linear).
HYBRID_SIGNS = (
    r"Setting attention block size to \d+ tokens to ensure that\s+attention page",
    r"Padding mamba page size",
    r"\bmamba\b",
    r"[Gg]ated ?[Dd]elta ?[Nn]et",
    r"qwen3(?:\.[5-9]|[-_]next)",
    r"\bjamba",
    r"nemotron[-_]h\b",
    r"falcon[-_]h1",
    r"granite[-_]4\.0[-_]h",
    r"kimi[-_]linear",
)
# Signs of a TPU: its backend sets its own page size (tpu-inference, vLLM's Pallas backend).
TPU_SIGNS = (r"\bTPU\b", r"\btpu_\w+\.py", r"\bPJRT\b", r"[Pp]allas")
# A line that speaks of the cache or its blocks: one that no figure's wording read is an
# unknown wording, and says so.
CACHE_WORDS = r"(?i)kv[ _-]?cache|\bblocks?:|concurrency|total tokens|#tokens|\bn_ctx"
