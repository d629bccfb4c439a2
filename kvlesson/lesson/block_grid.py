"""Notebook 4's pool, block by block: the hand case at one step, each block coloured by the chat
that holds it and named on it (the pause explorer redraws it as its step slider moves).

`charts` names it beside the lesson's other figures (`charts.block_grid`), as notebook 4 draws it.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

from kvlesson.lesson.figures import (
    BLUE,
    EDGE,
    GREEN,
    LABEL_BOX,
    ORANGE,
    PURPLE,
    SKY,
    VERMILION,
    Drawn,
    series,
)
from kvlesson.lesson.pause_sentences import chat_name
from kvlesson.serving.results import Step


class BlockGrid:
    """The hand case at one step: each block of the pool, coloured by the chat that holds it
    and named on it."""

    OWNERS = (BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILION)

    def __init__(self, steps: Sequence[Step], pool: int, index: int = 0):
        self.steps, self.pool = steps, pool
        self.figure = Figure(figsize=(6, 1.9), layout="constrained")
        self.ax = self.figure.add_subplot()
        self.cells = [
            self.ax.bar(b, 0.8, width=0.9, color="white", edgecolor=EDGE)[0] for b in range(pool)
        ]
        self.names = [
            self.ax.text(b, 0.4, "", ha="center", va="center", fontsize=11, bbox=LABEL_BOX)
            for b in range(pool)
        ]
        self.ax.set_xlim(-0.6, pool - 0.4)
        self.ax.set_ylim(0, 1)
        self.ax.set_yticks([])
        self.ax.set_xticks(range(pool), [f"block {b + 1}" for b in range(pool)])
        self.moving = [*self.cells, *self.names, self.ax.title]
        self.alt = ""
        self.update(index)

    def update(self, index: int) -> None:
        step = self.steps[index]
        owners = [chat for chat in step.running for _ in range(step.held[chat])]
        for b, (cell, name) in enumerate(zip(self.cells, self.names)):
            chat = owners[b] if b < len(owners) else None
            cell.set_facecolor("white" if chat is None else self.OWNERS[chat % len(self.OWNERS)])
            cell.set_hatch("" if chat is None else "//" if chat % 2 else "")
            name.set_text("free" if chat is None else chat_name(chat))
        self.ax.set_title(
            f"Step {step.step}: {len(owners)} of {self.pool} blocks held, {step.free} free",
            fontsize=10,
        )
        blocks = [f"block {b + 1} {name.get_text()}" for b, name in enumerate(self.names)]
        self.alt = (
            f"The pool's {self.pool} blocks at step {step.step}: {series(blocks)}; "
            f"{len(owners)} held, {step.free} free."
        )


def block_grid(steps: Sequence[Step], pool: int, index: int = 0) -> Drawn:
    """The hand case's pool at one step."""
    grid = BlockGrid(steps, pool, index)
    return Drawn(grid.figure, grid.alt)
