"""Notebook 3's figures: the cap sweep in two panels, and the best cap at a few pool sizes.

Shown through `charts` (charts.sweep_chart, charts.knee_by_pool), like every figure of
notebooks 1-4; each writes its alt text from the numbers it draws.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

import pandas as pd
from matplotlib.figure import Figure

from kvlesson.lesson import quote
from kvlesson.lesson.figures import (
    BLUE,
    DARK_GREY,
    EDGE,
    MIN_TEXT_PT,
    PURPLE,
    SKY,
    VERMILION,
    WARNING,
    WIDTH_IN,
    Drawn,
    series,
)


def doubling_words(knee: int, caps: Sequence[int]) -> str:
    """'doubling it to 128 adds under 10% to tokens/s': what makes `knee` the knee."""
    later = [cap for cap in caps if cap > knee]
    return f"doubling it {f'to {later[0]} ' if later else ''}adds under 10% to tokens/s"


def knee_words(knee: int | None, caps: Sequence[int]) -> str:
    """What the grey line marks: the cap whose own doubling adds under 10% to tokens/s."""
    return "" if knee is None else f"grey line: cap {knee}; {doubling_words(knee, caps)}"


class SweepChart:
    """Figure 3: tokens/s and the wait between words against the cap, the knee marked.

    The axes are set once: the caps of the first sweep, and `tops` (the most
    tokens/s and the longest wait in ms to show; by default the first
    sweep's). An explorer passes the most over its slider's range, so moving
    a slider moves the lines, never the axes.
    """

    def __init__(
        self,
        sweep: pd.DataFrame,
        knee: int | None,
        cap: int | None = None,
        title: str = "",
        tops: tuple[float, float] | None = None,
    ):
        self.figure = Figure(figsize=(WIDTH_IN, 3.6), layout="constrained")
        self.rate_ax, self.wait_ax = self.figure.subplots(1, 2)
        (self.rate_line,) = self.rate_ax.plot([], [], "o-", color=BLUE)
        (self.wait_line,) = self.wait_ax.plot([], [], "s-", color=VERMILION)
        self.knees = [
            ax.axvline(1, color=DARK_GREY, linewidth=2) for ax in (self.rate_ax, self.wait_ax)
        ]
        self.marks = [
            ax.plot(
                [],
                [],
                "o",
                markersize=13,
                markerfacecolor="none",
                markeredgecolor="black",
                markeredgewidth=2,
            )[0]
            for ax in (self.rate_ax, self.wait_ax)
        ]
        if tops is None:
            tops = (sweep["tokens_per_s"].max(), sweep["wait_ms"].max())
        self.tops = tops
        self.fix_axes(list(sweep["cap"]))
        self.title = self.figure.suptitle(" \n ", fontsize=10)  # two lines: room for both
        self.message = self.no_start_box()
        self.moving = [
            self.rate_line,
            self.wait_line,
            *self.knees,
            *self.marks,
            self.title,
            self.message,
        ]
        self.alt = ""
        self.update(sweep, knee, cap, title)

    def fix_axes(self, caps: list[int]) -> None:
        """Both panels over the sweep's caps (doubling: a log scale) and up to `tops`, fixed
        once, so an explorer's move redraws only what moves."""
        for ax, label, top in (
            (self.rate_ax, "tokens/s, all chats together", self.tops[0]),
            (self.wait_ax, "wait between words (ms)", self.tops[1]),
        ):
            ax.set_xscale("log", base=2)
            ax.set_xlim(caps[0] / 1.5, caps[-1] * 1.5)
            ax.set_xticks(caps, [str(c) for c in caps], fontsize=MIN_TEXT_PT)
            ax.tick_params(axis="y", labelsize=MIN_TEXT_PT)
            ax.set_ylim(0, top * 1.1)
            ax.set_xlabel("most chats at once (cap)")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)

    def no_start_box(self):
        """The message when the server does not start: over the left panel, clear of the
        right's y label (empty until a share cannot start)."""
        return self.rate_ax.text(
            0.5,
            0.5,
            "",
            transform=self.rate_ax.transAxes,
            ha="center",
            va="center",
            fontsize=MIN_TEXT_PT,
            color=WARNING,
            bbox=dict(facecolor="white", edgecolor=VERMILION),
        )

    def update(
        self, sweep: pd.DataFrame, knee: int | None, cap: int | None = None, title: str = ""
    ) -> None:
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
        knee_text = knee_words(knee, caps)
        self.title.set_text("\n".join(line for line in (title, knee_text) if line) or " ")
        self.message.set_visible(False)
        self.alt = sweep_alt(sweep, knee, cap, title)

    def blank(self, message: str) -> None:
        """No lines, and `message` across the left panel: the server does not start here."""
        for line in (self.rate_line, self.wait_line, *self.marks):
            line.set_data([], [])
        for line in self.knees:
            line.set_visible(False)
        self.title.set_text("No sweep: the server does not start at this share")
        self.message.set_text(textwrap.fill(message, 34))
        self.message.set_visible(True)
        self.alt = f"Two empty line charts of the cap sweep: {message}"


def sweep_alt(sweep: pd.DataFrame, knee: int | None, cap: int | None, title: str) -> str:
    """The sweep in words: both panels' first and last points, the knee, the ringed cap."""

    def point(row) -> str:
        return (
            f"cap {int(row['cap'])}: {quote.count(row['tokens_per_s'])} tokens/s, "
            f"wait {row['wait_ms']:.1f} ms"
        )

    first, last = sweep.iloc[0], sweep.iloc[-1]
    words = [
        f"Two line charts of the cap sweep{' (' + title + ')' if title else ''}, caps "
        f"{int(first['cap'])} to {int(last['cap'])}: tokens/s, all chats together, on the "
        f"left, and the wait between words on the right. {point(first)}; {point(last)}."
    ]
    for label, value in (("The grey line marks", knee), ("The ring marks", cap)):
        row = sweep[sweep["cap"] == value]
        if value is not None and len(row):
            words.append(f"{label} {point(row.iloc[0])}.")
    if knee is not None:
        words.append(f"Cap {knee} is the knee: {doubling_words(knee, list(sweep['cap']))}.")
    return " ".join(words)


def sweep_chart(
    sweep: pd.DataFrame, knee: int | None, cap: int | None = None, title: str = ""
) -> Drawn:
    """Figure 3: the cap sweep in two panels."""
    chart = SweepChart(sweep, knee, cap, title)
    return Drawn(chart.figure, chart.alt)


def knee_by_pool(sweeps: dict[int, pd.DataFrame], caps: Sequence[int] = (32, 64, 128)) -> Drawn:
    """Figure 4: tokens/s at a few caps for several shares; the best cap moves with the pool.

    `sweeps` maps a share (percent) to its cap sweep.
    """
    figure = Figure(figsize=(WIDTH_IN, 3.4), layout="constrained")
    ax = figure.add_subplot()
    colours, hatches = (SKY, BLUE, PURPLE), ("", "//", "..")
    width = 0.8 / len(caps)
    rows = {
        share: [float(s.loc[s["cap"] == cap, "tokens_per_s"].iloc[0]) for cap in caps]
        for share, s in sweeps.items()
    }
    for k, cap in enumerate(caps):
        heights = [row[k] for row in rows.values()]
        bars = ax.bar(
            [i + (k - (len(caps) - 1) / 2) * width for i in range(len(sweeps))],
            heights,
            width,
            color=colours[k % 3],
            hatch=hatches[k % 3],
            edgecolor=EDGE,
            linewidth=0.8,
            label=f"cap {cap}",
        )
        ax.bar_label(bars, [quote.count(h) for h in heights], fontsize=MIN_TEXT_PT)
    ax.set_xticks(range(len(sweeps)), [f"{share}% share" for share in sweeps])
    ax.set_ylabel("tokens/s, all chats together")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.25)
    ax.legend(loc="upper center", ncol=len(caps), frameon=False)
    ax.set_title("The best cap depends on the pool", fontsize=10)
    shares = [
        f"{share}% share: "
        + ", ".join(f"cap {cap} {quote.count(rate)}" for cap, rate in zip(caps, row))
        + f" (best: cap {caps[row.index(max(row))]})"
        for share, row in rows.items()
    ]
    alt = (
        f"Grouped bar chart of tokens/s, all chats together, at caps "
        f"{series([str(c) for c in caps])} for each share. {'; '.join(shares)}."
    )
    return Drawn(figure, alt)
