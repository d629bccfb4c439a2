"""A term with nbgrader, end to end: release, submissions, grades, feedback.

What an instructor relies on, run with the real nbgrader commands (as
`python -m nbgrader ...` subprocesses), a real exchange directory and a real
SQLite gradebook, all in temporary folders:

* One class run of 01_floor_plan on one machine: generate_assignment --force,
  release_assignment, seven students who fetch and submit under their own ids
  from their own home folders, collect, the one grading command
  (`kvlesson grade`: autograde in the box, then marking), generate_feedback,
  release_feedback, fetch_feedback, export to CSV. The class holds a student
  who submits the instructor's solutions, one who submits the release
  untouched, one with only Exercise 1.1 right, and the hostile or broken
  ones: a student who replaces a locked test with `pass` (and claims 20
  points for another), one whose code raises and then loops forever, one
  who writes the pool as the string "53.9 GB", and one who submits an empty
  folder. Every submission is graded (or recorded as missing) in the same
  run, and no student's grade is lost.
* The release (notebooks/, every assignment) holds no solution line, no
  hidden test line, no marker, no model answer or rubric.
* The free-text answers are graded by hand: after autograde of 02_ceiling
  the gradebook holds them as "needs manual grade" with their points, and a
  manual score counts in the total, also after a re-run of autograde.

The tests read nbgrader_config.py, autotests.yml and solutions/ of this
repository; nothing in the repository is written.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from kvlesson.authoring import command
from support.course import (
    HIDDEN_MARKERS,
    SOLUTION_MARKERS,
    account_env,
    all_strings,
    between_markers,
    cell_by_id,
    edit_notebook,
    error_outputs,
    instructor_env,
    instructor_solutions,
    make_course_root,
    nbgrader_meta,
    read_nb,
    run_grade,
    run_nbgrader,
    secret_lines,
    set_cell_timeout,
)
from support.paths import ROOT
from support.patience import scaled

COURSE_ID = "kvlesson"  # c.CourseDirectory.course_id in nbgrader_config.py
ASSIGNMENT = "01_floor_plan"
NOTEBOOK = "floor_plan"
# Points of the autograded test cells of 01_floor_plan, as the instructor set them.
POINTS = {"ex1_1_tests": 2, "ex1_2_tests": 2, "q1_pool_tests": 1, "q1_unused_tests": 1}
FULL_MARKS = sum(POINTS.values())
# Seconds a student's cell may run under autograde in these tests (the course's
# config says 30; no cell of 01_floor_plan needs more than half a second).
CELL_TIMEOUT = scaled(5)  # seconds before the looping cell is stopped, stretched by the load

# The manually graded free-text answers: assignment -> (notebook, grade_id, points).
FREE_TEXT = {
    "02_ceiling": ("ceiling", "q2_answer", 2),
    "03_cap_sweep": ("cap_sweep", "q4_why", 2),
    "04_preemption": ("preemption", "q5_answer", 3),
}
# ---------------------------------------------------------------------------
# The class of 01_floor_plan


@dataclass
class Student:
    """One student: what they do to the fetched notebook, and the score of each test
    cell they should get for it."""

    id: str
    does: str
    edit: Callable[[Path], None]
    expected: dict[str, float] = field(default_factory=dict)
    submits_notebook: bool = True

    @property
    def total(self) -> float:
        return sum(self.expected.values())


SOLVED = instructor_solutions(ASSIGNMENT, NOTEBOOK)
WRONG_POOL = (
    "def pool_bytes(share):\n"
    "    return share / 100 * gpu.memory_bytes  # forgot the weights and the reserve"
)
RAISES = "def pool_bytes(share):\n    return share / 0 * gpu.memory_bytes"
LOOPS = "while True:  # waits for an answer that never comes\n    pass"
STRING_POOL = SOLVED["q1_answer"] + '\npool_gb = "53.9 GB"  # the unit written in'


def solves_everything(path: Path) -> None:
    edit_notebook(path, answers=SOLVED)


def changes_nothing(path: Path) -> None:
    pass


def solves_exercise_1_1_only(path: Path) -> None:
    edit_notebook(path, answers={"ex1_1_answer": SOLVED["ex1_1_answer"]})


def tampers_with_the_tests(path: Path) -> None:
    edit_notebook(
        path,
        answers={**SOLVED, "ex1_1_answer": WRONG_POOL},
        tests={"ex1_1_tests": "pass  # no more asserts"},
        points={"ex1_2_tests": 20},
    )


def raises_then_loops(path: Path) -> None:
    edit_notebook(
        path,
        answers={"ex1_1_answer": RAISES, "ex1_2_answer": LOOPS, "q1_answer": SOLVED["q1_answer"]},
    )


def writes_the_pool_as_a_string(path: Path) -> None:
    edit_notebook(path, answers={**SOLVED, "q1_answer": STRING_POOL})


def deletes_the_notebook(path: Path) -> None:
    path.unlink()


NOTHING = dict.fromkeys(POINTS, 0)
CLASS = [
    Student("solver", "submits the instructor's solutions", solves_everything, dict(POINTS)),
    Student("blank", "submits the release untouched", changes_nothing, dict(NOTHING)),
    Student(
        "partial",
        "gets only Exercise 1.1 right",
        solves_exercise_1_1_only,
        {**NOTHING, "ex1_1_tests": 2},
    ),
    Student(
        "tamperer",
        "replaces the asserts of ex1_1_tests with `pass` (with a wrong answer) "
        "and sets the points of ex1_2_tests to 20",
        tampers_with_the_tests,
        {**POINTS, "ex1_1_tests": 0},
    ),
    Student(
        "looper",
        "has a pool_bytes that raises and an Exercise 1.2 cell that loops forever",
        raises_then_loops,
        {**NOTHING, "q1_pool_tests": 1, "q1_unused_tests": 1},
    ),
    Student(
        "stringer",
        'writes pool_gb = "53.9 GB"',
        writes_the_pool_as_a_string,
        {**POINTS, "q1_pool_tests": 0},
    ),
    Student(
        "absent",
        "deletes the notebook and submits an empty folder",
        deletes_the_notebook,
        {},
        submits_notebook=False,
    ),
]
BY_ID = {student.id: student for student in CLASS}


@dataclass
class Term:
    """What the class run left behind, for the tests to read."""

    course: Path
    homes: dict[str, Path]
    autograde: subprocess.CompletedProcess
    grades_csv: list[dict[str, str]]

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.course / 'gradebook.db'}"

    def autograded(self, student_id: str) -> nbformat.NotebookNode:
        return read_nb(self.course / "autograded" / student_id / ASSIGNMENT / f"{NOTEBOOK}.ipynb")

    def autograde_log_of(self, student_id: str) -> str:
        """The part of nbgrader's log about one student (the grading command keeps it in
        flags/ASSIGNMENT.log)."""
        log = (self.course / "flags" / f"{ASSIGNMENT}.log").read_text()
        starts = [
            (m.start(), m.group(1))
            for m in re.finditer(r"^===== ([^:]+): nbgrader's log =====$", log, re.M)
        ]
        for i, (start, who) in enumerate(starts):
            if who == student_id:
                end = starts[i + 1][0] if i + 1 < len(starts) else len(log)
                return log[start:end]
        raise AssertionError(f"the autograde log never mentions {student_id!r}:\n{log}")


def fetch_edit_submit(student: Student, home: Path, exchange: Path) -> None:
    """One student's side, from their own home folder: fetch the assignment, change
    it, submit it. nbgrader takes the id from the Unix account, which is the same for
    every student here, hence --student."""
    env = account_env(home, student.id)
    run_nbgrader(
        ["fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}", f"--Exchange.root={exchange}"],
        home,
        env,
    )
    notebook = home / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    assert notebook.is_file(), f"{student.id}: fetch_assignment did not bring {notebook}"
    student.edit(notebook)
    run_nbgrader(
        [
            "submit",
            ASSIGNMENT,
            f"--course={COURSE_ID}",
            f"--student={student.id}",
            f"--Exchange.root={exchange}",
        ],
        home,
        env,
    )


def write_roster(path: Path, students: list[Student]) -> Path:
    """The class list as `nbgrader db student import` reads it."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "first_name", "last_name", "email"])
        for student in students:
            writer.writerow(
                [student.id, student.id.title(), "Student", f"{student.id}@example.org"]
            )
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


CEILING, CEILING_NB, FREE_TEXT_ID, FREE_TEXT_POINTS = "02_ceiling", "ceiling", "q2_answer", 2
AN_ANSWER = (
    "Blocks are handed out only as a chat grows, so a high ceiling costs nothing "
    "until some chat is that long. Reserving the whole ceiling for each chat would."
)


def build_ceiling_course(root: Path) -> Path:
    """02_ceiling released, and three submissions autograded, laid out as `nbgrader
    collect` leaves them: two with a free-text answer ("writer", and "reviewed" for the
    manual grade), one untouched ("silent")."""
    course = make_course_root(root, [CEILING])
    env = instructor_env(course)
    run_nbgrader(["generate_assignment", CEILING, "--force"], course, env)
    release = course / "notebooks" / CEILING / f"{CEILING_NB}.ipynb"
    for student, answer in (("writer", AN_ANSWER), ("reviewed", AN_ANSWER), ("silent", None)):
        folder = course / "submitted" / student / CEILING
        folder.mkdir(parents=True)
        shutil.copy(release, folder / release.name)
        (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
        if answer:
            edit_notebook(folder / release.name, answers={FREE_TEXT_ID: answer})
    run_nbgrader(
        ["autograde", CEILING, "--force", f"--Execute.timeout={CELL_TIMEOUT}"], course, env
    )
    return course


@pytest.fixture(scope="module")
def ceiling_build(tmp_path_factory):
    """The 02_ceiling course, built in a background thread: started before the class
    run, it is graded while the students of 01_floor_plan work (a separate course
    folder and gradebook, so the two never touch the same SQLite file)."""
    pool = ThreadPoolExecutor(max_workers=1)
    yield pool.submit(build_ceiling_course, tmp_path_factory.mktemp("ceiling") / "course")
    pool.shutdown(wait=True)


@pytest.fixture(scope="module")
def term(tmp_path_factory, ceiling_build) -> Term:
    """The whole term of 01_floor_plan, run once for the tests of this module (it asks
    for ceiling_build only to start that one first)."""
    base = tmp_path_factory.mktemp("term")
    course = make_course_root(base / "course", [ASSIGNMENT])
    set_cell_timeout(course, CELL_TIMEOUT)
    exchange = base / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # on a shared machine every account writes here
    env = instructor_env(course)

    def instructor(*args: str) -> subprocess.CompletedProcess:
        return run_nbgrader(list(args), course, env)

    with_exchange = f"--Exchange.root={exchange}"
    instructor("generate_assignment", ASSIGNMENT, "--force")
    instructor("release_assignment", ASSIGNMENT, with_exchange)
    instructor("db", "student", "import", str(write_roster(base / "roster.csv", CLASS)))

    homes = {student.id: base / "home" / student.id for student in CLASS}
    with ThreadPoolExecutor(max_workers=4) as pool:  # students work at the same time
        done = [
            pool.submit(fetch_edit_submit, student, homes[student.id], exchange)
            for student in CLASS
        ]
        for future in done:
            future.result()

    instructor("collect", ASSIGNMENT, with_exchange)
    autograde = run_grade(course, ASSIGNMENT, env)
    instructor("generate_feedback", ASSIGNMENT, "--force")
    instructor("release_feedback", ASSIGNMENT, with_exchange)
    run_nbgrader(
        ["fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}", with_exchange],
        homes["solver"],
        account_env(homes["solver"], "solver"),
    )
    instructor("export", "--to=grades.csv")
    return Term(course, homes, autograde, read_csv(course / "grades.csv"))


# ---------------------------------------------------------------------------
# The class run


def test_the_gradebook_is_the_sqlite_file_in_the_course_folder(term):
    """nbgrader_config.py keeps nbgrader's default gradebook: gradebook.db in the course root."""
    assert (term.course / "gradebook.db").is_file(), sorted(p.name for p in term.course.iterdir())
    with Gradebook(term.db_url, course_id=COURSE_ID) as gb:
        assert [a.name for a in gb.assignments] == [ASSIGNMENT]
        assert sorted(s.id for s in gb.students) == sorted(BY_ID)


def test_every_student_of_the_roster_has_a_line_in_the_csv_export(term):
    """`nbgrader export` writes one line per student of the gradebook: the submitted
    work with its score out of 6 and its time, the empty folder as a zero (submitted, so
    with its time too)."""
    rows = {row["student_id"]: row for row in term.grades_csv}
    assert sorted(rows) == sorted(BY_ID), term.grades_csv
    problems = []
    for student in CLASS:
        row = rows[student.id]
        if (row["assignment"], float(row["max_score"])) != (ASSIGNMENT, FULL_MARKS):
            problems.append(f"{student.id}: {row}")
        if float(row["score"]) != student.total:
            problems.append(
                f"{student.id} ({student.does}): score {row['score']}, "
                f"expected {student.total} of {FULL_MARKS}"
            )
        if not row["timestamp"]:
            problems.append(f"{student.id}: no timestamp")
    assert not problems, "\n".join(problems)


def test_each_test_cell_scores_what_the_student_earned(term):
    """The gradebook, cell by cell: the solutions get every point, the untouched release
    none, a partial answer its part, and the hostile or broken notebooks exactly what
    the original tests give them."""
    table, problems = {}, []
    with Gradebook(term.db_url, course_id=COURSE_ID) as gb:
        for student in CLASS:
            if not student.submits_notebook:
                continue
            notebook = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student.id)
            got = {grade.name: grade.score for grade in notebook.grades}
            table[student.id] = got
            if got != student.expected:
                problems.append(
                    f"{student.id} ({student.does}):\n  got      {got}\n"
                    f"  expected {student.expected}"
                )
            for grade in notebook.grades:
                if grade.max_score != POINTS[grade.name] or grade.needs_manual_grade:
                    problems.append(
                        f"{student.id}: {grade.name} max {grade.max_score}, "
                        f"needs manual grade {grade.needs_manual_grade}"
                    )
            if gb.find_submission(ASSIGNMENT, student.id).max_score != FULL_MARKS:
                problems.append(f"{student.id}: the assignment is not out of {FULL_MARKS}")
    assert not problems, "\n".join(problems) + f"\n\nall grades: {json.dumps(table, indent=1)}"


def test_the_empty_folder_is_recorded_as_missing_and_grading_still_succeeds(term):
    """A submission without its notebook: the command grades everyone else and exits 0;
    the student's submission scores 0 in the gradebook, flagged "no notebook"."""
    assert term.autograde.returncode == 0
    with Gradebook(term.db_url, course_id=COURSE_ID) as gb:
        submitted = sorted(s.student.id for s in gb.assignment_submissions(ASSIGNMENT))
        assert gb.find_submission(ASSIGNMENT, "absent").score == 0
    assert submitted == sorted(s.id for s in CLASS)
    assert re.search(r"absent · - · -: no notebook was submitted", term.autograde.stdout), (
        term.autograde.stdout
    )


def test_the_grade_command_prints_each_students_score(term):
    """The summary of `kvlesson grade`: a line per graded notebook with the
    student's score out of 6, and the count of flags."""
    for student in CLASS:
        if student.submits_notebook:
            line = rf"^\s+{student.id}\s+{NOTEBOOK}\s+{student.total:g} / {FULL_MARKS:g}\b"
            assert re.search(line, term.autograde.stdout, re.M), (student.id, term.autograde.stdout)
    assert re.search(
        r"^\d+ flags? \(also in .*flags/01_floor_plan.csv", term.autograde.stdout, re.M
    ), term.autograde.stdout


def test_an_edited_test_cell_is_flagged_and_the_original_test_runs(term):
    """The tamperer's `pass` does not count: autograde warns that ex1_1_tests changed,
    puts back the original test (hidden tests included), which fails on their wrong
    answer, and resets the points they claimed.

    Only the tamperer is warned about: a test cell exactly as the release gave it (hidden
    tests cleared) is put back without a word (kvlesson/grading/course/released.py), where
    plain nbgrader warns for every test cell with hidden tests of every honest notebook."""
    changed = re.compile(r"Attribute 'checksum' for cell (\w+) has changed!")
    assert changed.findall(term.autograde_log_of("tamperer")) == ["ex1_1_tests"], (
        term.autograde_log_of("tamperer")
    )
    for honest in ("solver", "partial", "blank", "stringer"):
        assert not changed.findall(term.autograde_log_of(honest)), term.autograde_log_of(honest)
    assert (
        "Attribute 'points' for cell ex1_2_tests has changed! (should be: 2.0, got: 20.0)"
        in term.autograde_log_of("tamperer")
    )

    graded = term.autograded("tamperer")
    source = read_nb(ROOT / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    restored = cell_by_id(graded, "ex1_1_tests")
    hidden = between_markers(cell_by_id(source, "ex1_1_tests").source, HIDDEN_MARKERS)
    assert "no more asserts" not in restored.source
    assert all(line in restored.source for line in hidden), restored.source
    assert error_outputs(restored), "the original test should fail on the wrong answer"
    assert cell_by_id(graded, "ex1_2_tests").metadata.nbgrader["points"] == POINTS["ex1_2_tests"]


def test_a_loop_is_stopped_and_the_rest_of_the_notebook_is_graded(term):
    """The looping cell is interrupted after the timeout; the cells after it still run
    (Question 1 passes), and the raising pool_bytes only costs Exercise 1.1."""
    assert f"Timeout waiting for execute reply ({CELL_TIMEOUT}s)" in term.autograde_log_of("looper")
    graded = term.autograded("looper")
    loop = [error["ename"] for error in error_outputs(cell_by_id(graded, "ex1_2_answer"))]
    assert "CellTimeoutError" in loop, loop
    missing = error_outputs(cell_by_id(graded, "ex1_2_tests"))
    assert missing and missing[0]["ename"] == "NotYet", missing
    assert "is not defined" in missing[0]["evalue"], missing  # the visible check says so
    raised = error_outputs(cell_by_id(graded, "ex1_1_tests"))
    assert raised and raised[0]["ename"] == "NotYet", raised
    assert "raised ZeroDivisionError" in raised[0]["evalue"], raised
    for grade_id in ("q1_pool_tests", "q1_unused_tests"):
        cell = cell_by_id(graded, grade_id)
        assert not error_outputs(cell), cell.outputs
        assert "Self-check passed." in "".join(o.get("text", "") for o in cell.outputs)


def test_a_string_answer_fails_its_test_with_the_message_of_kvlesson_selfcheck(term):
    """pool_gb = "53.9 GB": q1_pool_tests fails with the message that says to write the
    number alone; every other test still gets its points (checked cell by cell above)."""
    error = error_outputs(cell_by_id(term.autograded("stringer"), "q1_pool_tests"))
    assert error and error[0]["ename"] in ("NotYet", "WrongKind"), error
    assert "should be a number of GB" in error[0]["evalue"], error[0]["evalue"]
    assert "without quotes or units" in error[0]["evalue"], error[0]["evalue"]


def test_feedback_is_written_for_each_submission_and_reaches_the_student(term):
    """generate_feedback writes one HTML page per graded notebook with the score;
    release_feedback and fetch_feedback bring the solver's page into their home.
    The page shows the hidden tests (nbgrader's design, nbgrader issue 917): release
    feedback only when no one can still submit, as docs/instructors.md says."""
    for student in CLASS:
        page = term.course / "feedback" / student.id / ASSIGNMENT / f"{NOTEBOOK}.html"
        if not student.submits_notebook:
            assert not page.exists(), page
            continue
        assert page.is_file(), f"no feedback for {student.id}"
        html = page.read_text()
        assert f"Score: {float(student.total)} / {float(FULL_MARKS)}" in html, student.id
        assert "BEGIN HIDDEN TESTS" in html, (
            "the feedback no longer shows the hidden tests: update docs/instructors.md"
        )
    fetched = list((term.homes["solver"] / ASSIGNMENT / "feedback").glob(f"*/{NOTEBOOK}.html"))
    assert len(fetched) == 1, list(term.homes["solver"].rglob("*.html"))
    assert f"Score: {float(FULL_MARKS)} / {float(FULL_MARKS)}" in fetched[0].read_text()


# ---------------------------------------------------------------------------
# The release of every assignment


RELEASES = sorted(p.parent.name for p in (ROOT / "notebooks").glob("*/*.ipynb"))
GRADED = [name for name in RELEASES if command.has_exercises(name)]  # not the reading page


def release_and_source(assignment: str) -> tuple[list[Path], Path]:
    """The released files of an assignment, and its one instructor notebook."""
    sources = sorted((ROOT / "solutions" / assignment).glob("*.ipynb"))
    assert len(sources) == 1, sources
    released = sorted(p for p in (ROOT / "notebooks" / assignment).rglob("*") if p.is_file())
    return released, sources[0]


def test_every_assignment_is_released():
    assert RELEASES == sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir()), (
        RELEASES
    )


def leaks(name: str, content: str, secrets: dict[str, str]) -> list[str]:
    """What a released file (its name and text) gives away: a solution or hidden-test
    marker, a secret line of the instructor notebook, or, in a notebook, an output
    stored in an answer or test cell."""
    text = content
    if name.endswith(".ipynb"):
        text = "\n".join(all_strings(json.loads(content)))
    found = [
        f"{name}: marker {marker!r}"
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
        if marker in text
    ]
    found += [f"{name}: {kind}: {line!r}" for line, kind in secrets.items() if line in text]
    if name.endswith(".ipynb"):
        for cell in nbformat.reads(content, as_version=4).cells:
            meta = nbgrader_meta(cell)
            if (meta.get("solution") or meta.get("grade")) and cell.get("outputs"):
                found.append(f"{name}: {meta['grade_id']} has stored outputs")
    return found


@pytest.mark.parametrize("assignment", GRADED)
def test_the_release_holds_no_solution_and_no_hidden_test(assignment):
    """No marker, and no line of solution code, hidden test, model answer or rubric
    from the instructor notebook, anywhere in any released file (sources, outputs,
    metadata); the answer and test cells of the release carry no output."""
    released, source_path = release_and_source(assignment)
    secrets = secret_lines(read_nb(source_path))
    assert len(secrets) >= 5, f"too few secret lines found in {source_path}: {secrets}"
    found = [
        leak
        for path in released
        for leak in leaks(path.name, path.read_text(errors="replace"), secrets)
    ]
    assert not found, "\n".join(found)


def test_the_leak_scan_finds_a_planted_hidden_test_an_output_and_a_marker():
    """The scan above is not vacuous: each kind of leak planted in a copy of a release
    is found, and the untouched release has none."""
    source = read_nb(ROOT / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    secrets = secret_lines(source)
    path = ROOT / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    assert leaks(path.name, path.read_text(), secrets) == []

    line = next(
        line.strip()
        for line in between_markers(cell_by_id(source, "ex1_2_tests").source, HIDDEN_MARKERS)
        if line.strip() in secrets
    )
    planted = read_nb(path)
    cell_by_id(planted, "ex1_2_tests").source += "\n" + line
    cell_by_id(planted, "q1_answer").outputs = [
        nbformat.v4.new_output("execute_result", {"text/plain": "(53.9, 8.0)"}, execution_count=1)
    ]
    cell_by_id(planted, "q1_answer").source += "\n### END SOLUTION"
    found = leaks(path.name, nbformat.writes(planted), secrets)
    assert len(found) == 3, found
    assert any(repr(line) in leak and "hidden test of ex1_2_tests" in leak for leak in found), found


# ---------------------------------------------------------------------------
# Manual grading of the free-text answers


@pytest.mark.parametrize("assignment", sorted(FREE_TEXT))
def test_each_free_text_answer_is_manually_graded_and_its_rubric_stays_private(assignment):
    """In solutions/: a markdown cell with solution and grade set and its points, a model
    answer and a rubric inside the solution markers. In notebooks/: the same cell,
    emptied to the stub, with the same points, and no line of the model answer."""
    notebook, grade_id, points = FREE_TEXT[assignment]
    source = cell_by_id(read_nb(ROOT / "solutions" / assignment / f"{notebook}.ipynb"), grade_id)
    meta = nbgrader_meta(source)
    assert source.cell_type == "markdown"
    assert (meta["solution"], meta["grade"], meta["points"]) == (True, True, points), meta
    private = [
        line.strip() for line in between_markers(source.source, SOLUTION_MARKERS) if line.strip()
    ]
    assert any(line.startswith("Rubric") for line in private), source.source

    released_nb = read_nb(ROOT / "notebooks" / assignment / f"{notebook}.ipynb")
    released = cell_by_id(released_nb, grade_id)
    assert nbgrader_meta(released)["points"] == points
    assert released.source.strip() == "YOUR ANSWER HERE", released.source
    text = "\n".join(
        all_strings(json.loads((ROOT / "notebooks" / assignment / f"{notebook}.ipynb").read_text()))
    )
    assert [line for line in private if line in text] == []


@pytest.fixture(scope="module")
def ceiling_course(ceiling_build) -> Path:
    """02_ceiling autograded (see build_ceiling_course)."""
    return ceiling_build.result()


def free_text_grade(course: Path, student: str):
    """(auto_score, manual_score, score, max_score, needs_manual_grade) of q2_answer."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        grade = gb.find_grade(FREE_TEXT_ID, CEILING_NB, CEILING, student)
        return (
            grade.auto_score,
            grade.manual_score,
            grade.score,
            grade.max_score,
            grade.needs_manual_grade,
        )


def test_a_written_answer_waits_for_a_manual_grade_and_an_empty_one_scores_zero(ceiling_course):
    """After autograde, the written answer has no automatic score and is flagged for
    the formgrader, out of its 2 points; the untouched stub is given 0 at once."""
    assert free_text_grade(ceiling_course, "writer") == (None, None, 0.0, FREE_TEXT_POINTS, True)
    assert free_text_grade(ceiling_course, "silent") == (0.0, None, 0.0, FREE_TEXT_POINTS, False)


def test_a_manual_grade_counts_and_survives_a_re_run_of_autograde(ceiling_course):
    """The score an instructor enters in the formgrader (stored as the grade's
    manual_score, as the formgrader does) counts in the total, and `autograde --force`
    run again later keeps it, though it flags the cell for review again (nbgrader's FAQ:
    manual grades always take precedence)."""
    db_url = f"sqlite:///{ceiling_course / 'gradebook.db'}"
    with Gradebook(db_url, course_id=COURSE_ID) as gb:
        before = gb.find_submission(CEILING, "reviewed").score
        grade = gb.find_grade(FREE_TEXT_ID, CEILING_NB, CEILING, "reviewed")
        grade.manual_score = 1.5
        grade.needs_manual_grade = False
        gb.db.commit()
    assert free_text_grade(ceiling_course, "reviewed") == (None, 1.5, 1.5, FREE_TEXT_POINTS, False)
    run_nbgrader(
        [
            "autograde",
            CEILING,
            "--force",
            "--student=reviewed",
            f"--Execute.timeout={CELL_TIMEOUT}",
        ],
        ceiling_course,
        instructor_env(ceiling_course),
    )
    assert free_text_grade(ceiling_course, "reviewed") == (None, 1.5, 1.5, FREE_TEXT_POINTS, True)
    with Gradebook(db_url, course_id=COURSE_ID) as gb:
        assert gb.find_submission(CEILING, "reviewed").score == before + 1.5
