"""The class report's charts: matplotlib figures as PNG, each with its alt text.

Readable in print and by any colour vision: the Okabe-Ito colours
(`kvlesson.lesson.charts`), and every bar also carries a hatch and its count written on
it, so no meaning rests on colour. Each chart comes with an alt text that states the
same numbers in words.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass

from matplotlib.figure import Figure

from kvlesson.grading.course.known_mistakes import is_known
from kvlesson.grading.report.counts import AssignmentReport
from kvlesson.lesson.charts import BLUE, GREY, ORANGE, VERMILION

DPI = 100  # pixels per inch of the PNG; the page shows it at its own size
# the outcomes of an exercise as the chart draws them: (label, colour, hatch)
OUTCOMES = (
    ("passed", BLUE, ""),
    ("failed: a known mistake", VERMILION, "xx"),
    ("failed: no known mistake, or a flag", ORANGE, ".."),
    ("skipped", GREY, "//"),
)


@dataclass(frozen=True)
class Chart:
    """A chart as the page embeds it: the PNG's bytes in base64, and its alt text."""

    png: str
    alt: str


def _png(figure: Figure) -> str:
    out = io.BytesIO()
    figure.savefig(
        out, format="png", dpi=DPI, facecolor="white", metadata={"Software": None}
    )  # no version stamp: the same bytes each run
    return base64.b64encode(out.getvalue()).decode()


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def score_bins(report: AssignmentReport) -> list[tuple[str, int]]:
    """The total scores in whole points: (label, students) for each point from 0 to the
    most; a score between two points counts in the lower."""
    top = int(math.ceil(report.max_score))
    counts = [0] * (top + 1)
    for _, score in report.scores:
        counts[min(top, max(0, int(math.floor(score + 1e-9))))] += 1
    return [(f"{point:g}", count) for point, count in enumerate(counts)]


def score_chart(report: AssignmentReport) -> Chart:
    """How the class's total autograded scores spread: one bar per point."""
    bins = score_bins(report)
    figure = Figure(figsize=(7.5, 3.2))
    ax = figure.subplots()
    bars = ax.bar(
        [label for label, _ in bins],
        [count for _, count in bins],
        color=BLUE,
        hatch="//",
        edgecolor="black",
        linewidth=0.8,
    )
    ax.bar_label(bars, labels=[str(count) for _, count in bins], padding=2)
    ax.set_xlabel(f"total autograded score (out of {report.max_score:g})")
    ax.set_ylabel("students")
    ax.set_ylim(0, max(count for _, count in bins) * 1.2 + 0.5)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{report.assignment}: total scores of {_plural(len(report.scores), 'student')}")
    ax.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    spread = "; ".join(f"{_plural(count, 'student')} scored {label}" for label, count in bins)
    return Chart(
        _png(figure),
        f"Bar chart of the total autograded scores of "
        f"{report.assignment}, out of {report.max_score:g}: {spread}.",
    )


def outcome_counts(report: AssignmentReport) -> list[tuple[str, list[int]]]:
    """For each exercise: passed, failed with a known mistake, failed otherwise, skipped."""
    rows = []
    for exercise in report.exercises:
        known = sum(group.count for group in exercise.failures if is_known(group.key))
        rows.append(
            (exercise.exercise, [exercise.passed, known, exercise.failed - known, exercise.skipped])
        )
    return rows


def outcome_chart(report: AssignmentReport) -> Chart:
    """Each exercise as one bar of the class: passed, failed (a known mistake, or not),
    skipped; each part hatched and its count written on it."""
    rows = outcome_counts(report)
    figure = Figure(figsize=(7.5, 0.55 * len(rows) + 1.6))
    ax = figure.subplots()
    names = [name for name, _ in rows][::-1]
    left = [0] * len(rows)
    for part, (label, colour, hatch) in enumerate(OUTCOMES):
        widths = [counts[part] for _, counts in rows][::-1]
        bars = ax.barh(
            names,
            widths,
            left=left,
            color=colour,
            hatch=hatch,
            edgecolor="black",
            linewidth=0.8,
            label=label,
        )
        ax.bar_label(
            bars,
            labels=[str(w) if w else "" for w in widths],
            label_type="center",
            fontsize=9,
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"},
        )
        left = [a + b for a, b in zip(left, widths)]
    ax.set_xlabel("students")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{report.assignment}: each exercise across the class")
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25 if len(rows) > 2 else -0.4),
        ncol=2,
        frameon=False,
        fontsize=9,
    )
    ax.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    words = "; ".join(
        f"{name}: "
        + ", ".join(f"{count} {label}" for count, (label, _, _) in zip(counts, OUTCOMES))
        for name, counts in rows
    )
    return Chart(
        _png(figure),
        f"Stacked bar chart of each exercise of {report.assignment} across the class. {words}.",
    )
