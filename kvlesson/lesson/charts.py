"""The lesson's figures, drawn with matplotlib from the package's numbers.

Each figure is a small class that builds its artists once and has an
`update(...)` method: a notebook draws it once, an explorer's slider updates
the same figure in place. `update` never moves the axes; the artists it
changes are listed in `moving`, the only ones an explorer draws again. It also
writes `alt`, the figure's numbers in words, from the same numbers it draws.
Colours are the Okabe-Ito palette, readable with any colour vision, and every
part also carries a label or a hatch (the rules are in `figures`).

Figures are made with `matplotlib.figure.Figure`, not pyplot, so nothing is
shown twice and no global state is left behind. The functions a notebook calls
return a `figures.Drawn`: the picture with its alt text.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

from kvlesson.lesson import quote
from kvlesson.lesson.block_grid import BlockGrid, block_grid
from kvlesson.lesson.figures import (
    BLUE,
    EDGE,
    GREEN,
    GREY,
    LABEL_BOX,
    MIN_TEXT_PT,
    ORANGE,
    PURPLE,
    SKY,
    VERMILION,
    WARNING,
    WIDTH_IN,
    YELLOW,
    Drawn,
    series,
)
from kvlesson.lesson.stacked_bar import StackedBar, card_segments
from kvlesson.lesson.sweep_charts import SweepChart, knee_by_pool, sweep_chart
from kvlesson.memory.floor import TYPICAL_CHAT, MemoryParts, Room

__all__ = [
    "BLUE",
    "ORANGE",
    "GREEN",
    "SKY",
    "VERMILION",
    "PURPLE",
    "YELLOW",
    "GREY",
    "PARTS",
    "GB",
    "MemoryBar",
    "memory_bar",
    "ChatsThatFit",
    "chats_that_fit",
    "SweepChart",
    "sweep_chart",
    "knee_by_pool",
    "BlockGrid",
    "block_grid",
]

PARTS = (
    ("weights", BLUE, ""),
    ("reserve", ORANGE, "//"),
    ("cache pool", GREEN, "--"),
    ("unused", GREY, ".."),
)
GB = 1e9  # the lesson reads "80 GB" as billions of bytes


def part_size(part: int, width: float) -> str:
    """A part's size as the memory bar writes it: the weights to 2 decimals, the rest to 1."""
    return quote.gb(width, 2 if part == 0 else 1)


class MemoryBar:
    """Figure 1: the card's memory as one bar of four parts, a line at the share.

    Below the share where the weights and the reserve leave no block, the
    server cannot start: the weights and the reserve are drawn at their full
    size, the part of them past the share line is crossed out in vermilion,
    and the title says so.
    """

    def __init__(self, parts: MemoryParts):
        self.card = parts.gpu_bytes
        self.figure = Figure(figsize=(WIDTH_IN, 2.4), layout="constrained")
        self.ax = self.figure.add_subplot()
        self.bar = StackedBar.on(self.ax, PARTS, VERMILION)
        self.line_label = self.ax.text(
            0, 0.5, "", ha="left", va="bottom", fontsize=MIN_TEXT_PT, bbox=LABEL_BOX
        )
        self.ax.set_yticks([])
        self.ax.set_ylim(-0.5, 0.8)
        self.ax.set_xlim(0, self.card / GB)  # the whole card, whatever the share
        self.ax.set_xlabel("GPU memory (GB, billions of bytes)")
        self.bar.legend(self.figure)
        self.moving = [*self.bar.artists, self.line_label, self.ax.title]
        self.alt = ""
        self.update(parts)

    def update(self, parts: MemoryParts) -> None:
        """Redraw at another share of the same card."""
        if parts.gpu_bytes != self.card:
            raise ValueError(
                f"parts must be of the {quote.gb(self.card)} card this bar was drawn "
                f"for, got {quote.gb(parts.gpu_bytes)}"
            )
        segments = card_segments(parts)
        self.bar.show(
            segments,
            parts.allowed_bytes,
            parts.weights_bytes + parts.reserve_bytes,
            parts.gpu_bytes,
            GB,
            part_size,
            least=0.06,
        )
        # the label sits right of the line, or left of it near the card's end
        right = parts.allowed_bytes / parts.gpu_bytes < 0.75
        self.line_label.set_ha("left" if right else "right")
        self.line_label.set_position((parts.allowed_bytes / GB + (0.5 if right else -0.5), 0.45))
        self.line_label.set_text(f"share {parts.share}% = {quote.gb(parts.allowed_bytes)}")
        if parts.blocks:
            pool = f"cache pool {quote.gb(parts.pool_bytes)}, {quote.count(parts.blocks)} blocks"
        else:
            pool = (
                "weights and reserve pass the share line"
                if parts.pool_bytes < 0
                else "no block for the cache pool"
            ) + ", the server cannot start"
        self.ax.set_title(
            f"{parts.gpu.name}, {parts.model.name}: {pool}",
            fontsize=10,
            color="black" if parts.blocks else WARNING,
        )
        self.alt = memory_bar_alt(parts, [part_size(k, w) for k, (_, w) in enumerate(segments)])


def memory_bar_alt(parts: MemoryParts, sizes: list[str]) -> str:
    """The memory bar in words: the card, the share, each part's size as the bar writes it."""
    weights, reserve, pool, unused = sizes
    start = (
        f"Bar chart of one {parts.gpu.name}'s memory, {quote.gb(parts.gpu_bytes)}, with "
        f"{parts.model.name} at a {parts.share}% share: a dashed line at "
        f"{quote.gb(parts.allowed_bytes)}, the part the server may use. "
    )
    if parts.blocks:
        return start + (
            f"Weights {weights}, reserve {reserve}, cache pool {pool} "
            f"({quote.count(parts.blocks)} blocks), unused {unused}."
        )
    if parts.pool_bytes < 0:
        over = parts.weights_bytes + parts.reserve_bytes - parts.allowed_bytes
        return start + (
            f"Weights {weights} and reserve {reserve} pass the line by "
            f"{quote.gb(over, 2)}, crossed out as over the budget: no cache pool, "
            f"the server cannot start. Unused {unused}, from the line to the "
            f"card's end."
        )
    return start + (
        f"Weights {weights}, reserve {reserve}, and a cache pool of {pool} that "
        f"holds no whole block: the server cannot start. Unused {unused}."
    )


def memory_bar(parts: MemoryParts) -> Drawn:
    """Figure 1 at one share."""
    bar = MemoryBar(parts)
    return Drawn(bar.figure, bar.alt)


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
        self.bars = self.ax.bar(
            range(self.count),
            [0] * self.count,
            color=colours,
            hatch=hatches,
            edgecolor=EDGE,
            linewidth=0.8,
        )
        self.values = [self.ax.text(i, 0, "", ha="center", va="bottom") for i in range(self.count)]
        self.stopped = self.ax.text(
            0.5,
            0.6,
            "",
            transform=self.ax.transAxes,
            ha="center",
            va="center",
            fontsize=10,
            color=WARNING,
            bbox=dict(facecolor="white", edgecolor=VERMILION),
        )
        self.ax.set_ylabel("chats at once")
        if top is None:
            top = max(_chats(r) for r in [blocks_room, *reserved_rooms])
        self.ax.set_ylim(0, max(top, 1) * 1.18)
        self.moving = [*self.bars, *self.values, self.stopped, self.ax.title, self.ax.xaxis]
        self.alt = ""
        self.update(blocks_room, reserved_rooms)

    def update(self, blocks_room: Room, reserved_rooms: Sequence[Room]) -> None:
        """Redraw for another share or ceiling."""
        rooms = [blocks_room, *reserved_rooms]
        for bar, text, r in zip(self.bars, self.values, rooms):
            bar.set_height(_chats(r))
            text.set_position((text.get_position()[0], _chats(r)))
            text.set_text(quote.count(r.typical) if r.starts else "will not\nstart")
        names = ["blocks as\nchats grow"] + [
            f"{r.longest:,} held\nfor each" for r in reserved_rooms
        ]
        self.ax.set_xticks(range(self.count), names)
        self.stopped.set_visible(not blocks_room.starts)
        self.stopped.set_text(
            f"The server will not start: one chat of {blocks_room.longest:,} tokens\n"
            f"needs {blocks_room.per_longest:,} blocks, the pool has "
            f"{quote.count(blocks_room.parts.blocks)}. No chats at all."
        )
        typical = min(TYPICAL_CHAT, blocks_room.longest)
        pool = max(blocks_room.parts.pool_bytes, 0)
        title = f"Chats of {typical:,} tokens in a {quote.gb(pool)} pool"
        self.ax.set_title(f"{title} ({blocks_room.parts.share}% share)", fontsize=10)
        bars = [
            f"{name.replace(chr(10), ' ')}: "
            + (f"{quote.count(r.typical)} chats" if r.starts else "will not start")
            for name, r in zip(names, rooms)
        ]
        self.alt = (
            f"Bar chart of the chats of {typical:,} tokens that fit at once in a "
            f"{quote.gb(pool)} pool at a {blocks_room.parts.share}% share, the longest "
            f"chat {blocks_room.longest:,} tokens: {series(bars)}."
        )
        if not blocks_room.starts:
            self.alt += " " + self.stopped.get_text().replace("\n", " ")


def _chats(r: Room) -> int:
    """Chats a room holds at once: none if the server will not start at its ceiling."""
    return r.typical if r.starts else 0


def chats_that_fit(blocks_room: Room, reserved_rooms: Sequence[Room]) -> Drawn:
    """Figure 2: one green bar for blocks, one orange hatched bar per reserved ceiling."""
    chart = ChatsThatFit(blocks_room, reserved_rooms)
    return Drawn(chart.figure, chart.alt)
