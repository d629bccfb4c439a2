"""What a student hands in: the assignment's notebooks, and nothing beside them.

A submission is graded as its notebooks alone. Whatever else a student hands in beside
them (a module, a data file, a folder, a notebook the assignment does not have) is left
out of the sealed copy the grader works from: the grading box never sees it, so a notebook
can neither read nor import it, in any environment and with any release of IPython. Each
file left out is named in a flag, with the reason in words the student reads in the
feedback. nbgrader's own files stay (`timestamp.txt`, which autograde reads the submission's
time from, and `submission_secret.txt`, which releasing feedback needs); the kernel never
sees them: the box shows it the notebooks only (`box/walls.py`).
docs/instructors.md ("What a student hands in") says the same to instructors.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from kvlesson.grading.course.seal import Refusal
from kvlesson.grading.course.text import printable

# nbgrader's own files of a submission: its time (autograde reads it) and the secret its
# feedback is released under (release_feedback needs it beside the feedback)
NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")


def why_left_out(name: str, notebooks: list[str], folder: bool) -> str:
    """Why the entry `name` of a submission is not graded, in a student's words."""
    wanted = ", ".join(notebooks) or "the assignment's notebook"
    if not folder and name.endswith(".ipynb"):
        return (
            f"a notebook this assignment does not have (it has {wanted}): only the "
            "assignment's own notebooks are graded, under their own names"
        )
    what = "a folder" if folder else "a file"
    return (
        f"{what} handed in beside the notebook: only {wanted} is graded, and nothing "
        "beside it is copied for grading, so the notebook cannot read or import it; put "
        "what it needs in the notebook itself"
    )


def keep_notebooks(sealed: Path, notebooks: Iterable[str]) -> list[Refusal]:
    """Remove from the sealed copy `sealed` every entry but the assignment's `notebooks`
    (file names, "floor_plan.ipynb") and nbgrader's own files; what was removed, each with
    the reason in words."""
    wanted = sorted(notebooks)
    kept = {*wanted, *NBGRADER_FILES}
    removed = []
    for name in sorted(os.listdir(sealed)):
        if name in kept:
            continue
        path = Path(sealed) / name
        folder = stat.S_ISDIR(os.lstat(path).st_mode)
        if folder:
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(
            Refusal(printable(name) + ("/" if folder else ""), why_left_out(name, wanted, folder))
        )
    return removed
