"""One entry never stops the class: what a student's text, name or date can do to storing
(kvlesson.grading.grade.store, command; kvlesson.grading.course.text, results).

A flag carries the student's text (a file's name, a cell's first line, collect's notes):
it reaches the gradebook's SQLite, a CSV an instructor opens in a spreadsheet, and a
terminal. Here such text is made printable and storable at the source (every Flag), a CSV
cell never starts a formula, a folder name no gradebook can hold is named and left out, a
time nbgrader cannot read is flagged, and a result whose storing fails becomes that
student's failure while the class goes on.
"""

from __future__ import annotations

import argparse
import csv
import os
import sqlite3
import types

import pytest

from kvlesson.grading.course.folders import MARKER, Marker
from kvlesson.grading.course.results import Flag, SubmissionResult
from kvlesson.grading.course.text import csv_cell, terminal_safe
from kvlesson.grading.grade import command, store, summary

NOT_UTF8 = os.fsdecode(b"caf\xe9")


def test_a_flag_is_one_printable_line_the_gradebook_can_store():
    flag = Flag(f"left out: {NOT_UTF8}.py\n  ann · x · y: accused\x1b[2J", cell="x\ny")
    assert "\n" not in flag.reason and "\x1b" not in flag.reason and "\\x1b" in flag.reason
    assert "caf\\xe9.py" in flag.reason and flag.cell == "x\\ny"
    with sqlite3.connect(":memory:") as db:  # what failed the whole class's commit before
        db.execute("create table t (x text)")
        db.execute("insert into t values (?)", (flag.reason,))


def test_csv_cells_never_start_a_formula_and_logs_move_no_cursor():
    assert csv_cell('=HYPERLINK("http://x","y")') == '\'=HYPERLINK("http://x","y")'
    assert [csv_cell(v) for v in ("+1", "-1", "@x", "\tx", "ok", 3)] == [
        "'+1",
        "'-1",
        "'@x",
        "'\tx",
        "ok",
        3,
    ]
    assert terminal_safe("a\x1b[2Jb\nc\rd") == "a\\x1b[2Jb\nc\\rd"


def test_the_flags_file_escapes_what_the_student_wrote(tmp_path):
    from kvlesson.grading.course.results import Graded

    flag = Flag('=HYPERLINK("http://evil","open me")', student="ann", notebook="floor_plan")
    path = summary.write_flags_file(
        tmp_path, "01_floor_plan", [Graded("ann", "floor_plan", 1.0, 6.0, (flag,))]
    )
    rows = list(csv.reader(path.open()))
    assert rows[1][3].startswith("'=HYPERLINK"), rows


def test_a_folder_name_no_gradebook_can_hold_is_never_a_student(tmp_path):
    assert store.id_problem("ann") == ""
    for odd in (NOT_UTF8, "two\nlines", "x" * 200, ".hidden"):
        assert store.id_problem(odd), odd


def test_a_time_nbgrader_cannot_read_is_flagged_not_fatal():
    result = SubmissionResult("01_floor_plan", "ann", "the 32nd of Never", True)
    assert store.submission_time(result) is None
    assert "cannot be read" in result.flags[-1].reason
    later = SubmissionResult("01_floor_plan", "bob", "9999-12-31 23:59:59.999999 UTC", True)
    assert store.submission_time(later).year == 9999 and not later.flags


def test_a_result_that_cannot_be_stored_becomes_that_students_failure(tmp_path, monkeypatch):
    """The gradebook refuses one student's result: that student is stored as not graded,
    with why; the next student is stored as usual."""
    stored = []

    def grades(course, assignment, result):
        if result.student == "ann" and result.graded:
            raise UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed")
        stored.append((result.student, result.graded, result.failure))

    def files(course, assignment, result):
        folder = tmp_path / "autograded" / result.student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        Marker.of(result).write(folder / MARKER)

    monkeypatch.setattr(command, "store_grades", grades)
    monkeypatch.setattr(command, "store_files", files)
    course = type("C", (), {"root": tmp_path, "submitted": tmp_path / "submitted"})()
    (tmp_path / summary.FLAGS_FOLDER).mkdir()
    for student in ("ann", "bob"):
        result = command.store_guarded(
            course, SubmissionResult("01_floor_plan", student, None, True), report=print
        )
        assert result.graded is (student == "bob")
    assert stored[0][0] == "ann" and not stored[0][1]
    assert "storing its result failed (UnicodeEncodeError" in stored[0][2]
    assert stored[1] == ("bob", True, "")
    assert Marker.read(tmp_path / "autograded" / "ann" / "01_floor_plan" / MARKER).failure


def test_a_worker_starts_before_the_course_is_read_and_stops_if_nothing_is_graded(monkeypatch):
    """The command starts one worker first, so that its imports (about 1 s of a core) run
    beside the command's reading of the course's configuration (which imports nbgrader);
    when the run then finds nothing to grade, that worker is stopped at once."""
    said = []

    class Noted:
        def __init__(self, n, run, seconds):
            said.append(("started", n))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            said.append(("ended",))

        def stop(self):
            said.append(("stopped",))

    def no_course(cwd, given):
        said.append(("course read",))
        raise ValueError("no course here")

    monkeypatch.setattr(command, "Workers", Noted)
    monkeypatch.setattr(command.folders, "course_root", no_course)
    args = argparse.Namespace(
        assignments=["01_floor_plan"],
        report=False,
        names=False,
        course=None,
        force=False,
        jobs=2,
        timeout=600.0,
    )
    assert command.run(args) == 2
    assert said == [("started", 1), ("course read",), ("stopped",), ("ended",)]


@pytest.mark.parametrize(
    "waiting, asked",
    [
        ([], ["stopped"]),
        (["ann", "bob", "cy"], [("grow to", 2), ("given", 3)]),
    ],
)
def test_workers_grow_to_the_submissions_that_wait_and_none_are_kept_for_none(
    monkeypatch, tmp_path, waiting, asked
):
    """The worker started early is stopped when every submission has its result already (a
    run again); otherwise the pool grows to --jobs, never past the submissions that wait."""
    said = []

    class Noted:
        run_folder = tmp_path

        def stop(self):
            said.append("stopped")

        def grow(self, n):
            said.append(("grow to", n))

        def run(self, todo):
            said.append(("given", len(todo)))
            return iter(())

    monkeypatch.setattr(command, "pending", lambda course, assignment, force: waiting)
    monkeypatch.setattr(command, "snapshot", lambda database, to: None)
    course = types.SimpleNamespace(root=tmp_path, database=lambda: tmp_path / "gradebook.db")
    assert command.grade_pending(course, ["01_floor_plan"], False, 2, Noted()) == []
    assert said == asked
