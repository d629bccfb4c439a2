"""A real server's start-up, in the order vLLM's worker runs it.

1. Snapshot: the budget is a share of the card's *total* memory (not of what is free).
2. Load the weights: each of the `tp` GPUs holds weights / tp.
3. Profile: a dummy forward pass finds the activation peak, and CUDA graphs are
   estimated; here that is one figure per GPU, the `reserve`.
4. Subtract: the pool is the budget minus weights minus reserve, cut into blocks of 16.
5. Check: the pool must hold one request of `max_model_len` (`longest`), or vLLM
   refuses to start with an error that names both sizes and the longest length
   that would fit.

Every figure is per GPU, as each worker counts it; the `all_` properties add the GPUs up.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.arguments import whole
from kvlesson.memory.floor import BLOCK_TOKENS, MemoryParts, memory_parts, pool_tokens
from kvlesson.memory.specs import GIB, GPU, Model

PROFILED_BYTES = 3e9  # activations, CUDA graphs and workspace: seed 003's assumed 3 GB
VLLM_SHARE = 92  # gpu_memory_utilization's default since v0.20 (0.92; it was 0.90 before)
AUTO = -1  # max_model_len=-1: vLLM searches for the longest length that fits


@dataclass(frozen=True)
class Startup:
    """One launch: the floor plan per GPU, the check, and what the pool holds."""

    parts: MemoryParts
    longest: int
    tokens_exact: int
    needed_bytes: int

    @property
    def tp(self) -> int:
        return self.parts.tp

    @property
    def budget_bytes(self) -> float:
        """What the share leaves each GPU after the profiled reserve: weights and pool."""
        return self.parts.allowed_bytes - self.parts.reserve_bytes

    @property
    def tokens(self) -> int:
        """Tokens one GPU's whole blocks hold: vLLM's "GPU KV cache size"."""
        return self.parts.tokens

    @property
    def starts(self) -> bool:
        """The start-up check: the pool holds one request of the longest length."""
        return self.parts.blocks * self.parts.block_bytes >= self.needed_bytes

    @property
    def concurrency(self) -> float:
        """Requests of the longest length the pool holds at once: vLLM's "Maximum concurrency"."""
        return self.tokens / self.longest

    @property
    def longest_that_fits(self) -> int:
        """The longest request the pool holds: what max_model_len=-1 (or the error) finds."""
        return self.tokens

    @property
    def all_budget_bytes(self) -> float:
        return self.tp * self.budget_bytes

    @property
    def all_pool_bytes(self) -> float:
        return self.tp * self.parts.pool_bytes

    @property
    def all_needed_bytes(self) -> int:
        return self.tp * self.needed_bytes

    def chats_at(self, length: int) -> int:
        """Requests of `length` tokens that fit at once, blocks handed out in whole blocks."""
        per_chat = -(-whole("length", length, 1) // BLOCK_TOKENS)
        return self.parts.blocks // per_chat

    def error(self) -> str | None:
        """vLLM's start-up error for this launch, worded as V1 words it (None if it starts)."""
        if self.starts:
            return None
        if self.parts.blocks == 0:
            return ("ValueError: No available memory for the cache blocks. Try increasing "
                    "`gpu_memory_utilization` when initializing the engine.")
        return (f"ValueError: To serve at least one request with the model's max seq len "
                f"({self.longest}), ({self.needed_bytes / GIB:.2f} GiB KV cache is needed, which "
                f"is larger than the available KV cache memory "
                f"({self.parts.pool_bytes / GIB:.2f} GiB). Based on the available memory, the "
                f"estimated maximum model length is {self.longest_that_fits}. Try increasing "
                f"`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                f"engine.")


def startup(gpu: GPU, model: Model, share: int = VLLM_SHARE, longest: int = 131_072,
            reserve_bytes: float = PROFILED_BYTES, tp: int = 1) -> Startup:
    """Walk vLLM's start-up for `model` on `tp` cards of `gpu` at a whole-percent `share`.

    `longest` is max_model_len; -1 asks for the longest length that fits (at least one block).

    >>> from kvlesson.memory.specs import H100_80GB, LLAMA_31_8B
    >>> startup(H100_80GB, LLAMA_31_8B).tokens
    416096
    """
    parts = memory_parts(share, gpu, model, reserve_bytes, tp)
    if longest == AUTO:
        longest = max(parts.tokens, BLOCK_TOKENS)
    longest = whole("longest", longest, 1)
    exact = pool_tokens(parts.pool_bytes, model, tp, block_tokens=1)
    needed = -(-longest // BLOCK_TOKENS) * parts.block_bytes
    return Startup(parts, longest, exact, needed)
