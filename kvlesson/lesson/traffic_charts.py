"""Notebook 6's figures: one reply's typing, token by token, and the queue over time.

Made with `matplotlib.figure.Figure`, like `figures`, so nothing is shown
twice; colours from the same Okabe-Ito palette.
"""

from __future__ import annotations

from typing import Sequence

from matplotlib.figure import Figure

from kvlesson.lesson.charts import BLUE, GREEN, ORANGE, VERMILION
from kvlesson.serving.results import ServeResult, Step

COLOURS = (BLUE, VERMILION, GREEN, ORANGE)


def token_gaps(steps: Sequence[Step], chat: int) -> list[float]:
    """The gap before each of `chat`'s tokens after its first, in seconds."""
    times = [step.clock for step in steps if chat in step.wrote]
    return [b - a for a, b in zip(times, times[1:])]


def gap_chart(runs: dict[str, Sequence[Step]], chat: int, title: str = "") -> Figure:
    """The gap before each token of one chat's reply, one line per run (log scale)."""
    figure = Figure(figsize=(9, 3.2), layout="constrained")
    ax = figure.subplots()
    for (label, steps), colour in zip(runs.items(), COLOURS):
        gaps = token_gaps(steps, chat)
        ax.plot(range(2, len(gaps) + 2), [g * 1000 for g in gaps], "-", color=colour, label=label)
    ax.set_yscale("log")
    ax.set_xlabel(f"token of chat {chat}'s reply")
    ax.set_ylabel("gap before it (ms)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    ax.set_title(title, fontsize=10)
    return figure


def queue_chart(runs: dict[str, ServeResult], title: str = "") -> Figure:
    """Requests over time, one line per run: above, waiting inside the server (its own
    queue); below, clients retrying outside after a proxy's 503, which the server never sees."""
    figure = Figure(figsize=(9, 4.6), layout="constrained")
    inside, outside = figure.subplots(2, 1, sharex=True)
    for (label, result), colour in zip(runs.items(), COLOURS):
        inside.step([t for t, _, _ in result.queue], [waiting for _, waiting, _ in result.queue],
                    where="post", color=colour, label=label)
        history = [(0.0, 0), *result.outside, (result.seconds, 0)]
        outside.step([t for t, _ in history], [count for _, count in history], where="post",
                     color=colour, label=label)
    inside.set_ylabel("waiting inside")
    outside.set_ylabel("retrying outside")
    outside.set_xlabel("time (s)")
    for ax in (inside, outside):
        ax.grid(alpha=0.3)
    inside.legend(loc="upper right")
    inside.set_title(title, fontsize=10)
    return figure
