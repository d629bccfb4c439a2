"""Recording assignments in the gradebook, as `nbgrader generate_assignment` records them.

nbgrader can grade only an assignment whose notebooks, cells and hidden tests are in the
gradebook, and only generating an assignment puts them there. A fresh clone already holds
the release (notebooks/), and the formgrader offers Release on every assignment in it, so
an assignment can reach students without ever being recorded. `record_assignments` records
what is missing; `kvlesson generate` calls it for a new clone, and the
grading command for each assignment it grades. It never generates an assignment that is
already recorded: nbgrader refuses to once there are submissions, and then deletes the
release's notebook.

All the assignments missing go through one nbgrader process (started in isolated mode,
`kvlesson.grading.course.isolated`, in the course root): about 0.2 s each instead of several
seconds for a process each.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from kvlesson.grading.course import folders, isolated
from kvlesson.grading.course.folders import Course


def missing(course: Course, names: list[str]) -> list[str]:
    """The assignments of `names` that the gradebook does not hold with their notebooks.
    An earlier record without notebooks (and the empty submissions nbgrader hung on it
    after a failed autograde) is removed, so that generating can record it afresh."""
    from nbgrader.api import MissingEntry

    if not course.database().is_file():
        return list(names)
    out = []
    with course.gradebook() as gb:
        for name in names:
            try:
                recorded = gb.find_assignment(name)
            except MissingEntry:
                out.append(name)
                continue
            if not recorded.notebooks:
                gb.remove_assignment(name)
                out.append(name)
    return out


def record_assignments(course: Course, names: list[str]) -> list[str]:
    """Record in the gradebook each assignment of `names` that it does not hold yet, from
    solutions/ (which also writes its release into notebooks/); the ones recorded now."""
    todo = missing(course, names)
    if todo:
        generate(course.root, todo)
    return todo


def generate(root: Path, names: list[str]) -> None:
    """nbgrader's generate_assignment --force for each of `names` in the course `root`, in
    one process: each recorded in the gradebook and released into notebooks/. RuntimeError
    with nbgrader's words for those that failed."""
    done = subprocess.run(
        [*isolated.python("kvlesson.grading.course.gradebook"), *names],
        cwd=root,
        capture_output=True,
        text=True,
    )
    try:
        failed = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        failed = {name: done.stderr[-2000:] for name in names}
    if done.returncode != 0 or failed:
        raise RuntimeError(
            "\n".join(
                f"nbgrader generate_assignment {name} --force failed in {root}:\n{why}"
                for name, why in failed.items()
            )
        )


def _generate(names: list[str]) -> dict[str, str]:
    """Generate each assignment of `names` in the course root this process starts in, with
    nbgrader's API (one process for all); nbgrader's log of each that failed."""
    from nbgrader.apps import NbGraderAPI

    root, config = folders.course_root(Path.cwd())
    config.CourseDirectory.root = str(root)
    api = NbGraderAPI(config=config)
    failed = {}
    for name in names:
        result = api.generate_assignment(name, force=True)
        if not result["success"]:
            failed[name] = (result.get("log") or result.get("error") or "")[-2000:]
    return failed


def snapshot(gradebook: Path, copy: Path) -> None:
    """A consistent copy of the gradebook (SQLite's own backup, safe while it is in use)."""
    with (
        sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True) as src,
        sqlite3.connect(copy) as dst,
    ):
        src.backup(dst)


if __name__ == "__main__":
    print(json.dumps(_generate(sys.argv[1:])))
