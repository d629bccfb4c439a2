"""Every graded assignment, end to end through the one grading command, in the box.

A student who submits the instructor's answers to every assignment of the course is
graded by `kvlesson grade ASSIGNMENT ... --course ROOT` (autograde with each
kernel in the bubblewrap box, then marking against keys/ outside the kernel), as
docs/instructors.md says. Each assignment must give that student every autograded point
and raise no flag: a box that mistakes the course's own code for a cheat (a file it
writes, a process it starts) would zero honest students, and only a real run shows it.
test_cheats.py grades one assignment against every cheat; this grades every assignment.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from kvlesson.authoring import command
from kvlesson.grading.course.key import key_path, read_key
from support.course import (
    account_env,
    edit_notebook,
    generate,
    instructor_solutions,
    run_grade,
)
from support.paths import ROOT

COURSE_ID = "kvlesson"  # c.CourseDirectory.course_id in nbgrader_config.py
GRADED = [name for name in command.assignments(ROOT) if command.has_exercises(name)]
STUDENT = "ace"


def notebook_name(assignment: str) -> str:
    (path,) = (ROOT / "solutions" / assignment).glob("*.ipynb")
    return path.stem


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """A course of every graded assignment; the student's answers submitted, every
    assignment graded by the one command."""
    base = tmp_path_factory.mktemp("every_assignment")
    root = command.copy_course(base / "course", GRADED)
    env = account_env(base / "instructor", "instructor")
    generate(root, GRADED, env)  # nbgrader's generate_assignment --force, one process for all
    for assignment in GRADED:
        notebook = notebook_name(assignment)
        folder = root / "submitted" / STUDENT / assignment
        folder.mkdir(parents=True)
        shutil.copy(root / "notebooks" / assignment / f"{notebook}.ipynb", folder)
        (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
        edit_notebook(
            folder / f"{notebook}.ipynb", answers=instructor_solutions(assignment, notebook)
        )
    run_grade(root, GRADED, env)  # every assignment in one run, two at a time
    return root


@pytest.mark.parametrize("assignment", GRADED)
def test_right_answers_get_every_autograded_point_and_no_flag(graded, assignment):
    key = read_key(key_path(ROOT, assignment))
    expected = {grade_id: float(ex["points"]) for grade_id, ex in key["exercises"].items()}
    notebook = notebook_name(assignment)
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        grades = gb.find_submission_notebook(notebook, assignment, STUDENT).grades
        scores = {grade.name: grade.score for grade in grades if grade.name in expected}
    assert expected and scores == expected
    with (graded / "flags" / f"{assignment}.csv").open(newline="") as flags:
        assert [row for row in csv.DictReader(flags) if row["student"] == STUDENT] == []
