"""vLLM's defaults, as of the release the course models, and the version each came in.

Every rule and default the course states about vLLM holds for `VLLM_RELEASE`,
read in that release's wheel (file and line in docs/fidelity.md). The ones
that changed recently carry the version they came in, so a reader running an
older server knows what differs.

The two caps of the V1 engine are set by card, for `vllm serve` and for the
offline `LLM` class (`EngineArgs.get_batch_defaults`, vllm/engine/arg_utils.py):

* `max_num_batched_tokens`, the tokens one step may read (the token budget):
  it bounds a step's arithmetic, so it trades a long prompt's first token
  against the gaps of the replies being written beside it;
* `max_num_seqs`, the requests that may run at once: it bounds the decode
  batch and the CUDA graphs captured for it.

Cards of 70 GiB or more get the larger defaults, unless the card's name says
"a100" (or it is a GB10): the test is by name, not by memory, because a large
token budget was measured to lower the A100's throughput (vLLM PR #17885, named
in the code at vllm/engine/arg_utils.py:2969-2990). So an A100 80GB, with its
79.32 GiB, stays on the small tier beside cards of 24 GB. Cards of 160 GiB or
more get the largest.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.arguments import of_type
from kvlesson.memory.specs import GIB, GPU

VLLM_RELEASE = "0.33.0"  # the release the course models (PyPI's newest when written)
SHARE_DEFAULT = 92  # gpu_memory_utilization 0.92 since 0.20.0 (0.90 before), config/cache.py
SHARE_BEFORE_0_20 = 90
BLOCK_SIZE = 16  # DEFAULT_BLOCK_SIZE, config/cache.py (platforms may change it)
# Since 0.19.0 a waiting request joins only if its whole prompt fits
# (SchedulerConfig.scheduler_reserve_full_isl, config/scheduler.py).
WHOLE_PROMPT_SINCE = "0.19.0"
NULL_BLOCK_SINCE = "0.29.0"  # one block held back before the start-up check (kv_cache_planning.py)
# vLLM's own admission cap: --max-num-queued-reqs, requests in flight (waiting or running)
# past it are refused with HTTP 503 (config/scheduler.py:92-103, v1/engine/async_llm.py:325-369,
# exceptions.py:162-174); absent in 0.28.0. None: no cap, the default.
ADMISSION_CAP_SINCE = "0.29.0"
# The memory profiler counts the CUDA graphs' estimate: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
# defaults to 1 in 0.20.0's envs.py (0 in 0.19.0), though vLLM's log says "since v0.21.0".
CUDA_GRAPH_ESTIMATE_SINCE = "0.20.0"
TOKENS_AS_CONCURRENCY_SINCE = "0.20.1"  # "GPU KV cache size" = concurrency x max_model_len
# Tiers of EngineArgs.get_batch_defaults, by the per-GPU total memory:
LARGEST_TIER_GIB = 160  # B200 / B300 class (since 0.28.0)
LARGE_TIER_GIB = 70  # H100 / H200 class, unless the card's name says A100
# (max_num_batched_tokens for vllm serve, for the LLM class, max_num_seqs) per tier
TIERS = {
    "largest": (16_384, 16_384, 1_024),
    "large": (8_192, 16_384, 1_024),
    "other": (2_048, 8_192, 256),
}


@dataclass(frozen=True)
class V1Defaults:
    """What vLLM V1 starts with on a card when the flags are not given."""

    tier: str
    max_num_batched_tokens: int  # vllm serve (the OpenAI-compatible server)
    max_num_batched_tokens_offline: int  # the LLM class
    max_num_seqs: int
    gpu_memory_utilization: float = SHARE_DEFAULT / 100
    block_size: int = BLOCK_SIZE
    prefix_caching: bool = True  # enable_prefix_caching, for decoder models (config/cache.py)
    chunked_prefill: bool = True  # on by default for decoder models; off with only a warning
    long_prefill_token_threshold: int = 0  # 0: no cap per prompt (config/scheduler.py)
    watermark: float = 0.0  # no blocks kept free at admission (config/scheduler.py)


def v1_defaults(gpu: GPU) -> V1Defaults:
    """vLLM V1's defaults on `gpu` (as of VLLM_RELEASE), from its memory and its name.

    >>> from kvlesson.memory.specs import A100_80GB, H100_80GB
    >>> v1_defaults(H100_80GB).max_num_seqs, v1_defaults(A100_80GB).max_num_seqs
    (1024, 256)
    """
    of_type("gpu", gpu, GPU)
    memory = gpu.total_bytes
    if memory >= LARGEST_TIER_GIB * GIB:
        tier = "largest"
    elif memory >= LARGE_TIER_GIB * GIB and "a100" not in gpu.name.lower():
        tier = "large"
    else:
        tier = "other"
    return V1Defaults(tier, *TIERS[tier])


# A hybrid model (Mamba or linear-attention layers beside attention) keeps one block of the
# pool per running request for its state while vLLM captures full CUDA graphs, its default
# (cudagraph_mode FULL_AND_PIECEWISE, config/vllm.py:311); since vLLM pull request 38270 it
# refuses to start when max_num_seqs passes the pool's blocks ("max_num_seqs (N) exceeds
# available Mamba cache blocks (M)", config/compilation.py:1510-1532 in 0.33.0). Public logs:
# 856 blocks for Qwen3.6-27B in FP8 on one H100 at 0.95, 524 for Nemotron 120B on two H100s.
MAMBA_BLOCKS_SEEN = {"a 27B hybrid in FP8 on one H100 at 0.95": 856, "a 120B on two H100s": 524}


def hybrid_seqs_warning(gpu: GPU, max_num_seqs: int | None = None) -> str:
    """Why a hybrid model may not start on `gpu` at `max_num_seqs` (None: vLLM's default on
    that card, 1,024 on an H100): one pool block a running request, which the per-token
    formula cannot count for a hybrid pool, so the course warns instead of predicting.

    >>> from kvlesson.memory.specs import H100_80GB
    >>> hybrid_seqs_warning(H100_80GB)[:58]
    'A hybrid model may not start at max_num_seqs 1,024 (vLLM 0'
    """
    seqs = v1_defaults(gpu).max_num_seqs if max_num_seqs is None else max_num_seqs
    which = "vLLM 0.33's default on this card" if max_num_seqs is None else "as set"
    seen = "; ".join(f"{blocks:,} for {what}" for what, blocks in MAMBA_BLOCKS_SEEN.items())
    return (
        f"A hybrid model may not start at max_num_seqs {seqs:,} ({which}): while vLLM "
        f"captures full CUDA graphs, its default, each running request holds one block of the "
        f"pool for its Mamba state, and vLLM refuses to start when max_num_seqs passes the "
        f"pool's blocks, which a long max_model_len makes few ({seen}). The error names the "
        f"blocks: start again with --max-num-seqs at most that."
    )
