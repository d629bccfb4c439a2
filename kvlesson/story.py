"""What the explorers and notebooks say, computed: views and sentences.

Each `*_view` function is what an explorer shows for one position of its
sliders: the numbers and a sentence. They are pure (no widgets), so a test,
a notebook cell and a slider callback all call the same code, and a
notebook's prose follows its parameters instead of quoting fixed numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kvlesson import quote
from kvlesson.chats import Chat
from kvlesson.floor import (BLOCK_TOKENS, RESERVE_BYTES, TYPICAL_CHAT, MemoryParts, Room,
                            ServerWontStart, memory_parts, room)
from kvlesson.quote import Say
from kvlesson.server import LESSON_LONGEST, Step
from kvlesson.specs import A100_80GB, LLAMA_31_8B, GPU, Model
from kvlesson.sweep import CAPS, cap_sweep, stops_paying
from kvlesson.valid import whole


def setting(gpu: GPU, model: Model, share: int, longest: int, cap: int,
            reserve_bytes: float = RESERVE_BYTES) -> Say:
    """The notebook's setting in one paragraph: the card, the model, the three settings."""
    return Say(
        f"**The setting.** One {gpu.name} with {quote.gb(gpu.memory_bytes)} of memory "
        f"({gpu.peak_flops / 1e12:,.0f} TFLOP/s at peak, {gpu.bandwidth / 1e9:,.0f} GB/s), serving "
        f"{model.name}: {quote.count(model.params)} weights of {model.bytes_per_number} bytes, "
        f"{quote.gb(model.weights_bytes, 2)}, and {quote.count(model.bytes_per_token)} bytes of "
        f"cache per token. Memory share {share}%, longest chat {longest:,} tokens, at most {cap} "
        f"chats at once; a working reserve of {quote.gb(reserve_bytes)}; blocks of "
        f"{BLOCK_TOKENS} tokens.")


@dataclass(frozen=True)
class FloorView:
    parts: MemoryParts
    caption: Say


def floor_view(share: int, gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B,
               reserve_bytes: float = RESERVE_BYTES) -> FloorView:
    """The floor plan at `share`, and a sentence about it."""
    parts = memory_parts(share, gpu, model, reserve_bytes)
    pool = (f"the cache pool gets {quote.gb(parts.pool_bytes)} ({quote.count(parts.blocks)} blocks, "
            f"{quote.count(parts.tokens)} tokens)" if parts.blocks else
            "no block is left for the cache pool")
    return FloorView(parts, Say(
        f"At a {share}% share the server may use {quote.gb(parts.allowed_bytes)}. After the "
        f"weights ({quote.gb(parts.weights_bytes, 2)}) and the reserve "
        f"({quote.gb(parts.reserve_bytes)}), {pool}; {quote.gb(parts.unused_bytes)} is left unused."))


@dataclass(frozen=True)
class CeilingView:
    blocks: Room
    reserved: Room
    caption: Say


def ceiling_view(share: int, longest: int, gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B,
                 reserve_bytes: float = RESERVE_BYTES) -> CeilingView:
    """Chats that fit with blocks and with the ceiling reserved, and whether the server starts."""
    kw = dict(gpu=gpu, model=model, reserve_bytes=reserve_bytes)
    blocks, held = room(share, longest, **kw), room(share, longest, reserved=True, **kw)
    typical = min(TYPICAL_CHAT, longest)
    if blocks.starts:
        start = (f"The server starts: one chat of {longest:,} tokens needs "
                 f"{blocks.per_longest:,} blocks and the pool has {blocks.parts.blocks:,}.")
    else:
        start = (f"The server will **not** start: one chat of {longest:,} tokens needs "
                 f"{blocks.per_longest:,} blocks and the pool has {blocks.parts.blocks:,}.")
    return CeilingView(blocks, held, Say(
        f"{start} Chats of {typical:,} tokens at once: {blocks.typical:,} with blocks handed out "
        f"as they grow, {held.typical:,} with {longest:,} tokens held for each."))


@dataclass(frozen=True)
class SweepView:
    """The cap sweep at one share, or why the server does not start there."""

    share: int
    sweep: pd.DataFrame | None
    knee: int | None
    problem: str = ""

    def caption(self, cap: int) -> Say:
        """A sentence about the sweep, read at `cap`."""
        if self.sweep is None:
            return Say(self.problem)
        head = (f"At a {self.share}% share a doubling of the cap stops paying after {self.knee}. "
                if self.knee else f"At a {self.share}% share every doubling of the cap pays. ")
        row = self.sweep[self.sweep["cap"] == cap]
        if not len(row):
            return Say(head)
        r = row.iloc[0]
        return Say(head + f"Cap {cap}: {quote.count(r.tokens_per_s)} tokens/s, a wait of "
                   f"{quote.one(r.wait_ms)} ms between words, {quote.one(r.avg_running)} chats "
                   f"running on average, {int(r.pauses)} pauses.")


def sweep_view(chats: list[Chat], share: int, longest: int = LESSON_LONGEST,
               gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B,
               reserve_bytes: float = RESERVE_BYTES) -> SweepView:
    """The cap sweep at `share`, served with the fast engine, and its knee."""
    try:
        sweep = cap_sweep(chats, CAPS, share, longest, gpu=gpu, model=model,
                          reserve_bytes=reserve_bytes, engine="fast")
    except ServerWontStart as error:
        text = str(error)
        return SweepView(share, None, None, text[0].upper() + text[1:])
    return SweepView(share, sweep, stops_paying(sweep))


@dataclass(frozen=True)
class PauseView:
    step: Step
    caption: Say


def chat_name(chat: int) -> str:
    """Chats of a small case are called A, B, C, ... in the course."""
    return chr(ord("A") + chat) if chat < 26 else f"#{chat}"


def pause_view(steps: list[Step], index: int) -> PauseView:
    """What happened in one step of a trace, in words."""
    index = whole("step index", index, 0, len(steps) - 1)
    step = steps[index]
    names = lambda chats: ", ".join(map(chat_name, chats))  # noqa: E731
    events = []
    if step.paused:
        events.append(f"no block was free, so {names(step.paused)}, the newest, was paused and "
                      f"gave all its blocks back")
    if step.joined:
        events.append(f"{names(step.joined)} joined and read its whole context")
    if step.finished:
        events.append(f"{names(step.finished)} wrote its last token and freed its blocks")
    held = ", ".join(f"{chat_name(c)} holds {n}" for c, n in step.held.items())
    happened = "; ".join(events) if events else "every running chat wrote one token"
    return PauseView(step, Say(
        f"Step {step.step} of {len(steps)}: {happened}. {held or 'Nobody holds a block'}; "
        f"{step.free} free. Clock: {quote.ms(step.clock)}."))
