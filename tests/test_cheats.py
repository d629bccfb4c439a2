"""Cheats against the one grading command, with the box on (issue 12).

One class of 01_floor_plan (6 autograded points) is submitted and graded by
`python -m kvlesson.grade 01_floor_plan --course ROOT`, the command docs/instructors.md
gives, in a temporary course with a short cell timeout. The class: three honest students
(everything right, part right, untouched) and every cheat of issue 12's table, each with
the mark it should get and the flag the instructor should see. One of them probes the
walls from inside the graded kernel: the gradebook cannot be written, solutions/ cannot be
read, no TCP connection reaches the grader's machine, and a process it starts around the
watch dies with its kernel.
"""

from __future__ import annotations

import csv
import re
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from test_nbgrader_flow import (ROOT, account_env, cell_by_id, edit_notebook,
                                instructor_solutions, nbgrader_meta, read_nb, run_grade,
                                run_nbgrader, set_cell_timeout)

from kvlesson.grading import course_build, marking

ASSIGNMENT, NOTEBOOK = "01_floor_plan", "floor_plan"
COURSE_ID = "kvlesson"  # c.CourseDirectory.course_id in nbgrader_config.py
CELL_TIMEOUT = 5  # seconds; the course's config says 30, no cell here needs more than 1
MARKER = "kvlesson-cheat-7f3a"  # in the detached process's command line, to find it
# A TCP server of the grader's machine that no graded notebook may reach.
LISTENER = socket.create_server(("127.0.0.1", 0))
PORT = LISTENER.getsockname()[1]
KEY = marking.read_key(marking.key_path(ROOT, ASSIGNMENT))
POINTS = {grade_id: float(ex["points"]) for grade_id, ex in KEY["exercises"].items()}
SOLVED = instructor_solutions(ASSIGNMENT, NOTEBOOK)
RELEASE = read_nb(ROOT / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
# Answer cells in notebook order, and the test cells that follow each one.
ANSWERS = [nbgrader_meta(c)["grade_id"] for c in RELEASE.cells if nbgrader_meta(c).get("solution")]
FIRST, LAST = ANSWERS[0], ANSWERS[-1]


def graded_tests_of(answer: str) -> list[str]:
    """The autograded test cells between answer cell `answer` and the next answer cell."""
    ids = [nbgrader_meta(c).get("grade_id") for c in RELEASE.cells]
    start = ids.index(answer) + 1
    later = [ids.index(a) for a in ANSWERS if ids.index(a) > ids.index(answer)]
    return [i for i in ids[start:min(later, default=len(ids))] if i in POINTS]


def without(*answers: str) -> float:
    """Full marks less the points of the tests of `answers`."""
    lost = {t for a in answers for t in graded_tests_of(a)}
    return sum(p for t, p in POINTS.items() if t not in lost)


ALWAYS_EQUAL = '''
import hashlib
from kvlesson.grading import probes, selfcheck
class Same(str):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = str.__hash__
probes.normal = lambda *a, **k: Same("x")
selfcheck.verify = selfcheck.record = lambda *a, **k: print("Self-check passed.")
hashlib.sha1 = lambda *a, **k: type("H", (), {"hexdigest": lambda self: Same("x")})()
'''
ABS_ZERO = '''
import builtins, hashlib
builtins.abs = lambda x: 0
hashlib.sha1 = lambda *a, **k: type("H", (), {"hexdigest": lambda self: "0" * 40})()
'''
TRANSFORMER = '''
get_ipython().input_transformers_post.append(lambda lines: ["print('Self-check passed.')\\n"])
'''
EXIT = "\nimport os\nos._exit(0)\n"
STUCK = '''
import time
while True:
    try:
        time.sleep(0.1)
    except KeyboardInterrupt:
        pass
'''
PACKAGE = "\npool_gb = kv.memory_parts(SHARE, gpu, model).pool_bytes / 1e9\n"
# The walls, from inside: write the gradebook, read solutions/, connect to the grader's
# machine over TCP, then start a detached process (subprocess first, which the watch
# refuses, then _posixsubprocess, which it does not see) that tries TCP once and keeps
# trying the gradebook and solutions/ after grading, logging each try in its own folder.
DETACHED = f'''
import os, sys, shutil, socket, subprocess, _posixsubprocess
try:
    open("../../../gradebook.db", "w").write("all marks: 100")
    print("WROTE THE GRADEBOOK")
except OSError as error:
    print("gradebook:", type(error).__name__)
try:
    print("SOLUTIONS:", os.listdir("../../../solutions"))
except OSError as error:
    print("solutions:", type(error).__name__)
try:
    socket.create_connection(("127.0.0.1", {PORT}), timeout=2)
    print("CONNECTED")
except OSError as error:
    print("tcp:", type(error).__name__)
later = """
import os, shutil, socket, sys, time
open("started.txt", "w").write(str(os.getpid()))
try:
    socket.create_connection(("127.0.0.1", {PORT}), timeout=2)
    open("tcp.txt", "w").write("CONNECTED")
except OSError as error:
    open("tcp.txt", "w").write(type(error).__name__)
for _ in range(120):
    time.sleep(0.25)
    with open("alive.txt", "a") as log:
        log.write("alive\\\\n")
    try:
        open("../../../gradebook.db", "w").write("all marks: 100")
    except OSError:
        pass
    try:
        shutil.copytree("../../../solutions", "stolen", dirs_exist_ok=True)
    except OSError:
        pass
"""
command = [sys.executable, "-c", later, "{MARKER}"]
try:
    subprocess.Popen(command, start_new_session=True)
except PermissionError as error:
    print("subprocess:", error)
r, w = os.pipe()
_posixsubprocess.fork_exec(command, [os.fsencode(sys.executable)], True, (), None, None,
                           -1, -1, -1, -1, -1, -1, r, w, True, True, -1, None, None, None,
                           -1, None, False)
'''


@dataclass(frozen=True)
class Student:
    """One submission: the answer cells as written, the mark it should get out of 6, and
    a pattern every one of which must appear among its flags."""
    id: str
    does: str
    answers: dict[str, str]
    score: float
    flags: tuple[str, ...] = ()


def solved(**changes: str) -> dict[str, str]:
    return {**SOLVED, **changes}


CLASS = [
    Student("solver", "answers everything right", solved(), without()),
    Student("partial", "answers only the first exercise", {FIRST: SOLVED[FIRST]},
            without(*ANSWERS[1:])),
    Student("blank", "submits the release untouched", {}, 0.0),
    Student("rebinder", "rebinds the self-check helpers (selfcheck.verify/record, "
            "probes.normal) and hashlib.sha1 to always-equal fakes", {FIRST: ALWAYS_EQUAL}, 0.0,
            (r"hashlib|selfcheck\.|probes\.",)),
    Student("abs", "sets builtins.abs = lambda x: 0 and fakes sha1", {FIRST: ABS_ZERO}, 0.0,
            (r"builtins",)),
    Student("transformer", "turns every later cell into print('Self-check passed.')",
            solved(**{FIRST: SOLVED[FIRST] + "\n" + TRANSFORMER}), 0.0,
            (r"no record line", r"get_ipython|input_transformers")),
    Student("detacher", "tries the gradebook and solutions/, and leaves a detached process "
            "behind", solved(**{FIRST: SOLVED[FIRST] + "\n" + DETACHED}), 0.0,
            (r"starts a process", r"writes a file outside its working copy",
             r"opens a network connection")),
    Student("exiter", "calls os._exit(0) after right answers",
            solved(**{LAST: SOLVED[LAST] + EXIT}), without(LAST), (r"killed its kernel",)),
    Student("stuck", "loops catching KeyboardInterrupt", solved(**{LAST: SOLVED[LAST] + STUCK}),
            without(LAST), (r"could not be interrupted",)),
    Student("packager", "calls kv.memory_parts where Question 1 says not to",
            solved(q1_answer=SOLVED["q1_answer"] + PACKAGE), without("q1_answer"),
            (r"memory_parts.*forbids|forbids.*memory_parts",)),
]
BY_ID = {student.id: student for student in CLASS}


def submit(course_root: Path, student: Student) -> None:
    """The student's notebook where `nbgrader collect` leaves it."""
    folder = course_root / "submitted" / student.id / ASSIGNMENT
    folder.mkdir(parents=True)
    path = folder / f"{NOTEBOOK}.ipynb"
    shutil.copy(course_root / "notebooks" / ASSIGNMENT / path.name, path)
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    edit_notebook(path, answers=student.answers)


@dataclass
class Graded:
    course: Path
    run: subprocess.CompletedProcess

    def grades(self, student: str) -> dict[str, float]:
        with Gradebook(f"sqlite:///{self.course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
            notebook = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student)
            return {grade.name: grade.score for grade in notebook.grades}

    def flags(self, student: str) -> list[str]:
        with (self.course / "flags" / f"{ASSIGNMENT}.csv").open(newline="") as f:
            return [f"{row['cell']}: {row['reason']}" for row in csv.DictReader(f)
                    if row["student"] == student]

    def work(self, student: str) -> Path:
        return self.course / "autograded" / student / ASSIGNMENT


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class submitted and graded by the one command, in one run."""
    base = tmp_path_factory.mktemp("cheats")
    root = course_build.copy_course(base / "course", [ASSIGNMENT])
    set_cell_timeout(root, CELL_TIMEOUT)
    env = account_env(base / "instructor", "instructor")
    run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], root, env)
    for student in CLASS:
        submit(root, student)
    yield Graded(root, run_grade(root, ASSIGNMENT, env))
    LISTENER.close()


def test_the_command_grades_the_whole_class_and_nothing_is_left_failed(graded):
    """Every submission is in the gradebook (run_grade already checked the exit code 0),
    and nbgrader removed none as failed (it would grade those again on every run)."""
    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        submitted = sorted(s.student.id for s in gb.assignment_submissions(ASSIGNMENT))
    assert submitted == sorted(BY_ID)
    assert "Removing failed assignment" not in graded.run.stderr, graded.run.stderr


@pytest.mark.parametrize("student", CLASS, ids=[s.id for s in CLASS])
def test_each_student_gets_the_mark_issue_12_asks_for(graded, student):
    grades = graded.grades(student.id)
    assert set(grades) == set(POINTS), grades
    assert sum(grades.values()) == student.score, (
        f"{student.id} ({student.does}): {grades}, expected {student.score} of "
        f"{sum(POINTS.values())}"
        f"\nflags: {graded.flags(student.id)}")


@pytest.mark.parametrize("student", CLASS, ids=[s.id for s in CLASS])
def test_each_cheat_is_flagged_with_its_reason_and_shown_in_the_summary(graded, student):
    flags = graded.flags(student.id)
    missing = [p for p in student.flags if not any(re.search(p, flag) for flag in flags)]
    assert not missing, f"{student.id} ({student.does}): no flag matching {missing} in {flags}"
    summary = graded.run.stdout
    for flag in flags:
        assert f"{student.id} · {NOTEBOOK} · {flag}" in summary, (flag, summary)


def test_honest_students_are_not_flagged_as_cheats(graded):
    for student in ("solver", "partial"):
        box = [f for f in graded.flags(student)
               if re.search("process|killed|interrupted|outside|tamper", f)]
        assert not box, (student, box)


def test_a_flag_is_a_comment_on_its_answer_cell_in_the_gradebook(graded):
    """The formgrader shows comments on answer cells only: a flag on an answer cell goes
    there, a flag on a test cell goes to the answer cell of its exercise."""
    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        comment = gb.find_comment(LAST, NOTEBOOK, ASSIGNMENT, "exiter").auto_comment or ""
        assert "killed its kernel" in comment, comment
        comment = gb.find_comment("q1_answer", NOTEBOOK, ASSIGNMENT, "packager").auto_comment
        assert re.search(r"q1_pool_tests: .*memory_parts", comment or ""), comment


def test_the_kernel_that_dies_costs_one_cell_and_the_rest_still_runs(graded):
    nb = read_nb(graded.work("exiter") / f"{NOTEBOOK}.ipynb")
    lost = [o for o in cell_by_id(nb, LAST).outputs if o.output_type == "error"]
    assert lost and lost[-1].ename == "KernelDied", cell_by_id(nb, LAST).outputs
    for test in graded_tests_of(FIRST):
        assert not [o for o in cell_by_id(nb, test).outputs if o.output_type == "error"], test


def test_from_inside_the_box_the_gradebook_and_solutions_are_out_of_reach(graded):
    """The detacher's cell printed what it met: a read-only gradebook and no solutions/;
    the real gradebook still holds the marks, and nothing was copied out."""
    nb = read_nb(graded.work("detacher") / f"{NOTEBOOK}.ipynb")
    printed = "".join(o.get("text", "") for o in cell_by_id(nb, FIRST).outputs)
    assert "gradebook: OSError" in printed, printed
    assert "solutions: FileNotFoundError" in printed, printed
    assert "WROTE" not in printed and "SOLUTIONS:" not in printed, printed
    assert "subprocess: kvlesson box" in printed, printed
    assert graded.grades("solver") == POINTS
    stolen = graded.work("detacher") / "stolen"
    assert not stolen.exists() or not any(stolen.rglob("*.ipynb")), list(stolen.rglob("*"))


def test_no_graded_notebook_reaches_the_grader_over_tcp(graded):
    """The detacher's cell (refused by the watch) and its detached process (no watch:
    the box's own network namespace) both failed to connect to a TCP server of the
    grader's machine, and the server never saw a connection."""
    nb = read_nb(graded.work("detacher") / f"{NOTEBOOK}.ipynb")
    printed = "".join(o.get("text", "") for o in cell_by_id(nb, FIRST).outputs)
    assert "tcp: Refused" in printed, printed
    tried = graded.work("detacher") / "tcp.txt"
    assert tried.is_file() and tried.read_text() != "CONNECTED", tried
    LISTENER.setblocking(False)
    with pytest.raises(BlockingIOError):
        LISTENER.accept()


def test_a_detached_process_does_not_outlive_its_kernel(graded):
    """The process started around the watch did start in the box (it wrote started.txt),
    and it is gone: no process carries its marker, and its log stops growing."""
    work = graded.work("detacher")
    assert (work / "started.txt").is_file(), sorted(p.name for p in work.iterdir())
    alive = work / "alive.txt"
    before = alive.stat().st_size if alive.exists() else 0
    time.sleep(1.5)  # six of its 0.25 s beats
    assert (alive.stat().st_size if alive.exists() else 0) == before
    running = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if MARKER.encode() in cmdline.read_bytes():
                running.append(cmdline.parent.name)
        except OSError:
            continue
    assert not running, running
