"""A card's memory drawn as one bar, shared by notebook 1's memory bar and notebook 5's plan.

The bar holds a part per segment (weights, reserve, pool, unused), each with its size written
on it, a dashed line at the share, and, when the weights and the reserve pass the share, the
part of them past the line crossed out in vermilion: over the budget. That box has its own
legend entry (its hatch, not its colour alone, tells it apart). The unused part is what the
lesson defines, the card less the share (from the line to the card's end), drawn under the
other parts: when the weights and the reserve pass the line, the crossed-out box over them is
filled in the unused part's colour, so the unused part shows its whole width from the line on,
as its label says (walk item 17), and the box says what of it the weights and reserve need. A size is
written on the part of a segment the box leaves free when that is wide enough, else across the
whole segment, always on a white patch, so no label is lost under a hatch. Every bar is edged
in black, so its shape reads whatever its fill.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from matplotlib.figure import Figure

from kvlesson.lesson.figures import EDGE, LABEL_BOX, MIN_TEXT_PT
from kvlesson.memory.floor import MemoryParts

OVER_THE_BUDGET = "over the budget"  # the crossed-out box's name in the legend
OVER_HATCH = "xx"


@dataclass
class StackedBar:
    """The moving artists of a card drawn as one bar: a bar per part (`parts`: name, colour,
    hatch), their labels, the crossed-out part past the share line, and that line."""

    names: list[str]
    bars: list
    labels: list
    over: object
    line: object

    @classmethod
    def on(cls, ax, parts: tuple[tuple[str, str, str], ...], over_colour: str) -> "StackedBar":
        bars = [
            ax.barh(0, 0, color=colour, hatch=hatch, edgecolor=EDGE, linewidth=0.8, label=name)[0]
            for name, colour, hatch in parts
        ]
        bars[-1].set_zorder(0.5)  # the unused part lies under the weights and the reserve
        return cls(
            [name for name, _, _ in parts],
            bars,
            [
                ax.text(0, 0, "", ha="center", va="center", fontsize=MIN_TEXT_PT, bbox=LABEL_BOX)
                for _ in parts
            ],
            # filled as the unused part it lies on, so that part shows from the share line on
            ax.barh(0, 0, color=parts[-1][1], hatch=OVER_HATCH, edgecolor=over_colour)[0],
            ax.axvline(0, color="black", linestyle="--", linewidth=1.5),
        )

    @property
    def artists(self) -> list:
        return [*self.bars, self.over, *self.labels, self.line]

    def legend(self, figure: Figure) -> None:
        """Every part and the crossed-out box, in one row under the axes."""
        figure.legend(
            [*self.bars, self.over],
            [*self.names, OVER_THE_BUDGET],
            loc="outside lower center",
            ncol=len(self.bars) + 1,
            frameon=False,
            fontsize=MIN_TEXT_PT,
        )

    def show(
        self,
        segments: Sequence[tuple[float, float]],
        allowed: float,
        needed: float,
        card: float,
        unit: float,
        label: Callable[[int, float], str],
        least: float,
    ) -> None:
        """Draw the parts from their (start, width) in bytes along a card of `card` bytes, in
        units of `unit` bytes; cross out what the weights and reserve (`needed`) take past the
        budget (`allowed`); write `label(part, width)` on the longest free stretch of a part
        when that stretch is at least `least` of the card, else across the whole part when
        the part is, else nothing."""
        allowed, needed, card = float(allowed), float(needed), float(card)
        over_end = min(max(needed, allowed), card)
        for bar, text, part, (left, width) in zip(
            self.bars, self.labels, range(len(self.bars)), segments
        ):
            right = min(left + width, card)
            bar.set_x(left / unit)
            bar.set_width(max(right - left, 0) / unit)
            start, end = free_stretch(left, right, allowed, over_end)
            if end - start < least * card:
                start, end = left, right  # over the crossed-out box, on its white patch
            text.set_position(((start + end) / 2 / unit, 0))
            text.set_text(label(part, width) if end - start >= least * card else "")
        self.over.set_x(allowed / unit)
        self.over.set_width((over_end - allowed) / unit)
        self.line.set_xdata([allowed / unit] * 2)

    def clear(self) -> None:
        """An empty bar: no part, no label, nothing crossed out."""
        for bar, text in zip(self.bars, self.labels):
            bar.set_width(0)
            text.set_text("")
        self.over.set_width(0)


def free_stretch(
    left: float, right: float, over_start: float, over_end: float
) -> tuple[float, float]:
    """The longer of the two stretches of [left, right] outside [over_start, over_end] (all
    of it when nothing is crossed out)."""
    if over_end <= over_start:
        return left, right
    before = (left, min(right, over_start))
    after = (max(left, over_end), right)
    return max(before, after, key=lambda stretch: stretch[1] - stretch[0])


def card_segments(parts: MemoryParts) -> list[tuple[float, float]]:
    """(start, width) in bytes of the weights, the reserve, the pool and the unused part as the
    lesson defines it: the card less the share, from the share line to the card's end."""
    weights, reserve, pool, _ = parts.segments()
    return [weights, reserve, pool, (parts.allowed_bytes, parts.unused_bytes)]
