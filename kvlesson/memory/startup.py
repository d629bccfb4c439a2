"""A real server's start-up, in the order vLLM 0.33's worker runs it.

0. Before anything: a tensor-parallel size the heads do not split over, or a
   `max_model_len` past what the model's config allows, is refused in vLLM's
   words (`config_refusals`); `max_model_len=-1` starts from that config length.
1. Snapshot: the budget is a share of the card's *total* memory, the total
   `cudaMemGetInfo` reports (the card as measured, not its data sheet), not of
   what is free.
2. Load the weights: each of the `tp` GPUs holds weights / tp. Weights larger
   than the card itself stop the launch here, with PyTorch's out-of-memory
   error, before any profiling or cache check.
3. Profile: a dummy forward pass finds the activation peak, and CUDA graphs are
   estimated; here that is one figure per GPU, the `reserve`.
4. Subtract: the pool is the budget minus weights minus reserve, cut into
   blocks of 16 tokens.
5. Check: one block is held back as the null block (since 0.29); the rest
   must hold one request of `max_model_len` (`longest`), or vLLM refuses to
   start with an error that names both sizes and the longest length that fits.

Then vLLM logs the pool as "GPU KV cache size: N tokens, Maximum concurrency for
L tokens per request: C x": C is the blocks (null block included) over the
blocks one request of L takes, and N is C x L (since 0.20.1), which is blocks x
16 only when L is a multiple of 16 and every layer keeps a full cache.

Every figure is per GPU, as each worker counts it; the `all_` properties add the GPUs up.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.arguments import whole
from kvlesson.memory.floor import BLOCK_TOKENS, MemoryParts, memory_parts, pool_tokens
from kvlesson.memory.specs import GPU, Model, as_measured
from kvlesson.memory.units import format_gib
from kvlesson.memory.vllm_defaults import SHARE_DEFAULT, hybrid_seqs_warning

PROFILED_BYTES = 3e9  # activations, CUDA graphs and workspace: seed 003's assumed 3 GB
VLLM_SHARE = SHARE_DEFAULT  # gpu_memory_utilization's default since v0.20 (0.92; 0.90 before)
AUTO = -1  # max_model_len=-1: the longest length that fits, at most the config's own
DOCS = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."


@dataclass(frozen=True)
class Startup:
    """One launch: the floor plan per GPU (the card as vLLM measures it), the check, and
    what the pool holds."""

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
    def blocks(self) -> int:
        """Blocks of one GPU's pool, the null block included (vLLM's num_gpu_blocks)."""
        return self.parts.blocks

    @property
    def usable_blocks(self) -> int:
        """Blocks requests can hold: one is the null block, held back since 0.29."""
        return max(self.blocks - 1, 0)

    @property
    def per_request_blocks(self) -> int:
        """Blocks one request of the longest length takes."""
        return -(-self.longest // BLOCK_TOKENS)

    @property
    def check_bytes(self) -> float:
        """What the start-up check holds the request against: the pool less one block."""
        return self.parts.pool_bytes - self.parts.block_bytes

    @property
    def loads(self) -> bool:
        """Step 2: each GPU's part of the weights fits on the card at all. (The CUDA context
        and other processes' memory are left out: a launch on the edge may still fail.)"""
        return self.parts.weights_bytes <= self.parts.gpu_bytes

    @property
    def starts(self) -> bool:
        """The weights load, and the start-up check passes: the pool, less the null block,
        holds one request of the longest length."""
        return self.loads and self.check_bytes > 0 and self.needed_bytes <= self.check_bytes

    @property
    def concurrency(self) -> float:
        """Requests of the longest length the pool holds at once, as vLLM logs it (its
        blocks, null block included, over one request's blocks)."""
        return self.blocks / self.per_request_blocks

    @property
    def tokens(self) -> int:
        """vLLM's "GPU KV cache size": int(concurrency x max_model_len), as 0.33 works it out."""
        return int(self.concurrency * self.longest)

    @property
    def longest_that_fits(self) -> int:
        """The longest request the pool holds (less the null block): what max_model_len=-1,
        or the start-up error, finds."""
        return BLOCK_TOKENS * self.usable_blocks

    @property
    def all_budget_bytes(self) -> float:
        return self.tp * self.budget_bytes

    @property
    def all_pool_bytes(self) -> float:
        return self.tp * self.parts.pool_bytes

    @property
    def all_needed_bytes(self) -> int:
        return self.tp * self.needed_bytes

    @property
    def warning(self) -> str | None:
        """What may still stop a launch the check lets through, in a sentence (None: nothing
        the course knows of): a hybrid model at the card's default max_num_seqs, whose
        pool's blocks the per-token formula cannot count."""
        if not self.parts.model.hybrid:
            return None
        return hybrid_seqs_warning(self.parts.gpu)

    def chats_at(self, length: int) -> int:
        """Requests of `length` tokens that fit at once, blocks handed out in whole blocks."""
        per_chat = -(-whole("length", length, 1) // BLOCK_TOKENS)
        return self.usable_blocks // per_chat

    def error(self) -> str | None:
        """vLLM 0.33's start-up error for this launch (None if it starts)."""
        if self.starts:
            return None
        if not self.loads:
            p = self.parts
            return (
                f"torch.OutOfMemoryError: CUDA out of memory. (PyTorch stops vLLM while it "
                f"loads the weights: {p.weights_bytes / 1e9:,.2f} GB of weights for each GPU "
                f"on a card of {p.gpu_bytes / 1e9:,.1f} GB; its message names the tensor it "
                f"could not place and what was still free. vLLM never reaches its cache "
                f"check.)"
            )
        if self.check_bytes <= 0:
            return (
                "ValueError: No available memory for the cache blocks. Try increasing "
                "`gpu_memory_utilization` when initializing the engine (this flag also "
                "controls CPU memory reservation on the CPU backend, despite its name). " + DOCS
            )
        fits = self.longest_that_fits
        estimate = (
            f"Based on the available memory, the estimated maximum model length is {fits}. "
            if fits
            else ""
        )
        return (
            f"ValueError: To serve at least one request with the model's max seq len "
            f"({self.longest}), ({format_gib(self.needed_bytes)} GiB KV cache is needed, "
            f"which is larger than the available KV cache memory "
            f"({format_gib(self.check_bytes)} GiB). {estimate}Try increasing "
            f"`gpu_memory_utilization` (which also controls CPU memory on the CPU backend) "
            f"or decreasing `max_model_len` when initializing the engine. " + DOCS
        )


def startup(
    gpu: GPU,
    model: Model,
    share: int = VLLM_SHARE,
    longest: int = 131_072,
    reserve_bytes: float = PROFILED_BYTES,
    tp: int = 1,
) -> Startup:
    """Walk vLLM 0.33's start-up for `model` on `tp` cards of `gpu` at a whole-percent `share`.

    The share is of the card's measured total (`gpu.total_bytes`). `longest` is
    max_model_len: a length past the model's `context` is refused (ValueError, in
    vLLM's words); -1 asks for the longest length that fits, at most the model's
    `context` (vLLM's auto-fit searches up to the config's length,
    vllm/v1/core/kv_cache_planning.py:1337-1415), and at least one block.

    >>> from kvlesson.memory.specs import H100_80GB, LLAMA_31_8B
    >>> startup(H100_80GB, LLAMA_31_8B).tokens
    451632
    """
    parts = memory_parts(share, as_measured(gpu), model, reserve_bytes, tp)
    if longest == AUTO:
        fits = max(BLOCK_TOKENS * max(parts.blocks - 1, 0), BLOCK_TOKENS)
        longest = fits if model.context is None else min(fits, model.context)
    longest = whole("longest", longest, 1)
    refusal = model.max_len_refusal(longest)
    if refusal is not None:
        raise ValueError(f"vLLM refuses max_model_len={longest} for {model.name}: {refusal}")
    exact = pool_tokens(parts.pool_bytes, model, tp, block_tokens=1)
    needed = -(-longest // BLOCK_TOKENS) * parts.block_bytes
    return Startup(parts, longest, exact, needed)
