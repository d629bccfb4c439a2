"""A class graded side by side, interrupted, and run again (issue 17).

`kvlesson grade` grades each submission on its own, `--jobs` of them at once, and
is the gradebook's only writer. These tests grade small classes of 01_floor_plan and check
what an instructor relies on: a submission that runs past `--timeout` costs that submission
only; a worker killed midway loses nothing (its submission is graded by another worker);
the whole command killed midway loses nothing (the next run grades exactly the submissions
that have no result, and leaves the others as they are); and the command finds the course
from any folder the nbgrader configuration names it in.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from kvlesson.authoring import command
from kvlesson.grading.course.folders import MARKER
from support.course import (
    account_env,
    edit_notebook,
    instructor_solutions,
    run_nbgrader,
    set_cell_timeout,
)
from support.patience import HANG

ASSIGNMENT, NOTEBOOK = "01_floor_plan", "floor_plan"
SOLVED = instructor_solutions(ASSIGNMENT, NOTEBOOK)
FULL = 6.0
SLEEPS = "\nimport time\ntime.sleep(9)\n"  # under a 10 s cell timeout: only the deadline stops it
# The deadline test's deadline: this many times what an honest submission took just before,
# graded alone on this machine as loaded as it is now, and no less than SHORTEST seconds.
MARGIN, SHORTEST = 3, 20


def make_course(
    base: Path, students: list[str], slow: tuple[str, ...] = (), cell: int = 5, sleeps: int = 3
) -> tuple[Path, dict]:
    """A course copy, released, with `students` answering everything right (`slow` ones
    also sleeping in every answer cell and in `sleeps` cells of their own, 9 s each, under
    the `cell` timeout)."""
    root = command.copy_course(base / "course", [ASSIGNMENT])
    set_cell_timeout(root, cell)
    env = account_env(base / "instructor", "instructor")
    run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], root, env)
    submit(root, students, slow, sleeps)
    return root, env


def submit(root: Path, students: list[str], slow: tuple[str, ...] = (), sleeps: int = 3) -> None:
    """Collected submissions of `students` (see make_course)."""
    for student in students:
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        path = folder / f"{NOTEBOOK}.ipynb"
        path.write_bytes((root / "notebooks" / ASSIGNMENT / path.name).read_bytes())
        answers = {k: v + (SLEEPS if student in slow else "") for k, v in SOLVED.items()}
        edit_notebook(path, answers=answers)
        if student in slow:  # cells of its own that sleep
            nb = nbformat.read(path, as_version=4)
            nb.cells[3:3] = [nbformat.v4.new_code_cell(SLEEPS) for _ in range(sleeps)]
            nbformat.write(nb, path)
        (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")


def grade(
    root: Path, env: dict, *options: str, cwd: Path | None = None, wait: bool = True
) -> subprocess.CompletedProcess | subprocess.Popen:
    command = [sys.executable, "-m", "kvlesson", "grade", ASSIGNMENT, *options]
    if not wait:
        return subprocess.Popen(
            command,
            cwd=cwd or root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    return subprocess.run(
        command, cwd=cwd or root, env=env, capture_output=True, text=True, timeout=HANG
    )


def scores(root: Path) -> dict[str, float]:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="kvlesson") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(ASSIGNMENT)}


def marked(root: Path, students: list[str]) -> list[str]:
    """The students whose result the command has written whole: its marker is there last."""
    return [s for s in students if (root / "autograded" / s / ASSIGNMENT / MARKER).is_file()]


def graded_now(stdout: str) -> int:
    return int(re.search(r"\((\d+) submissions? graded in this run\)", stdout).group(1))


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_a_deadline_costs_one_submission_and_a_rerun_from_anywhere_finds_the_course(tmp_path):
    """Graded side by side with a deadline three times what an honest one took just before
    on this machine, an honest submission keeps its mark and one past --timeout scores 0
    with the reason; a run from the instructor's home, whose nbgrader configuration
    names the course root (as the hub's does), finds the course and grades nothing again;
    from a folder that names none, it says which --course to give."""
    root, env = make_course(tmp_path, ["ann"], cell=10)
    start = time.monotonic()
    alone = grade(root, env, "--course", str(root), "--jobs", "1")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    deadline = max(SHORTEST, math.ceil(MARGIN * (time.monotonic() - start)))
    submit(root, ["bob", "sleepy"], slow=("sleepy",), sleeps=deadline // 9 + 1)
    done = grade(root, env, "--course", str(root), "--jobs", "2", "--timeout", str(deadline))
    assert done.returncode == 1, done.stdout + done.stderr
    assert scores(root) == {"ann": FULL, "bob": FULL, "sleepy": 0.0}
    assert re.search(
        rf"sleepy · - · -: not graded: grading took more than {deadline} s", done.stdout
    ), done.stdout
    jupyter, home = Path(env["JUPYTER_CONFIG_DIR"]), Path(env["HOME"])
    (jupyter / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n"
    )
    again = grade(root, env, cwd=home)
    assert again.returncode == 1 and graded_now(again.stdout) == 0, again.stdout + again.stderr
    (jupyter / "nbgrader_config.py").unlink()
    lost = grade(root, env, cwd=home)
    assert lost.returncode == 2 and "--course /path/to/the/course" in lost.stderr, lost.stderr


def test_a_worker_or_the_command_killed_midway_loses_nothing(tmp_path):
    """A worker killed while it grades: its submission goes to a new worker. Then the whole
    command killed once a first result is written: its workers die with it, and the next
    run grades exactly the submissions that have no result."""
    students = ["ann", "bob", "cy", "dee"]
    root, env = make_course(tmp_path, students)
    command = grade(root, env, "--course", str(root), "--jobs", "1", wait=False)
    deadline = time.monotonic() + HANG  # a hang guard only
    workers = []
    while not workers and time.monotonic() < deadline:
        workers = [
            p
            for p in children(command.pid)
            if b"kvlesson.grading.grade.worker" in _read(Path(f"/proc/{p}/cmdline"))
        ]
        time.sleep(0.2)
    assert workers, "no grading worker started"
    time.sleep(1.5)  # in the middle of the first submission
    os.kill(workers[0], signal.SIGKILL)
    while not marked(root, students) and time.monotonic() < deadline:  # a first result
        time.sleep(0.1)
    started = children(command.pid)  # its workers now
    os.kill(command.pid, signal.SIGKILL)
    command.wait(timeout=HANG)
    before = {s: score for s, score in scores(root).items() if s in marked(root, students)}
    assert 1 <= len(before) < len(students) and set(before.values()) == {FULL}, before
    time.sleep(1.0)
    stray = [
        pid
        for pid in started
        if b"kvlesson.grading.grade.worker" in _read(Path(f"/proc/{pid}/cmdline"))
    ]
    assert started and not stray, "a worker of the killed run is still alive"
    again = grade(root, env, "--course", str(root), "--jobs", "2")
    assert again.returncode == 0, again.stdout + again.stderr
    assert graded_now(again.stdout) == len(students) - len(before), again.stdout
    assert scores(root) == {s: FULL for s in students}


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own, see the guide
def test_an_assignment_released_without_being_generated_is_recorded_and_graded(tmp_path):
    """A fresh clone holds notebooks/, so an instructor can release an assignment that was
    never generated, and nbgrader then cannot grade it. The grading command records it in
    the gradebook from solutions/ (also over a record with no notebooks and an empty
    submission, which nbgrader leaves after a failed autograde) and grades the class."""
    root, env = make_course(tmp_path, ["ann"])
    from nbgrader.api import Gradebook as Book

    with Book(f"sqlite:///{root / 'gradebook.db'}", course_id="kvlesson") as gb:
        gb.remove_assignment(ASSIGNMENT)  # as after a release straight from notebooks/...
        gb.add_assignment(ASSIGNMENT)  # ...and a first, failed autograde
        gb.add_student("ann")
        gb.add_submission(ASSIGNMENT, "ann")
    done = grade(root, env, "--course", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "was not recorded in the gradebook" in done.stderr, done.stderr
    assert scores(root) == {"ann": FULL}


def test_every_process_the_grader_starts_is_isolated_and_writes_no_bytecode(tmp_path):
    """A grader process started in a submission's folder imports nothing from it (a
    student's json.py is not the standard library's), and writes no bytecode: a boxed
    kernel that imports a package with no fresh .pyc (a new clone) must not try."""
    from kvlesson.grading.course import isolated

    (tmp_path / "json.py").write_text("print('SHADOWED')\n")
    done = subprocess.run(
        isolated.python("json.tool"), input='{"a": 1}', capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0 and "SHADOWED" not in done.stdout, done.stdout + done.stderr
    assert {"-I", "-B"} <= set(isolated.python("json.tool"))


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own, see the guide
def test_generate_records_each_assignment_once_from_the_instructors_home(tmp_path):
    """`kvlesson generate`, typed in a new terminal (the instructor's home,
    whose nbgrader configuration names the course root, as on the hub): it records the
    assignment in that course's gradebook; typed again once a student has a submission, it
    leaves the assignment alone (nbgrader's own generate would fail there, and delete the
    release's notebook); with no course root in sight it says which --course to give."""
    root = command.copy_course(tmp_path / "course", [ASSIGNMENT])
    env = account_env(tmp_path / "instructor", "instructor")
    home, release = Path(env["HOME"]), root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"

    def generate() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "kvlesson", "generate"],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG,
        )

    lost = generate()
    assert lost.returncode == 2 and "--course /path/to/the/course" in lost.stderr, lost.stderr
    (home / ".jupyter" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n"
    )
    first = generate()
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"recorded in {root / 'gradebook.db'}: {ASSIGNMENT}"
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="kvlesson") as gb:
        assert [n.name for n in gb.find_assignment(ASSIGNMENT).notebooks] == [NOTEBOOK]
        gb.add_student("ann")
        gb.add_submission(ASSIGNMENT, "ann")
    again = generate()
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"already recorded, left as they are: {ASSIGNMENT}"
    assert release.is_file()
