"""Every graded assignment, end to end through the one grading command, in the box.

A student who submits the instructor's answers to every assignment of the course is
graded by `kvlesson grade ASSIGNMENT ... --course ROOT` (autograde with each
kernel in the bubblewrap box, then marking against keys/ outside the kernel), as
docs/instructors.md says. Each assignment must give that student every autograded point
and raise no flag: a box that mistakes the course's own code for a cheat (a file it
writes, a process it starts) would zero honest students, and only a real run shows it.
test_cheats.py grades one assignment against every cheat; this reads every assignment of the
course the end-to-end tier grades once a run (`graded_course`, tests/system/conftest.py),
where ada hands in the instructor's answers to each.
"""

from __future__ import annotations

import csv

import pytest
from nbgrader.api import Gradebook

from kvlesson.grading.course.key import key_path, read_key
from support.graded_course import EVERY, GRADED, notebook_name
from support.paths import ROOT

COURSE_ID = "kvlesson"  # c.CourseDirectory.course_id in nbgrader_config.py


@pytest.mark.parametrize("assignment", GRADED)
def test_right_answers_get_every_autograded_point_and_no_flag(graded_course, assignment):
    key = read_key(key_path(ROOT, assignment))
    expected = {grade_id: float(ex["points"]) for grade_id, ex in key["exercises"].items()}
    course = graded_course.root
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        notebook = gb.find_submission_notebook(notebook_name(assignment), assignment, EVERY)
        scores = {grade.name: grade.score for grade in notebook.grades if grade.name in expected}
    assert expected and scores == expected
    with (course / "flags" / f"{assignment}.csv").open(newline="") as flags:
        assert [row for row in csv.DictReader(flags) if row["student"] == EVERY] == []
