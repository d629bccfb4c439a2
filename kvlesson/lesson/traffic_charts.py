"""Notebook 6's figures: one reply's typing, token by token, and the queue over time.

Made with `matplotlib.figure.Figure`, like `charts`, so nothing is shown twice. Each line
has its own colour (each at least 3:1 on white), its own line style and marker, and its name
written at its end, so no line is told apart by colour alone; lines that share values are
drawn with their markers offset so that none hides another. Each function returns a
`figures.Drawn`, its alt text written from the numbers it plots.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from kvlesson.lesson.figures import BLUE, GREEN, MIN_TEXT_PT, VERMILION, WIDTH_IN, Drawn, series
from kvlesson.serving.results import ServeResult, Step

# (colour, line style, marker) of the first, second, ... line: black is the fourth colour
STYLES = ((BLUE, "-", "o"), (VERMILION, "--", "s"), (GREEN, ":", "^"), ("black", "-.", "D"))
MARKS = 8  # markers along each line, offset line by line


def token_gaps(steps: Sequence[Step], chat: int) -> list[float]:
    """The gap before each of `chat`'s tokens after its first, in seconds."""
    times = [step.clock for step in steps if chat in step.wrote]
    return [b - a for a, b in zip(times, times[1:])]


def marked(count: int, line: int, lines: int) -> list[int]:
    """Where line number `line` of `lines` puts its markers among `count` points: MARKS of
    them, each line's shifted a little, so markers of lines that overlap sit side by side."""
    every = max(1, count // MARKS)
    start = (line * every) // max(lines, 1)
    return list(range(start, count, every))


def name_at_end(ax: Axes, x: float, y: float, name: str, colour: str, row: int) -> None:
    """A line's name by its point (x, y), tied to it by a thin line, the names of several
    lines a row apart so that none overlaps another."""
    ax.annotate(
        name,
        (x, y),
        xytext=(4, -MIN_TEXT_PT * 1.6 * row),
        textcoords="offset points",
        fontsize=MIN_TEXT_PT,
        color="black",
        va="center",
        arrowprops=dict(arrowstyle="-", color=colour, linewidth=0.8),
    )


def gap_chart(runs: dict[str, Sequence[Step]], chat: int, title: str = "") -> Drawn:
    """The gap before each token of one chat's reply, one line per run (log scale)."""
    figure = Figure(figsize=(WIDTH_IN, 3.6), layout="constrained")
    ax = figure.subplots()
    words = []
    for k, ((label, steps), (colour, style, marker)) in enumerate(zip(runs.items(), STYLES)):
        gaps = [g * 1000 for g in token_gaps(steps, chat)]
        tokens = list(range(2, len(gaps) + 2))
        ax.plot(
            tokens,
            gaps,
            linestyle=style,
            color=colour,
            marker=marker,
            markersize=6,
            markevery=marked(len(gaps), k, len(runs)),
            linewidth=1.6 + 0.6 * (len(runs) - k),
            label=label,
            alpha=0.9,
        )
        worst = max(range(len(gaps)), key=gaps.__getitem__)
        name_at_end(ax, tokens[-1], gaps[-1], label, colour, k)
        words.append(
            f"{label}: gaps from {min(gaps):.1f} ms to {gaps[worst]:.1f} ms, the longest "
            f"before token {tokens[worst]}"
        )
    ax.set_yscale("log")
    ax.set_xlabel(f"token of chat {chat}'s reply")
    ax.set_ylabel("gap before it (ms)")
    ax.grid(alpha=0.3)
    ax.margins(x=0.02)
    ax.set_xlim(right=ax.get_xlim()[1] * 1.22)  # room for the names at the lines' ends
    ax.legend(loc="upper right", fontsize=MIN_TEXT_PT)
    ax.set_title(title, fontsize=10)
    alt = (
        f"Line chart{' (' + title + ')' if title else ''}, log scale, of the gap before each "
        f"token of chat {chat}'s reply, one line per run. {'; '.join(words)}."
    )
    return Drawn(figure, alt)


def queue_chart(runs: dict[str, ServeResult], title: str = "") -> Drawn:
    """Requests over time, one line per run: above, waiting inside the server (its own
    queue); below, clients retrying outside after a proxy's 503, which the server never sees."""
    figure = Figure(figsize=(WIDTH_IN, 5.0), layout="constrained")
    inside, outside = figure.subplots(2, 1, sharex=True)
    words = []
    for k, ((label, result), (colour, style, marker)) in enumerate(zip(runs.items(), STYLES)):
        waiting = [(t, count) for t, count, _ in result.queue]
        retrying = [(0.0, 0), *result.outside, (result.seconds, 0)]
        for ax, points in ((inside, waiting), (outside, retrying)):
            ax.step(
                [t for t, _ in points],
                [count for _, count in points],
                where="post",
                color=colour,
                linestyle=style,
                marker=marker,
                markersize=5,
                markevery=marked(len(points), k, len(runs)),
                linewidth=1.4 + 0.5 * (len(runs) - k),
                label=label,
                alpha=0.9,
            )
        most_in = max(waiting, key=lambda p: p[1], default=(0.0, 0))
        most_out = max(retrying, key=lambda p: p[1])
        name_at_end(inside, most_in[0], most_in[1], label, colour, k)  # named at its peak
        words.append(
            f"{label}: at most {most_in[1]} waiting inside (at {most_in[0]:.0f} s), "
            f"at most {most_out[1]} retrying outside"
        )
    inside.set_ylabel("waiting inside")
    outside.set_ylabel("retrying outside")
    outside.set_xlabel("time (s)")
    for ax in (inside, outside):
        ax.grid(alpha=0.3)
    inside.legend(loc="upper right", fontsize=MIN_TEXT_PT)
    inside.set_title(title, fontsize=10)
    seconds = max(result.seconds for result in runs.values())
    alt = (
        f"Two step charts over {seconds:.0f} s{' (' + title + ')' if title else ''}, one line "
        f"per run ({series(list(runs))}): above, requests waiting inside the server; below, "
        f"clients retrying outside after the proxy's 503. {'; '.join(words)}."
    )
    return Drawn(figure, alt)
