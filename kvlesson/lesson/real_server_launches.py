"""The launches notebook 5 works through, by the names its explorer offers, and the walk of one.

A launch is a card, a model, the GPUs it is split over, a share and `max_model_len`, named as
the explorer's menus name them, so that the notebook's numbers, its step-by-step walk and
its explorer's preset are one launch. Section 5's is Llama 3.3 70B in BF16 on two H100s at
vLLM's default share, with `max_model_len` at the config's own length. `walk` tells a launch
step by step, in the order vLLM 0.33's worker runs it.
"""

from __future__ import annotations

import dataclasses

from kvlesson.lesson import quote
from kvlesson.memory.specs import GPUS, MODELS
from kvlesson.memory.startup import VLLM_SHARE, Startup, startup
from kvlesson.memory.units import gib
from kvlesson.memory.vllm_defaults import NULL_BLOCK_SINCE

Say = quote.Say

FULL_LENGTH = 131_072  # max_model_len's default for Llama 3.x: the config's context length


@dataclasses.dataclass(frozen=True)
class Launch:
    """A launch by the names notebook 5's explorer offers: card, model, GPUs, share, longest."""

    gpu: str
    model: str
    tp: int
    share: int
    longest: int

    def start(
        self,
        weights: str = "bf16",
        share: int | None = None,
        longest: int | None = None,
        tp: int | None = None,
    ) -> Startup:
        """This launch's start-up (with these weights, or another share, longest or tp)."""
        model = MODELS[self.model].with_dtypes(weights=weights)
        return startup(
            GPUS[self.gpu],
            model,
            self.share if share is None else share,
            self.longest if longest is None else longest,
            tp=tp or self.tp,
        )


# Section 5: Llama 3.3 70B in BF16 on two H100s at vLLM's default share, max_model_len at
# its default (the config's context length). The explorer's preset is this launch.
TWO_H100 = Launch("H100_80GB", "LLAMA_33_70B", tp=2, share=VLLM_SHARE, longest=FULL_LENGTH)


def starts_word(starts: bool) -> str:
    """How the lesson says a start-up's outcome."""
    return "starts" if starts else "does not start"


def walk(launch: Startup) -> Say:
    """A launch, step by step in vLLM 0.33's order, per GPU, with its numbers; a launch whose
    weights pass the card stops at step 2."""
    p, tp = launch.parts, launch.tp
    split = f" (1/{tp} of {quote.gb(p.model.weights_bytes, 2)})" if tp > 1 else ""
    each = " on each GPU" if tp > 1 else ""  # with several GPUs, say whose memory it is
    snapshot = (
        f"1. **Snapshot.** {p.gpu.name}: {quote.gb(p.gpu_bytes)} of memory{each}, the "
        f"total cudaMemGetInfo reports; the budget is {p.share}% of that, "
        f"{quote.gb(p.allowed_bytes)}{each}, whatever is free."
    )
    load = f"2. **Load the weights.** {p.model.name}: {quote.gb(p.weights_bytes, 2)} on each GPU{split}"
    if not launch.loads:
        stop = f"{load}, more than the card holds: the launch stops here. {launch.error()}"
        return Say(f"{snapshot}\n{stop}")
    check = (
        f"passes: the pool holds {launch.concurrency:.2f} of them, as the log will say."
        if launch.starts
        else f"fails: {launch.error()}"
    )
    profile = (
        f"3. **Profile.** Activations, CUDA graphs and workspace: "
        f"{quote.gb(p.reserve_bytes)}{each} (assumed here; vLLM measures it)."
    )
    subtract = (
        f"4. **Subtract.** KV pool{each} = {quote.gb(p.allowed_bytes)} - "
        f"{quote.gb(p.weights_bytes, 2)} - {quote.gb(p.reserve_bytes)} = "
        f"{quote.gb(p.pool_bytes, 2)} ({gib(max(p.pool_bytes, 0))}), "
        f"{quote.count(p.blocks)} blocks of 16 tokens."
    )
    verdict = (
        f"5. **Check.** One block is held back (the null block, since vLLM "
        f"{NULL_BLOCK_SINCE}); one request of max_model_len = {launch.longest:,} tokens "
        f"needs {gib(launch.needed_bytes)}{each}; the check {check}"
    )
    steps = [snapshot, load + ".", profile, subtract, verdict]
    if launch.starts and launch.warning:
        steps.append(f"6. **And then.** {launch.warning}")
    return Say("\n".join(steps))
