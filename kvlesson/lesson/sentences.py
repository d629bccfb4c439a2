"""What the explorers and notebooks say, computed: views and sentences.

Each `*_view` function is what an explorer shows for one position of its
sliders: the numbers and a sentence. They are pure (no widgets), so a test,
a notebook cell and a slider callback all call the same code, and a
notebook's prose follows its parameters instead of quoting fixed numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kvlesson.lesson import quote
from kvlesson.lesson.card_sentences import Reading, card_phrase, card_tag
from kvlesson.lesson.pause_sentences import (  # noqa: F401 (notebook 4 says sentences.trace_story)
    pause_count,
    trace_story,
)
from kvlesson.lesson.quote import Say
from kvlesson.memory.floor import (
    BLOCK_TOKENS,
    RESERVE_BYTES,
    TYPICAL_CHAT,
    MemoryParts,
    Room,
    ServerWontStart,
    first_share_with_blocks,
    memory_parts,
    readings,
    room,
)
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.memory.units import counted
from kvlesson.serving.chats import Chat
from kvlesson.serving.settings import LESSON_LONGEST
from kvlesson.serving.sweep import (
    CAPS,
    cap_sweep,
    stops_paying,
)


def setting(
    gpu: GPU,
    model: Model,
    share: int,
    longest: int,
    cap: int,
    reserve_bytes: float = RESERVE_BYTES,
    measured: bool = False,
) -> Say:
    """The notebook's setting in one paragraph: the card (and how it is read, with the reserve
    that goes with that reading), the model, the three settings."""
    reading = Reading(gpu, measured and gpu.measured_bytes is not None, reserve_bytes)
    return Say(
        f"**The setting.** The card: {card_phrase(reading)}; {gpu.peak_flops / 1e12:,.0f} TFLOP/s "
        f"at peak, {gpu.bandwidth / 1e9:,.0f} GB/s. The model: {model.name}, "
        f"{quote.count(model.params)} weights of {model.bytes_per_number} bytes, "
        f"{quote.gb(model.weights_bytes, 2)}, and {quote.count(model.bytes_per_token)} bytes of "
        f"cache per token. Memory share {share}%, longest chat {longest:,} tokens, at most {cap} "
        f"chats at once; blocks of {BLOCK_TOKENS} tokens."
    )


@dataclass(frozen=True)
class FloorView:
    parts: MemoryParts
    caption: Say


def floor_view(
    share: int,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> FloorView:
    """The floor plan at `share`, and a sentence about it."""
    parts = memory_parts(share, gpu, model, reserve_bytes)
    weights, reserve = quote.gb(parts.weights_bytes, 2), quote.gb(parts.reserve_bytes)
    if not parts.blocks:
        needed = parts.weights_bytes + parts.reserve_bytes
        over = (
            f", {quote.gb(needed - parts.allowed_bytes, 2)} more than that"
            if needed > parts.allowed_bytes
            else ""
        )
        return FloorView(
            parts,
            Say(
                f"At {quote.share(share)} the server may use {quote.gb(parts.allowed_bytes)}, but the "
                f"weights ({weights}) and the reserve ({reserve}) need {quote.gb(needed, 2)}{over}: "
                f"no block is left for the cache pool, so the server **cannot start**."
                f"{_card(gpu, reserve_bytes)}"
            ),
        )
    return FloorView(
        parts,
        Say(
            f"At {quote.share(share)} the server may use {quote.gb(parts.allowed_bytes)}. After the "
            f"weights ({weights}) and the reserve ({reserve}), the cache pool gets "
            f"{quote.gb(parts.pool_bytes)} ({quote.count(parts.blocks)} blocks, "
            f"{quote.count(parts.tokens)} tokens); {quote.gb(parts.unused_bytes)} is left unused."
            f"{_card(gpu, reserve_bytes)}"
        ),
    )


def _card(gpu: GPU, reserve_bytes: float) -> str:
    """The card an explorer's caption draws, as its last sentence."""
    return f" Card: {card_tag(gpu, reserve_bytes)}."


@dataclass(frozen=True)
class CeilingView:
    blocks: Room
    reserved: Room
    caption: Say


def ceiling_view(
    share: int,
    longest: int,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> CeilingView:
    """Chats that fit with blocks and with the ceiling reserved, and whether the server starts."""
    kw = {"gpu": gpu, "model": model, "reserve_bytes": reserve_bytes}
    blocks, held = room(share, longest, **kw), room(share, longest, reserved=True, **kw)
    typical = min(TYPICAL_CHAT, longest)
    need = (
        f"one chat of {longest:,} tokens needs {blocks.per_longest:,} blocks and the pool "
        f"has {blocks.parts.blocks:,}"
    )
    if not blocks.starts:
        return CeilingView(
            blocks,
            held,
            Say(
                (
                    f"The server will **not** start: {need}, so it serves no chats at all. A ceiling of "
                    f"{quote.count(blocks.parts.tokens)} tokens or less would start at this share."
                    if blocks.parts.blocks
                    else f"The server will **not** start: {need}, so it serves no chats at all, whatever "
                    f"the ceiling."
                )
                + _card(gpu, reserve_bytes)
            ),
        )
    return CeilingView(
        blocks,
        held,
        Say(
            f"The server starts: {need}. Chats of {typical:,} tokens at once: {blocks.typical:,} "
            f"with blocks handed out as they grow, {held.typical:,} with {longest:,} tokens held "
            f"for each." + _card(gpu, reserve_bytes)
        ),
    )


@dataclass(frozen=True)
class SweepView:
    """The cap sweep at one share, or why the server does not start there."""

    share: int
    sweep: pd.DataFrame | None
    knee: int | None
    problem: str = ""
    card: str = ""

    def caption(self, cap: int) -> Say:
        """A sentence about the sweep, read at `cap`."""
        if self.sweep is None:
            return Say(self.problem + self.card)
        at = quote.share(self.share)
        head = (
            f"At {at} doubling the cap stops paying at {self.knee}: the step from "
            f"{self.knee} to {2 * self.knee} adds under 10% to tokens/s. "
            if self.knee
            else f"At {at} every doubling of the cap pays. "
        )
        row = self.sweep[self.sweep["cap"] == cap]
        if not len(row):
            return Say(head + self.card.strip())
        r = row.iloc[0]
        return Say(
            head + f"Cap {cap}: {quote.count(r.tokens_per_s)} tokens/s, a wait of "
            f"{quote.one(r.wait_ms)} ms between words, on average "
            f"{quote.average(r.avg_running, 'chats')} running, "
            f"{counted(int(r.pauses), 'pause')}." + self.card
        )


def sweep_view(
    chats: list[Chat],
    share: int,
    longest: int = LESSON_LONGEST,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> SweepView:
    """The cap sweep at `share`, served with the fast engine, and its knee."""
    try:
        sweep = cap_sweep(
            chats,
            CAPS,
            share,
            longest,
            gpu=gpu,
            model=model,
            reserve_bytes=reserve_bytes,
            engine="fast",
        )
    except ServerWontStart as error:
        text = str(error)
        return SweepView(share, None, None, text[0].upper() + text[1:], _card(gpu, reserve_bytes))
    return SweepView(share, sweep, stops_paying(sweep), card=_card(gpu, reserve_bytes))


def gib_reading(share: int, gpu: GPU, model: Model, reserve_bytes: float = RESERVE_BYTES) -> Say:
    """The same card read as GiB instead of GB: how much the pool changes."""
    try:
        two = readings(share, gpu, model, reserve_bytes)
    except ValueError:
        return Say(
            f"The {gpu.name}'s memory is not a whole number of GB, so there is no GiB reading."
        )
    as_gb, as_gi = two.gb, two.gib
    if not as_gb.parts.blocks:
        return Say(
            f"At {quote.share(share)} neither reading leaves {model.name} a pool worth comparing."
        )
    return Say(
        f"Read as {gpu.memory_bytes // 10**9} GiB ({quote.count(as_gi.parts.gpu_bytes)} bytes), the "
        f"card at {quote.share(share)} gives a pool of {quote.gb(as_gi.parts.pool_bytes)} "
        f"({quote.count(as_gi.parts.blocks)} blocks, {quote.count(as_gi.typical)} chats of "
        f"{TYPICAL_CHAT:,}) against {quote.gb(as_gb.parts.pool_bytes)} "
        f"({quote.count(as_gb.parts.blocks)} blocks, {quote.count(as_gb.typical)} chats). The card "
        f"is {quote.pct(two.card_larger)} larger but the pool {quote.pct(two.pool_larger)}, because "
        f"the weights and the reserve stay the same size."
    )


def first_block(gpu: GPU, model: Model, reserve_bytes: float = RESERVE_BYTES) -> Say:
    """The share below which the weights and the reserve leave no block."""
    share = first_share_with_blocks(gpu, model, reserve_bytes)
    if share is None:
        return Say(
            f"Even at 100% the weights and the reserve leave no block: {model.name} does "
            f"not fit on one {gpu.name} with room for a cache."
        )
    return Say(
        f"Below {quote.share(share)} the weights and the reserve leave no block at all: the "
        f"server could not hold a single token of any chat."
    )


def startup_log(
    share: int, longest: int, gpu: GPU, model: Model, reserve_bytes: float = RESERVE_BYTES
) -> Say:
    """What vLLM's start-up log would report: the pool in tokens and the full-length concurrency."""
    r = room(share, longest, gpu=gpu, model=model, reserve_bytes=reserve_bytes)
    return Say(
        f"A vLLM start-up log reports the same two things. For this setting it would read "
        f'"GPU KV cache size: {quote.count(r.parts.tokens)} tokens" and "Maximum concurrency for '
        f'{longest:,} tokens per request: {r.parts.tokens / longest:.2f}x": the pool, and how many '
        f"chats of the full ceiling it could hold at once."
    )


def chats_summary(chats: list[Chat]) -> Say:
    """The chats in numbers: how many, and the range and total of prompts and replies."""
    prompts, replies = [c.prompt for c in chats], [c.reply for c in chats]
    return Say(
        f"{counted(len(chats), 'chat')}, all waiting at time zero. Prompts run from {min(prompts):,} to "
        f"{max(prompts):,} tokens ({quote.count(sum(prompts))} in all, mean "
        f"{quote.count(sum(prompts) / len(chats))}); replies from {min(replies):,} to "
        f"{max(replies):,} ({quote.count(sum(replies))} in all, mean "
        f"{quote.count(sum(replies) / len(chats))})."
    )


def typical_size(chats: list[Chat]) -> Say:
    """Where the typical chat's 2,000 tokens come from: about the mean chat of the lesson."""
    prompt = sum(c.prompt for c in chats) / len(chats)
    reply = sum(c.reply for c in chats) / len(chats)
    return Say(
        f"A typical chat is {TYPICAL_CHAT:,} tokens, prompt and reply together: about the mean "
        f"of the lesson's {counted(len(chats), 'chat')} (notebook 3), whose prompts average "
        f"{quote.count(prompt)} tokens and replies {quote.count(reply)}, "
        f"{quote.count(prompt + reply)} tokens in all."
    )
