"""The words of a vLLM start-up log, from 0.6 to 0.33: its figures, its refusals, and the
signs that its pool is not the one the per-token formula sizes.

Every pattern follows vLLM's own format strings, read in the wheels of 0.6.0,
0.6.4.post1, 0.7.3, 0.8.5, 0.9.2, 0.10.2, 0.11.0, 0.14.0, 0.19.0, 0.22.0,
0.28.0, 0.29.0 and 0.33.0 (file and line below are 0.33.0's unless a version
is named; 0.8.0 to 0.8.4's engine failure is read in its users' logs). `vllm_log` reads a
log with them; a line that reads as an error no refusal here names is kept, and the
verdict says this reader does not know its wording (`ERROR_LINE`).
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
    # the cap on running requests: the Mamba refusal, the budget's refusal, the launch's args
    "max_num_seqs": [
        rf"max_num_seqs \({NUMBER}\) exceeds available Mamba",
        rf"greater than or equal to max_num_seqs\s*\({NUMBER}\)",
        rf"['\"]max_num_seqs['\"]:\s*{NUMBER}",
    ],
    "mamba_blocks": [rf"exceeds available Mamba cache\s+blocks \({NUMBER}\)"],
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
    "max_num_seqs",
    "mamba_blocks",
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
        "tensor parallel",
        r"AssertionError: \d+ is not divisible by \d+",
        "a layer could not split its weights evenly over the GPUs: tp must divide the KV "
        "heads (or be a multiple of them) and the MLP's size, as it divides the attention "
        "heads; refused while the model is built",
        "divide() in vllm/distributed/utils.py:51-55, called by "
        "vllm/model_executor/layers/linear.py:497-502,1063-1071,1708",
    ),
    Refusal(
        "max_num_seqs past the Mamba cache blocks",
        r"max_num_seqs \(\d+\) exceeds available Mamba cache\s+blocks",
        "a hybrid model's running requests each hold one block of the pool for their Mamba "
        "(or linear-attention) state while full CUDA graphs are captured (vLLM's default), "
        "and the pool has fewer blocks than max_num_seqs asks for: lower max_num_seqs to at "
        "most the blocks the line names, or raise the share",
        "vllm/config/compilation.py:1510-1532 (resolve_cudagraph_mode_and_sizes); since "
        "vLLM pull request 38270 (2026)",
    ),
    Refusal(
        "token budget below max_num_seqs",
        r"max_num_batched_tokens \(\d+\) must be greater than or equal to max_num_seqs",
        "max_num_batched_tokens, the tokens one step may read, is below max_num_seqs: a "
        "step could not give every running request its next token; refused before anything "
        "loads",
        "vllm/config/scheduler.py:331-336",
    ),
    Refusal(
        "token budget below max_model_len",
        r"max_num_batched_tokens \(\d+\) is smaller than max_model_len",
        "with chunked prefill off a whole prompt must fit in one step, and "
        "max_num_batched_tokens is below max_model_len; refused before anything loads",
        "vllm/config/scheduler.py:318-330",
    ),
    Refusal(
        "share out of range",
        r"gpu_memory_utilization\s+Input should be (?:less than or equal to 1|greater than 0)",
        "gpu_memory_utilization is a fraction of the card, above 0 and at most 1 (0.9, not "
        "90); refused before anything loads",
        "vllm/config/cache.py:215 (Field(default=0.92, gt=0, le=1), checked by pydantic)",
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
        r"EngineCore hit an exception(?:(?!run_busy_loop).){0,3000}?engine_core = EngineCoreProc\(",
        "the engine stopped while it was being built (V1's words before 0.8.5; a traceback "
        "through EngineCoreProc(...), not the running loop); the line that says why is the "
        "error at the traceback's end, if it was pasted",
        'vllm/v1/engine/core.py run_engine_core, 0.8.0 to 0.8.4 ("EngineCore hit an '
        'exception" at core.py:387 in 0.8.4\'s logs; 0.8.5 says "EngineCore failed to start")',
    ),
    Refusal(
        "engine failed to start",
        r"EngineCore failed to start|Engine core initialization failed|WorkerProc "
        r"initialization failed|WorkerProc failed to start",
        "the engine stopped during start-up; the line that says why is not in what was "
        "pasted (look for the error just above the traceback)",
        "vllm/v1/engine/core.py:1584, vllm/v1/engine/utils.py:1474, "
        "vllm/v1/executor/multiproc_executor.py:891,1057",
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
# An error line: an exception's name and its message (ValueError: ..., torch.OutOfMemoryError:
# ...). One that no refusal names is a wording this reader does not know: the verdict says
# so and quotes it, rather than call the text "not a start-up log".
ERROR_LINE = r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s+\S"
