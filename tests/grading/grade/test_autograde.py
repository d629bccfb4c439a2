"""nbgrader's autograde, its steps called directly (kvlesson.grading.grade.autograde, worker).

The grading worker runs nbgrader's sanitizing preprocessors and the boxed run itself, and
leaves the grade rows to the grading command; `nbgrader_grades` reads the cells outside the
key as nbgrader's SaveAutoGrades would. Real `nbgrader autograde` runs here beside it on
the same submissions of 02_ceiling (one with a written answer, one handed in untouched), so
that a change upstream (a preprocessor, its order, how a grade or a comment is read) is
caught: the same cells, the same record lines caught in the box, the same box flags, and the
same grades and comments as nbgrader writes into its gradebook.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from kvlesson.authoring.command import copy_course
from kvlesson.grading.box.flags import read_flags
from kvlesson.grading.checks.records import CAUGHT
from kvlesson.grading.course.gradebook import snapshot
from kvlesson.grading.course.results import FORBIDDEN
from kvlesson.grading.grade import autograde, worker
from kvlesson.grading.grade.pool import Job
from support.course import account_env, edit_notebook, instructor_solutions, run_nbgrader

pytestmark = pytest.mark.process

ASSIGNMENT, NOTEBOOK = "02_ceiling", "ceiling"
STUDENTS = {
    "ann": {**instructor_solutions(ASSIGNMENT, NOTEBOOK), "q2_answer": "The ceiling is reserved."},
    "bob": {},  # the release as handed out: the written answer untouched
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class autograded by nbgrader, and by the worker in a copy of the course."""
    base = tmp_path_factory.mktemp("autograde")
    root = copy_course(base / "course", [ASSIGNMENT])
    env = account_env(base / "instructor", "instructor")
    run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], root, env)
    for student, answers in STUDENTS.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        path = folder / f"{NOTEBOOK}.ipynb"
        shutil.copy(root / "notebooks" / ASSIGNMENT / path.name, path)
        edit_notebook(path, answers=answers)
        (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    template = base / "template.db"
    snapshot(root / "gradebook.db", template)  # as the grading run reads it: before nbgrader's
    ours = {}
    for student in STUDENTS:
        job = Job(str(root), ASSIGNMENT, student, str(base / "jobs" / student), str(template), [])
        Path(job.private).mkdir(parents=True)
        ours[student] = worker.grade_one(job)
    run_nbgrader(["autograde", ASSIGNMENT, "--force"], root, env)
    return root, ours


def theirs(root: Path, student: str) -> nbformat.NotebookNode:
    path = root / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("student", STUDENTS)
def test_the_same_notebook_comes_out_of_both(graded, student):
    root, ours = graded
    result = ours[student]
    assert result.graded, result.failure
    mine = nbformat.read(Path(result.autograded) / f"{NOTEBOOK}.ipynb", as_version=4)
    nbgraders = theirs(root, student)
    assert [c.source for c in mine.cells] == [c.source for c in nbgraders.cells]
    assert [c.metadata.get(CAUGHT) for c in mine.cells] == [
        c.metadata.get(CAUGHT) for c in nbgraders.cells
    ]
    assert any(c.metadata.get(CAUGHT) for c in mine.cells), "the hidden tests printed records"
    # the box saw the same (but for the forbidden functions that ran: only the worker gives
    # the box the assignment's ledger)
    boxed = [read_flags(nb) for nb in (mine, nbgraders)]
    assert [(b, [f for f in flags if f.kind != FORBIDDEN]) for b, flags in boxed] == [
        (True, []),
        (True, []),
    ]


@pytest.mark.parametrize("student", STUDENTS)
def test_the_grades_and_comments_are_what_nbgrader_writes(graded, student):
    root, ours = graded
    mine = ours[student].notebooks[NOTEBOOK]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="kvlesson") as gb:
        notebook = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student)
        grades = {
            g.name: {"auto_score": g.auto_score, "needs_manual_grade": g.needs_manual_grade}
            for g in notebook.grades
        }
        comments = {c.name: c.auto_comment for c in notebook.comments}
    assert mine.grades == grades  # 0 and 0.0 alike: the gradebook's column is a float
    assert mine.comments == comments
    written = grades["q2_answer"]
    expected = {"ann": (None, True), "bob": (0, False)}[student]  # a person grades what is written
    assert (written["auto_score"], written["needs_manual_grade"]) == expected


def test_a_notebook_nbgrader_cannot_read_fails_in_nbgraders_words():
    not_graded = autograde.NotGraded(autograde.in_words("[ERROR] NotJSONError: x"), "")
    assert "is not a notebook" in not_graded.failure
    old = autograde.in_words(f"[ERROR] {autograde.OLD_SCHEMA}")
    assert "grading information of a cell" in old
