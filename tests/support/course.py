"""Shared builders for the tests that run nbgrader and the grading command on a copy of
the course: running the commands, an account's environment, reading and editing notebooks,
and finding solution and hidden-test lines (what a release must never hold)."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from kvlesson.authoring import command
from support.paths import ROOT
from support.patience import HANG

SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN_MARKERS = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
# Lines of solution code that say nothing about the answer.
TRIVIAL_LINES = {"return None", "pass", "else:", "try:", "return", "break", "continue"}
# A call's last argument on a line of its own, a unit word such as `"bytes"),`: every test
# cell, hidden or visible, ends its probes so.
UNIT_ONLY = re.compile(r"""["'][a-z/ ]{1,12}["'][)\],]*""")


# ---------------------------------------------------------------------------
# Running nbgrader


def run_as(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run `command` in `cwd` with an account's environment, its output captured as text."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )


def run_nbgrader(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run `python -m nbgrader ARGS` in `cwd`; fail with its whole output if it fails."""
    done = run_as([sys.executable, "-m", "nbgrader", *args], cwd, env)
    if done.returncode != 0:
        pytest.fail(
            f"`nbgrader {' '.join(args)}` exited {done.returncode} in {cwd}\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"
        )
    return done


def generate(course: Path, assignments: list[str], env: dict[str, str]) -> None:
    """`nbgrader generate_assignment A --force` for each of `assignments`, as the instructor
    account, in one process (with nbgrader's own API, as `kvlesson build` releases: nbgrader
    started once instead of once per assignment); fail with nbgrader's words if one fails."""
    done = run_as(
        [sys.executable, "-m", "kvlesson.grading.course.gradebook", *assignments], course, env
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or lines[-1:] != ["{}"]:
        pytest.fail(
            f"generating {assignments} in {course} failed:\n{done.stdout[-3000:]}"
            f"\n{done.stderr[-3000:]}"
        )


def run_grade(
    course: Path, assignment: str | list[str], env: dict[str, str]
) -> subprocess.CompletedProcess:
    """The one grading command of docs/instructors.md, `kvlesson grade ASSIGNMENT
    --course ROOT` (each submission sealed, autograded in the box and marked); fail with its
    output unless it exits 0. Its stdout is the summary, its stderr the progress."""
    assignments = [assignment] if isinstance(assignment, str) else assignment
    command = [sys.executable, "-m", "kvlesson", "grade", *assignments, "--course", str(course)]
    done = subprocess.run(
        command,
        cwd=course.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"`kvlesson grade {assignment}` exited {done.returncode}\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"
        )
    return done


def set_cell_timeout(course: Path, seconds: int) -> None:
    """A shorter cell timeout than the course's 30 s, in the course copy's config."""
    with (course / "nbgrader_config.py").open("a") as config:
        config.write(f"\nc.Execute.timeout = {seconds}\n")


def account_env(home: Path, user: str) -> dict[str, str]:
    """The environment of one account: its own HOME and user name, and an empty Jupyter
    config folder, so that no ~/.jupyter/nbgrader_config.py of this machine leaks in."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_", "JPY_", "NBGRADER"))
    }
    (home / ".jupyter").mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        USER=user,
        LOGNAME=user,
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    return env


def instructor_env(course: Path) -> dict[str, str]:
    """The instructor's account, with a home next to the course folder."""
    return account_env(course.parent / "instructor", "instructor")


def make_course_root(root: Path, assignments: list[str]) -> Path:
    """An nbgrader course folder: this repository's config and autotest templates, and
    the instructor notebooks of `assignments` in solutions/<assignment>/."""
    return command.copy_course(root, assignments)


# ---------------------------------------------------------------------------
# Notebooks


def read_nb(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def cell_by_id(nb, grade_id: str):
    """The cell whose nbgrader grade_id is `grade_id`."""
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == grade_id:
            return cell
    raise KeyError(f"no cell with grade_id {grade_id!r}")


def without_markers(source: str, markers: tuple[str, str]) -> str:
    """The source with the marker lines dropped and what they enclose kept."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in markers)


def between_markers(source: str, markers: tuple[str, str]) -> list[str]:
    """The lines strictly between each begin and end marker of `source`."""
    lines, inside = [], False
    for line in source.splitlines():
        if line.strip() == markers[0]:
            inside = True
        elif line.strip() == markers[1]:
            inside = False
        elif inside:
            lines.append(line)
    return lines


def outside_markers(source: str) -> list[str]:
    """The lines of `source` that are in no solution and no hidden-test region."""
    lines, inside = [], False
    begins = {SOLUTION_MARKERS[0], HIDDEN_MARKERS[0]}
    ends = {SOLUTION_MARKERS[1], HIDDEN_MARKERS[1]}
    for line in source.splitlines():
        if line.strip() in begins:
            inside = True
        elif line.strip() in ends:
            inside = False
        elif not inside:
            lines.append(line)
    return lines


def instructor_solutions(assignment: str, notebook: str) -> dict[str, str]:
    """The instructor's code for each autograded answer cell, markers removed:
    what a student who got everything right would have written."""
    nb = read_nb(ROOT / "solutions" / assignment / f"{notebook}.ipynb")
    return {
        nbgrader_meta(cell)["grade_id"]: without_markers(cell.source, SOLUTION_MARKERS)
        for cell in nb.cells
        if cell.cell_type == "code" and nbgrader_meta(cell).get("solution")
    }


def edit_notebook(
    path: Path,
    answers: dict[str, str] | None = None,
    tests: dict[str, str] | None = None,
    points: dict[str, float] | None = None,
) -> None:
    """Edit a student's notebook in place as the student would: the source of answer
    cells, and (hostile) the source or the points of locked test cells."""
    nb = read_nb(path)
    for grade_id, source in (answers or {}).items():
        cell_by_id(nb, grade_id).source = source
    for grade_id, source in (tests or {}).items():
        cell_by_id(nb, grade_id).source = source
    for grade_id, value in (points or {}).items():
        cell_by_id(nb, grade_id).metadata.nbgrader["points"] = value
    nbformat.write(nb, path)


def all_strings(node) -> list[str]:
    """Every string in a JSON tree: sources, outputs, metadata, everything."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in all_strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in all_strings(value)]
    return []


def is_trivial(line: str) -> bool:
    """A line too short or too common to give anything away."""
    return (
        line in TRIVIAL_LINES
        or len(line) < 5
        or not any(ch.isalnum() for ch in line)
        or UNIT_ONLY.fullmatch(line) is not None
    )


def secret_lines(instructor_nb) -> dict[str, str]:
    """Each line of solution or hidden-test text of the instructor notebook that appears
    nowhere else in it, not even inside a public line (so its presence in a release can only
    be a leak: a hidden probe's `"ms", 3, scale=1e-3)` is in the visible self-check too), with
    the cell and the kind of secret it belongs to."""
    public = "\n".join(
        line.strip() for cell in instructor_nb.cells for line in outside_markers(cell.source)
    )
    secrets = {}
    for cell in instructor_nb.cells:
        where = nbgrader_meta(cell).get("grade_id", "?")
        for markers, kind in ((SOLUTION_MARKERS, "solution"), (HIDDEN_MARKERS, "hidden test")):
            for line in between_markers(cell.source, markers):
                line = line.strip()
                if not is_trivial(line) and line not in public:
                    secrets[line] = f"{kind} of {where}"
    return secrets


def error_outputs(cell) -> list[dict]:
    return [output for output in cell.get("outputs", []) if output.output_type == "error"]


def flags_of(course: Path, assignment: str, student: str) -> list[str]:
    """A student's flags as the grading command wrote them in flags/ASSIGNMENT.csv, each as
    "cell: reason"."""
    with (course / "flags" / f"{assignment}.csv").open(newline="") as f:
        return [
            f"{row['cell']}: {row['reason']}"
            for row in csv.DictReader(f)
            if row["student"] == student
        ]
