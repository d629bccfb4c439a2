"""Notebook 6's figures: one reply's typing, token by token, and the queue over time.

Made with `matplotlib.figure.Figure`, like `charts`, so nothing is shown twice. Each line
has its own colour (each at least 3:1 on white), its own line style and marker, and its name
written by its end (`name_ends`, spread so that no two names overlap), so no line is told
apart by colour alone; lines that share values are
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


NAME_GAP = 0.1  # the least height between two lines' names, in fractions of the axes


def name_ends(ax: Axes, ends: list[tuple[float, float, str, str]]) -> None:
    """Each line's name by its point, tied to it by a thin line: `ends` holds (x, y, name,
    colour) in data coordinates. The names are spread upwards from their points, at least
    NAME_GAP of the axes apart and inside them, so that none overlaps another, nor the axes'
    labels, even where several lines end at one place."""
    ax.autoscale_view()  # the limits the lines give, before points become fractions of them
    to_axes = ax.transAxes.inverted()
    placed = []
    for x, y, name, colour in sorted(ends, key=lambda end: (end[1], end[2])):
        ax_x, ax_y = to_axes.transform(ax.transData.transform((x, y)))
        text_y = max(ax_y + 0.06, placed[-1] + NAME_GAP if placed else 0.0, NAME_GAP)
        placed.append(min(text_y, 0.95))
        ax.annotate(
            name,
            (x, y),
            xytext=(min(ax_x + 0.02, 0.8), placed[-1]),
            textcoords="axes fraction",
            fontsize=MIN_TEXT_PT,
            color="black",
            va="center",
            arrowprops=dict(arrowstyle="-", color=colour, linewidth=0.8),
        )


def gap_chart(runs: dict[str, Sequence[Step]], chat: int, title: str = "") -> Drawn:
    """The gap before each token of one chat's reply, one line per run (log scale)."""
    figure = Figure(figsize=(WIDTH_IN, 3.6), layout="constrained")
    ax = figure.subplots()
    words, ends = [], []
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
        ends.append((tokens[-1], gaps[-1], label, colour))
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
    name_ends(ax, ends)
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
    words, peaks = [], []
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
        peaks.append((most_in[0], most_in[1], label, colour))  # each named at its peak
        words.append(
            f"{label}: at most {most_in[1]} waiting inside (at {most_in[0]:.0f} s), "
            f"at most {most_out[1]} retrying outside"
        )
    name_ends(inside, peaks)
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
