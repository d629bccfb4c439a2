"""The course with every graded assignment, graded once a run, that several test files read.

The class report's synthetic class (support.report_class) hands in 01_floor_plan and 02_ceiling,
and ada, whose answers are the instructor's, hands in every other assignment too; one run of
the one grading command grades it all. support.shared makes it once a run: the first xdist
worker that asks grades it, the other reads it (tests/system/conftest.py's `graded_course`).
test_class_report.py reads the reports of that class; test_grade_every_assignment.py reads ada's
marks and flags in each assignment. Before, each graded a course of its own.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from kvlesson.authoring import command
from support.course import (
    account_env,
    edit_notebook,
    generate,
    instructor_solutions,
    set_cell_timeout,
)
from support.paths import ROOT
from support.patience import HANG, scaled
from support.report_class import ASSIGNMENTS, CLASS, handed_in, submit
from support.shared import once

GRADED = [name for name in command.assignments(ROOT) if command.has_exercises(name)]
EVERY = "ada"  # the class's student who hands in every assignment, the instructor's answers


def notebook_name(assignment: str) -> str:
    (path,) = (ROOT / "solutions" / assignment).glob("*.ipynb")
    return path.stem


@dataclass
class GradedCourse:
    """The graded course: its root, the instructor's environment, and the grading run."""

    root: Path
    env: dict
    run: subprocess.CompletedProcess


def hand_in_everything(root: Path, assignment: str) -> None:
    """EVERY's submission of `assignment`: the release with the instructor's answers."""
    notebook = notebook_name(assignment)
    folder = root / "submitted" / EVERY / assignment
    folder.mkdir(parents=True)
    shutil.copy(root / "notebooks" / assignment / f"{notebook}.ipynb", folder)
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    edit_notebook(folder / f"{notebook}.ipynb", answers=instructor_solutions(assignment, notebook))


def grade_the_course(base: Path) -> None:
    """Copy the course, generate every graded assignment, hand the class in, and grade it all
    in one run of `kvlesson grade` (two at a time); keep the run's words beside the course."""
    root = command.copy_course(base / "course", GRADED)
    set_cell_timeout(root, scaled(10))
    env = account_env(base / "instructor", "instructor")
    generate(root, GRADED, env)  # nbgrader's generate_assignment --force, one process for all
    for assignment in GRADED:
        if assignment in ASSIGNMENTS:
            for student in handed_in(assignment):
                submit(root, student, assignment)
        else:
            hand_in_everything(root, assignment)
    done = subprocess.run(
        [sys.executable, "-m", "kvlesson", "grade", *GRADED, "--course", str(root)],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    (base / "run.json").write_text(
        json.dumps(
            {"args": done.args, "code": done.returncode, "out": done.stdout, "err": done.stderr}
        )
    )
    (base / "env.json").write_text(json.dumps(env))


def graded(tmp_path_factory) -> GradedCourse:
    """Every graded assignment, graded once a run (see the module's docstring)."""
    assert EVERY in {s.id for s in CLASS}, "ada hands in every assignment"
    base = once(tmp_path_factory, "graded-course", grade_the_course)
    run = json.loads((base / "run.json").read_text())
    return GradedCourse(
        base / "course",
        json.loads((base / "env.json").read_text()),
        subprocess.CompletedProcess(run["args"], run["code"], run["out"], run["err"]),
    )
