"""What an instructor reads after a grading run: each student's score and every flag, printed
and written to flags/ASSIGNMENT.csv (the grading command's last step,
`kvlesson.grading.grade.command`)."""

from __future__ import annotations

import csv
from pathlib import Path

from kvlesson.grading.course.results import Graded
from kvlesson.grading.course.text import counted, csv_cell

FLAGS_FOLDER = "flags"  # in the course root: one CSV of flags per assignment


def write_flags_file(root: Path, assignment: str, results: list[Graded]) -> Path:
    """flags/ASSIGNMENT.csv in the course root: one line per flag of the class."""
    path = root / FLAGS_FOLDER / f"{assignment}.csv"
    path.parent.mkdir(exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "notebook", "cell", "reason"])
        for flag in dict.fromkeys(flag for graded in results for flag in graded.flags):
            writer.writerow(
                [csv_cell(text) for text in (flag.student, flag.notebook, flag.cell, flag.reason)]
            )
    return path


def summary(assignment: str, results: list[Graded], flags_file: Path, now: int) -> str:
    """What the instructor reads: each student's score, then every flag, and where
    nbgrader's own log of the run is."""
    lines = [
        f"{assignment}: {counted(len(results), 'notebook')} with a mark "
        f"({counted(now, 'submission')} graded in this run)"
    ]
    lines += [
        f"  {g.student:<20} {g.notebook:<16} {g.score:g} / {g.max_score:g}"
        + ("   NOT GRADED" if g.failure else "")
        + ("   " + counted(len(g.flags), "flag") if g.flags else "")
        for g in results
    ]
    flags = list(dict.fromkeys(flag for graded in results for flag in graded.flags))
    lines.append(
        f"{counted(len(flags), 'flag')} (also in {flags_file} and in the formgrader's comments):"
    )
    lines += [f"  {f.student} · {f.notebook} · {f.cell}: {f.reason}" for f in flags]
    lines.append(f"nbgrader's log of each submission graded: {flags_file.with_suffix('.log')}")
    return "\n".join(lines)
