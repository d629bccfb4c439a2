"""Round four of cheats (issue 37), against the grading command and the exchange, as a student.

A class of 01_floor_plan is graded by `kvlesson grade 01_floor_plan`, the guide's command,
with a due date: honest students among them (one pastes a screenshot into a Markdown cell,
one hands in late, one comes late through a learning platform's download) must get exactly
the mark their answers earn, less the course's late penalty, with the flags the course's
policy gives; each cheat hides a script or a forbidden call in a field the pages read besides
the cells' text (an image's width, an image's address, an attachment, a cell's metadata that
hides its code), or hands in under a name that is markup. Then the feedback and the stored
notebooks are read for anything live, and the gradebook for anything it should not hold.

Apart, as a student account against a real `nbgrader collect` (root only): the walk's race,
the student's submission folder swapped for a link to the instructor's solutions at the
moment collect opens it (inotify, `renameat2(RENAME_EXCHANGE)`), at each of collect's opens.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat
import pytest
from nbgrader.api import Gradebook

from kvlesson.authoring.command import copy_course
from kvlesson.grading.course.key import key_path, read_key
from support.course import (
    ROOT,
    account_env,
    cell_by_id,
    edit_notebook,
    flags_of,
    instructor_solutions,
    read_nb,
    run_as,
    run_nbgrader,
    set_cell_timeout,
)
from support.exchange import ASSIGNMENT as EXCHANGE_ASSIGNMENT, nbgrader, uid
from support.live_html import live
from support.patience import HANG
from support.payloads import PAYLOAD, PNG, SVG
from support.race import SWAPPER

ASSIGNMENT, NOTEBOOK = "01_floor_plan", "floor_plan"
COURSE_ID = "kvlesson"
CELL_TIMEOUT = 10  # seconds, as the other cheats' class (test_cheats.py says why)
DUE = "2026-11-20 12:00:00 UTC"
ON_TIME = "2026-11-20 10:00:00.000000 UTC"
LATE = "2026-11-21 11:00:00.000000 UTC"  # 23 h late: one started day
KEY = read_key(key_path(ROOT, ASSIGNMENT))
POINTS = {grade_id: float(ex["points"]) for grade_id, ex in KEY["exercises"].items()}
FULL = sum(POINTS.values())
LATE_SHARE = 0.10  # nbgrader_config.py: c.LatePolicy.percent_per_day = 10, one started day
SOLVED = instructor_solutions(ASSIGNMENT, NOTEBOOK)
Q1 = "q1_answer"
Q1_TESTS = ("q1_pool_tests", "q1_unused_tests")
GUIDE = (ROOT / "docs" / "instructors.md").read_text()
PATTERN = GUIDE.split("--FileNameCollectorPlugin.named_regexp='", 1)[1].split("'", 1)[0]
TRACKER = "https://tracker.example/pixel.png"
PACKAGE = "\npool_gb = kv.memory_parts(Q1_SHARE, gpu, model).pool_bytes / 1e9\n"
ODD_ID = "ana<img src=x onerror=alert(7)>"  # a teaching assistant's folder, named by a file


def screenshot(after: str, attachments: dict, source: str) -> Callable[[Path], None]:
    """A Markdown cell with `attachments` (pasted images), after the answer cell `after`."""

    def paste(path: Path) -> None:
        nb = read_nb(path)
        cell = nbformat.v4.new_markdown_cell(source, attachments=attachments)
        nb.cells.insert(nb.cells.index(cell_by_id(nb, after)) + 1, cell)
        nbformat.write(nb, path)

    return paste


def hidden_answer(path: Path) -> None:
    """The Question 1 answer cell, its code (a forbidden call) hidden from the grader's view."""
    nb = read_nb(path)
    cell = cell_by_id(nb, Q1)
    cell.metadata["transient"] = {"remove_source": True}
    cell.metadata["jupyter"] = {"source_hidden": True, "outputs_hidden": True}
    nbformat.write(nb, path)


def odd_cells(path: Path) -> None:
    """Tags, an id and a count that would be markup in a page."""
    nb = read_nb(path)
    cell = cell_by_id(nb, Q1)
    cell.metadata["tags"] = [PAYLOAD, "fine-tag"]
    nb.metadata["title"] = PAYLOAD
    nb.metadata["kernelspec"]["display_name"] = PAYLOAD
    nbformat.write(nb, path)


SIZED = (
    "\nfrom IPython.display import publish_display_data\n"
    f"publish_display_data({{'image/png': '{PNG}', 'text/plain': 'my figure'}}, "
    f"metadata={{'image/png': {{'width': '1 onload=alert(5)', 'height': '2 onerror=alert(6)'}}, "
    f"'filenames': {{'image/png': '{TRACKER}'}}}})\n"
)


@dataclass(frozen=True)
class Student:
    id: str
    does: str
    answers: dict[str, str]
    score: float  # the raw mark, before a late penalty
    penalty: float = 0.0
    flags: tuple[str, ...] = ()
    change: Callable[[Path], None] | None = None
    timestamp: str = ON_TIME
    honest: bool = False


CLASS = [
    Student(
        "paster",
        "pastes a screenshot of her working into a Markdown cell (honest)",
        dict(SOLVED),
        FULL,
        change=screenshot(
            Q1,
            {"working.png": {"image/png": PNG}},
            "My working: ![working](attachment:working.png)",
        ),
        honest=True,
    ),
    Student(
        "latecomer",
        "hands in right answers 23 hours after the due date (honest, late)",
        dict(SOLVED),
        FULL,
        penalty=round(FULL * LATE_SHARE, 6),
        flags=(r"late: handed in 23 h after the due date \(2026-11-20 12:00 UTC\)",),
        timestamp=LATE,
    ),
    Student(
        "svgpaster",
        "pastes an SVG that runs a script, names a missing attachment and one named as markup",
        dict(SOLVED),
        FULL,
        change=screenshot(
            Q1,
            {"x.svg": {"image/svg+xml": SVG}, f"{PAYLOAD}.png": {"image/png": PNG}},
            "![a](attachment:x.svg) ![b](attachment:gone.png)",
        ),
        honest=True,
    ),
    Student(
        "widther",
        "shows a figure whose width is `1 onload=...` and whose file is on another site",
        {**SOLVED, Q1: SOLVED[Q1] + SIZED},
        FULL,
        honest=True,
    ),
    Student(
        "hider",
        "calls the forbidden memory_parts in an answer cell whose code is marked hidden",
        {**SOLVED, Q1: SOLVED[Q1] + PACKAGE},
        FULL - sum(POINTS[t] for t in Q1_TESTS),
        flags=(r"work it out without memory_parts",),
        change=hidden_answer,
    ),
    Student(
        "tagger",
        "puts markup in a cell's tags, the notebook's title and its kernel's name",
        dict(SOLVED),
        FULL,
        change=odd_cells,
        honest=True,
    ),
]
BY_ID = {s.id: s for s in CLASS}
ZIPPED = "zoe"  # late by the platform's word: zoe_late_..._floor_plan.ipynb


def write_submission(root: Path, student: Student, folder: Path) -> None:
    folder.mkdir(parents=True)
    path = folder / f"{NOTEBOOK}.ipynb"
    shutil.copy(root / "notebooks" / ASSIGNMENT / path.name, path)
    edit_notebook(path, answers=student.answers)
    if student.change:
        student.change(path)
    (folder / "timestamp.txt").write_text(student.timestamp)


def platform_download(root: Path, env: dict) -> None:
    """The zip a learning platform gives: zoe's right answers, late by the platform's word;
    sorted into submitted/ by the guide's zip_collect."""
    made = Path(tempfile.mkdtemp())
    try:
        write_submission(root, Student(ZIPPED, "", dict(SOLVED), FULL), made / "nb")
        archive = root / "downloaded" / ASSIGNMENT / "archive"
        archive.mkdir(parents=True)
        with zipfile.ZipFile(archive / "submissions.zip", "w") as zipped:
            zipped.write(
                made / "nb" / f"{NOTEBOOK}.ipynb", f"{ZIPPED}_late_1009_5009_{NOTEBOOK}.ipynb"
            )
    finally:
        shutil.rmtree(made)
    run_nbgrader(
        ["zip_collect", ASSIGNMENT, f"--FileNameCollectorPlugin.named_regexp={PATTERN}"], root, env
    )


@dataclass
class Graded:
    course: Path
    run: subprocess.CompletedProcess
    nothing: subprocess.CompletedProcess  # the command before anything was handed in
    env: dict

    def gradebook(self):
        return Gradebook(f"sqlite:///{self.course / 'gradebook.db'}", course_id=COURSE_ID)

    def flags(self, student: str) -> list[str]:
        return flags_of(self.course, ASSIGNMENT, student)

    def stored(self, student: str) -> nbformat.NotebookNode:
        return read_nb(self.course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    base = tmp_path_factory.mktemp("round4")
    root = copy_course(base / "course", [ASSIGNMENT])
    set_cell_timeout(root, CELL_TIMEOUT)
    env = account_env(base / "instructor", "instructor")
    run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], root, env)
    run_nbgrader(["db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}"], root, env)
    grade = [sys.executable, "-m", "kvlesson", "grade", ASSIGNMENT, "--course", str(root)]
    nothing = run_as(grade, base, env)  # nothing handed in yet (the walk's K1)
    for student in CLASS:
        write_submission(root, student, root / "submitted" / student.id / ASSIGNMENT)
    write_submission(
        root, Student(ODD_ID, "", dict(SOLVED), FULL), root / "submitted" / ODD_ID / ASSIGNMENT
    )
    platform_download(root, env)
    done = subprocess.run(
        [*grade, "--jobs", "2"], cwd=base, env=env, capture_output=True, text=True, timeout=HANG
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the odd folder is not graded
    run_nbgrader(["generate_feedback", ASSIGNMENT, "--force"], root, env)
    return Graded(root, done, nothing, env)


def test_with_nothing_handed_in_the_command_says_every_way_in(graded):
    said = graded.nothing.stderr
    assert graded.nothing.returncode == 2, said
    for way in (
        f"nbgrader collect {ASSIGNMENT}",
        f"nbgrader zip_collect {ASSIGNMENT}",
        "submitted/STUDENT/",
    ):
        assert way in said, said


@pytest.mark.parametrize("student", CLASS, ids=[s.id for s in CLASS])
def test_each_student_gets_the_mark_their_answers_earn_less_the_late_penalty(graded, student):
    with graded.gradebook() as gb:
        submission = gb.find_submission(ASSIGNMENT, student.id)
        raw, penalty = submission.score, submission.late_submission_penalty
    assert (raw, penalty) == (pytest.approx(student.score), pytest.approx(student.penalty)), (
        student.id,
        graded.flags(student.id),
    )
    flags = graded.flags(student.id)
    missing = [p for p in student.flags if not any(re.search(p, f) for f in flags)]
    assert not missing, (student.id, flags)
    if student.honest:
        assert flags == [], (student.id, flags)


def test_late_by_a_platforms_word_is_flagged_and_penalized(graded):
    with graded.gradebook() as gb:
        submission = gb.find_submission(ASSIGNMENT, ZIPPED)
        assert submission.score == pytest.approx(FULL)
        assert submission.late_submission_penalty == pytest.approx(FULL * LATE_SHARE)
    assert any("says the learning platform's file name" in f for f in graded.flags(ZIPPED))
    run_nbgrader(["export", "--to", str(graded.course / "grades.csv")], graded.course, graded.env)
    with (graded.course / "grades.csv").open() as grades:
        scores = {r["student_id"]: float(r["score"]) for r in csv.DictReader(grades)}
    assert scores[ZIPPED] == scores["latecomer"] == pytest.approx(FULL * (1 - LATE_SHARE))
    assert scores["paster"] == pytest.approx(FULL)


def test_a_name_that_is_markup_is_never_a_student(graded):
    said = graded.run.stdout + graded.run.stderr
    assert "holds '<': a student id holds only letters" in said, said
    with graded.gradebook() as gb:
        assert not [s.id for s in gb.students if "<" in s.id]
    assert not (graded.course / "autograded" / ODD_ID).exists()


def test_no_page_runs_or_loads_anything_a_student_put_in_any_field(graded):
    """The feedback runs nothing of the students' (its own page's scripts aside); the stored
    notebooks, which the formgrader renders, hold none of it outside the cells' code, which
    every page shows as text."""
    for student in CLASS:
        page = (
            graded.course / "feedback" / student.id / ASSIGNMENT / f"{NOTEBOOK}.html"
        ).read_text()
        body = "<body" + page.split("<body", 1)[1]
        found = [
            p for p in live(body, {"script", "style", "link", "meta"}) if "alert" in p or " on" in p
        ]
        assert not found, (student.id, found)
        stored = graded.stored(student.id)
        shown = json.dumps(
            [stored.metadata]
            + [[c.metadata, c.get("outputs", []), c.get("attachments")] for c in stored.cells]
        )
        for text in (
            TRACKER,
            "onload=alert",
            "onerror=alert",
            "svg+xml",
            "source_hidden",
            "remove_source",
            "<script",
        ):
            assert text not in shown, (student.id, text)


def test_an_honest_screenshot_is_shown_and_the_hidden_code_is_not_hidden(graded):
    page = (graded.course / "feedback" / "paster" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert f"data:image/png;base64,{PNG}" in page and 'alt="working"' in page
    pasted = (
        graded.course / "feedback" / "svgpaster" / ASSIGNMENT / f"{NOTEBOOK}.html"
    ).read_text()
    assert pasted.count("[an image was removed here") == 2, pasted  # the SVG and the missing one
    hidden = graded.stored("hider")
    answer = cell_by_id(hidden, Q1)
    assert "memory_parts" in answer.source and "transient" not in answer.metadata
    shown = (graded.course / "feedback" / "hider" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert "memory_parts" in shown


# ---------------------------------------------------------------------------
# The walk's race on collect, as a student account

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="runs a student account: run as root")
FILLER = 150  # files that sort before the notebook, to slow the copy down (the walk's)
STUDENT = "nobody"  # a system account root can hand a folder to


def race_course(base: Path) -> tuple[Path, Path, Path]:
    """A course, an exchange whose inbound the student may write, and the instructor's
    solutions folder (what the student's link points at)."""
    course = base / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    inbound = base / "exchange" / COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    inbound.chmod(0o1777)
    solutions = base / "instructor" / "kvlesson" / "solutions" / EXCHANGE_ASSIGNMENT
    solutions.mkdir(parents=True)
    (solutions / "ceiling.ipynb").write_text(
        json.dumps({"cells": [{"source": "### BEGIN SOLUTION the instructor's"}]})
    )
    for folder in (base, base / "exchange", base / "exchange" / COURSE_ID):
        folder.chmod(0o755)
    return course, inbound, solutions


def as_student(script: str, *args: str) -> subprocess.Popen:
    """The student's own Python (the system's), running `script` from her shell."""
    return subprocess.Popen(
        ["runuser", "-u", STUDENT, "--", "/usr/bin/python3", "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def student_runs(command: str) -> None:
    done = subprocess.run(
        ["runuser", "-u", STUDENT, "--", "sh", "-c", command], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


@AS_ROOT
@pytest.mark.parametrize("nth_open", [1, 2, 3, 4, 6])
def test_a_folder_swapped_for_the_solutions_at_any_open_of_collect_brings_none_of_them(nth_open):
    base = Path(tempfile.mkdtemp(prefix="kvlesson-race-"))
    try:
        course, inbound, solutions = race_course(base)
        home = base / "home"
        home.mkdir()
        os.chown(home, uid(STUDENT), -1)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        mine = inbound / f"{STUDENT}+{EXCHANGE_ASSIGNMENT}+{stamp}+race"
        link = home / "racelink"
        student_runs(
            f"mkdir '{mine}' && cd '{mine}' && for n in $(seq -w 0 {FILLER - 1}); do "
            f'head -c 65536 /dev/zero > a$n; done && echo \'{{"cells": [], "mine": 1}}\' > ceiling.ipynb && '
            f"printf '{stamp}' > timestamp.txt && ln -s '{solutions}' '{link}'"
        )
        swapper = as_student(SWAPPER, str(mine), str(link), str(nth_open))
        report = mine.parent / "swapped.txt"
        deadline = time.monotonic() + HANG  # a hang guard only: until it watches
        while not report.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        done = nbgrader(
            ["collect", EXCHANGE_ASSIGNMENT, f"--Exchange.root={base / 'exchange'}"], course, base
        )
        ended = time.time()
        swapper.wait(timeout=HANG)
        said = report.read_text()
        log = done.stdout + done.stderr
        assert done.returncode == 0, log
        assert "swapped (0)" in said, (said, swapper.stdout.read())  # the race was run
        assert float(said.split(" at ")[-1]) <= ended, said  # ... while collect ran
        collected = course / "submitted" / STUDENT / EXCHANGE_ASSIGNMENT
        text = "".join(p.read_text(errors="replace") for p in collected.rglob("*") if p.is_file())
        assert "BEGIN SOLUTION" not in text and "the instructor's" not in text, (
            "the instructor's solutions were collected as the student's work"
        )
        # Swapped before the seal opened her folder: nothing of it, and said; after: her own
        # work still, read through the folder's descriptor.
        notebook = collected / "ceiling.ipynb"
        assert "symbolic link, not a folder" in log or '"mine": 1' in notebook.read_text(), log
    finally:
        shutil.rmtree(base, ignore_errors=True)
