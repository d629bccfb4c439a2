"""The lesson's figures, drawn with matplotlib from the package's numbers.

Each figure is a small class that builds its artists once and has an
`update(...)` method: a notebook draws it once, an explorer's slider updates
the same figure in place. `update` never moves the axes; the artists it
changes are listed in `moving`, the only ones an explorer draws again.
Colours are the Okabe-Ito palette, readable with any colour vision, and
every part also carries a label or a hatch.

Figures are made with `matplotlib.figure.Figure`, not pyplot, so nothing is
shown twice and no global state is left behind.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

import pandas as pd
from matplotlib.figure import Figure

from kvlesson.lesson import quote
from kvlesson.lesson.sentences import chat_name
from kvlesson.lesson.stacked_bar import StackedBar
from kvlesson.memory.floor import TYPICAL_CHAT, MemoryParts, Room
from kvlesson.serving.server import Step

# Okabe & Ito, "Color Universal Design" (2008): a palette for all colour visions.
BLUE, ORANGE, GREEN, SKY, VERMILION, PURPLE, YELLOW = (
    "#0072B2", "#E69F00", "#009E73", "#56B4E9", "#D55E00", "#CC79A7", "#F0E442")
GREY = "#999999"
PARTS = (("weights", BLUE, ""), ("reserve", ORANGE, "//"), ("cache pool", GREEN, ""),
         ("unused", GREY, ".."))
GB = 1e9  # the lesson reads "80 GB" as billions of bytes


class MemoryBar:
    """Figure 1: the card's memory as one bar of four parts, a line at the share.

    Below the share where the weights and the reserve leave no block, the
    server cannot start: the weights and the reserve are drawn at their full
    size, the part of them past the share line is crossed out in vermilion,
    and the title says so.
    """

    def __init__(self, parts: MemoryParts):
        self.card = parts.gpu_bytes
        self.figure = Figure(figsize=(8, 2.4), layout="constrained")
        self.ax = self.figure.add_subplot()
        self.bar = StackedBar.on(self.ax, PARTS, VERMILION)
        self.line_label = self.ax.text(0, 0.5, "", ha="left", va="bottom", fontsize=9,
                                       bbox=dict(facecolor="white", edgecolor="none", pad=1))
        self.ax.set_yticks([])
        self.ax.set_ylim(-0.5, 0.8)
        self.ax.set_xlim(0, self.card / GB)  # the whole card, whatever the share
        self.ax.set_xlabel("GPU memory (GB, billions of bytes)")
        self.bar.legend(self.figure)
        self.moving = [*self.bar.artists, self.line_label, self.ax.title]
        self.update(parts)

    def update(self, parts: MemoryParts) -> None:
        """Redraw at another share of the same card."""
        if parts.gpu_bytes != self.card:
            raise ValueError(f"parts must be of the {quote.gb(self.card)} card this bar was drawn "
                             f"for, got {quote.gb(parts.gpu_bytes)}")
        self.bar.show(parts.segments(), parts.allowed_bytes, parts.weights_bytes + parts.reserve_bytes,
                      parts.gpu_bytes, GB, lambda part, width: quote.gb(width, 2 if part == 0 else 1),
                      least=0.06)
        # the label sits right of the line, or left of it near the card's end
        right = parts.allowed_bytes / parts.gpu_bytes < 0.75
        self.line_label.set_ha("left" if right else "right")
        self.line_label.set_position((parts.allowed_bytes / GB + (0.5 if right else -0.5), 0.45))
        self.line_label.set_text(f"share {parts.share}% = {quote.gb(parts.allowed_bytes)}")
        if parts.blocks:
            pool = f"cache pool {quote.gb(parts.pool_bytes)}, {quote.count(parts.blocks)} blocks"
        else:
            pool = ("weights and reserve pass the share line" if parts.pool_bytes < 0 else
                    "no block for the cache pool") + ", the server cannot start"
        self.ax.set_title(f"{parts.gpu.name}, {parts.model.name}: {pool}", fontsize=10,
                          color="black" if parts.blocks else VERMILION)


def memory_bar(parts: MemoryParts) -> Figure:
    """Figure 1 at one share."""
    return MemoryBar(parts).figure


class ChatsThatFit:
    """Figure 2: chats that fit at once, blocks handed out vs the ceiling reserved.

    A ceiling at which the server will not start draws no chats and says so.
    `top` is the most chats the axis must show (an explorer passes the most
    over its sliders' range, so the axis never moves); by default the most
    in the rooms drawn first.
    """

    def __init__(self, blocks_room: Room, reserved_rooms: Sequence[Room], top: int | None = None):
        self.figure = Figure(figsize=(6.4, 3.4), layout="constrained")
        self.ax = self.figure.add_subplot()
        self.count = 1 + len(reserved_rooms)
        colours = [GREEN] + [ORANGE] * len(reserved_rooms)
        hatches = [""] + ["//"] * len(reserved_rooms)
        self.bars = self.ax.bar(range(self.count), [0] * self.count, color=colours, hatch=hatches,
                                edgecolor="white")
        self.values = [self.ax.text(i, 0, "", ha="center", va="bottom") for i in range(self.count)]
        self.stopped = self.ax.text(0.5, 0.6, "", transform=self.ax.transAxes, ha="center",
                                    va="center", fontsize=11, color=VERMILION,
                                    bbox=dict(facecolor="white", edgecolor=VERMILION))
        self.ax.set_ylabel("chats at once")
        if top is None:
            top = max(_chats(r) for r in [blocks_room, *reserved_rooms])
        self.ax.set_ylim(0, max(top, 1) * 1.18)
        self.moving = [*self.bars, *self.values, self.stopped, self.ax.title, self.ax.xaxis]
        self.update(blocks_room, reserved_rooms)

    def update(self, blocks_room: Room, reserved_rooms: Sequence[Room]) -> None:
        """Redraw for another share or ceiling."""
        rooms = [blocks_room, *reserved_rooms]
        for bar, text, r in zip(self.bars, self.values, rooms):
            bar.set_height(_chats(r))
            text.set_position((text.get_position()[0], _chats(r)))
            text.set_text(quote.count(r.typical) if r.starts else "will not\nstart")
        names = ["blocks as\nchats grow"] + [f"{r.longest:,} held\nfor each" for r in reserved_rooms]
        self.ax.set_xticks(range(self.count), names)
        self.stopped.set_visible(not blocks_room.starts)
        self.stopped.set_text(
            f"The server will not start: one chat of {blocks_room.longest:,} tokens\n"
            f"needs {blocks_room.per_longest:,} blocks, the pool has "
            f"{quote.count(blocks_room.parts.blocks)}. No chats at all.")
        typical = min(TYPICAL_CHAT, blocks_room.longest)
        pool = max(blocks_room.parts.pool_bytes, 0)
        self.ax.set_title(f"Chats of {typical:,} tokens in a {quote.gb(pool)} pool "
                          f"({blocks_room.parts.share}% share)", fontsize=10)


def _chats(r: Room) -> int:
    """Chats a room holds at once: none if the server will not start at its ceiling."""
    return r.typical if r.starts else 0


def chats_that_fit(blocks_room: Room, reserved_rooms: Sequence[Room]) -> Figure:
    """Figure 2: one green bar for blocks, one orange bar per reserved ceiling."""
    return ChatsThatFit(blocks_room, reserved_rooms).figure


class SweepChart:
    """Figure 3: tokens/s and the wait between words against the cap, the knee marked.

    The axes are set once: the caps of the first sweep, and `tops` (the most
    tokens/s and the longest wait in ms to show; by default the first
    sweep's). An explorer passes the most over its slider's range, so moving
    a slider moves the lines, never the axes.
    """

    def __init__(self, sweep: pd.DataFrame, knee: int | None, cap: int | None = None,
                 title: str = "", tops: tuple[float, float] | None = None):
        self.figure = Figure(figsize=(9, 3.4), layout="constrained")
        self.rate_ax, self.wait_ax = self.figure.subplots(1, 2)
        self.rate_line, = self.rate_ax.plot([], [], "o-", color=BLUE)
        self.wait_line, = self.wait_ax.plot([], [], "s-", color=VERMILION)
        self.knees = [ax.axvline(1, color=GREY, linewidth=2) for ax in (self.rate_ax, self.wait_ax)]
        self.marks = [ax.plot([], [], "o", markersize=13, markerfacecolor="none",
                              markeredgecolor="black", markeredgewidth=2)[0]
                      for ax in (self.rate_ax, self.wait_ax)]
        caps = list(sweep["cap"])
        if tops is None:
            tops = (sweep["tokens_per_s"].max(), sweep["wait_ms"].max())
        self.tops = tops
        for ax, label, top in ((self.rate_ax, "tokens/s, all chats together", tops[0]),
                               (self.wait_ax, "wait between words (ms)", tops[1])):
            ax.set_xscale("log", base=2)
            ax.set_xlim(caps[0] / 1.5, caps[-1] * 1.5)
            ax.set_xticks(caps, [str(c) for c in caps])
            ax.set_ylim(0, top * 1.1)
            ax.set_xlabel("most chats at once (cap)")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        self.title = self.figure.suptitle(" ", fontsize=10)
        self.message = self.figure.text(0.5, 0.55, "", ha="center", va="center", fontsize=10,
                                        color=VERMILION, bbox=dict(facecolor="white",
                                                                   edgecolor=VERMILION))
        self.moving = [self.rate_line, self.wait_line, *self.knees, *self.marks, self.title,
                       self.message]
        self.update(sweep, knee, cap, title)

    def update(self, sweep: pd.DataFrame, knee: int | None, cap: int | None = None,
               title: str = "") -> None:
        """Redraw for another sweep (same caps) or another cap."""
        caps = list(sweep["cap"])
        self.rate_line.set_data(caps, sweep["tokens_per_s"])
        self.wait_line.set_data(caps, sweep["wait_ms"])
        for line in self.knees:
            line.set_xdata([knee or caps[0]] * 2)
            line.set_visible(knee is not None)
        row = sweep[sweep["cap"] == cap]
        for mark, column in zip(self.marks, ("tokens_per_s", "wait_ms")):
            mark.set_data(list(row["cap"]), list(row[column]))
        knee_text = f"grey line: cap {knee}, the last before a doubling adds under 10%" if knee else ""
        self.title.set_text(f"{title}{'. ' if title and knee_text else ''}{knee_text}")
        self.message.set_visible(False)

    def blank(self, message: str) -> None:
        """No lines, and `message` across the chart: the server does not start at this setting."""
        for line in (self.rate_line, self.wait_line, *self.marks):
            line.set_data([], [])
        for line in self.knees:
            line.set_visible(False)
        self.title.set_text("No sweep: the server does not start at this share")
        self.message.set_text(textwrap.fill(message, 80))
        self.message.set_visible(True)


def sweep_chart(sweep: pd.DataFrame, knee: int | None, cap: int | None = None,
                title: str = "") -> Figure:
    """Figure 3: the cap sweep in two panels."""
    return SweepChart(sweep, knee, cap, title).figure


def knee_by_pool(sweeps: dict[int, pd.DataFrame], caps: Sequence[int] = (32, 64, 128)) -> Figure:
    """Figure 4: tokens/s at a few caps for several shares; the best cap moves with the pool.

    `sweeps` maps a share (percent) to its cap sweep.
    """
    figure = Figure(figsize=(7, 3.4), layout="constrained")
    ax = figure.add_subplot()
    colours, hatches = (SKY, BLUE, PURPLE), ("", "//", "..")
    width = 0.8 / len(caps)
    for k, cap in enumerate(caps):
        heights = [float(s.loc[s["cap"] == cap, "tokens_per_s"].iloc[0]) for s in sweeps.values()]
        bars = ax.bar([i + (k - (len(caps) - 1) / 2) * width for i in range(len(sweeps))], heights,
                      width, color=colours[k % 3], hatch=hatches[k % 3], edgecolor="white",
                      label=f"cap {cap}")
        ax.bar_label(bars, [quote.count(h) for h in heights], fontsize=8)
    ax.set_xticks(range(len(sweeps)), [f"{share}% share" for share in sweeps])
    ax.set_ylabel("tokens/s, all chats together")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.25)
    ax.legend(loc="upper center", ncol=len(caps), frameon=False)
    ax.set_title("The best cap depends on the pool", fontsize=10)
    return figure


class BlockGrid:
    """The hand case at one step: each block of the pool, coloured by the chat that holds it."""

    OWNERS = (BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILION)

    def __init__(self, steps: Sequence[Step], pool: int, index: int = 0):
        self.steps, self.pool = steps, pool
        self.figure = Figure(figsize=(6, 1.9), layout="constrained")
        self.ax = self.figure.add_subplot()
        self.cells = [self.ax.bar(b, 0.8, width=0.9, color="white", edgecolor="black")[0]
                      for b in range(pool)]
        self.names = [self.ax.text(b, 0.4, "", ha="center", va="center", fontsize=11)
                      for b in range(pool)]
        self.ax.set_xlim(-0.6, pool - 0.4)
        self.ax.set_ylim(0, 1)
        self.ax.set_yticks([])
        self.ax.set_xticks(range(pool), [f"block {b + 1}" for b in range(pool)])
        self.moving = [*self.cells, *self.names, self.ax.title]
        self.update(index)

    def update(self, index: int) -> None:
        step = self.steps[index]
        owners = [chat for chat in step.running for _ in range(step.held[chat])]
        for b, (cell, name) in enumerate(zip(self.cells, self.names)):
            chat = owners[b] if b < len(owners) else None
            cell.set_facecolor("white" if chat is None else self.OWNERS[chat % len(self.OWNERS)])
            cell.set_hatch("" if chat is None else "//" if chat % 2 else "")
            name.set_text("free" if chat is None else chat_name(chat))
        self.ax.set_title(f"Step {step.step}: {len(owners)} of {self.pool} blocks held, "
                          f"{step.free} free", fontsize=10)
