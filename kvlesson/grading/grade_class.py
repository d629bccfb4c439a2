"""Grade a whole class with one command: autograde in the box, then mark outside it.

    python -m kvlesson.grade ASSIGNMENT [--course ROOT] [--force]

1. `nbgrader autograde ASSIGNMENT` in the course root: each submission's kernel runs in
   the grading box (kvlesson.grading.box, chosen by nbgrader_config.py); a cell that kills its
   kernel or cannot be interrupted costs that cell only. Submissions graded before are
   skipped unless they were submitted again (`--force` grades every one again).
2. Marking, in this process: each autograded notebook's record lines are compared with
   the key written at release (keys/ASSIGNMENT.json, kvlesson.grading.marking); where the mark
   differs from nbgrader's in-kernel score, the gradebook takes the mark. A notebook in
   which the box refused or reported an operation scores 0.
3. Every flag (what the box saw, what the marking found) is printed with the student,
   the cell and the reason, written to flags/ASSIGNMENT.csv, and put as a comment on the
   answer cell of its exercise in the gradebook (the formgrader shows it); a flagged test
   cell needs a manual look.

The exit code is 0 when every submission was graded, whatever the students did; 1 when
nbgrader itself failed on a submission (the others are still marked), 2 when the course is
not ready (no key, no bubblewrap).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

from kvlesson.grading.box.flags import TAMPER, read_flags
from kvlesson.grading.box.walls import bwrap_path
from kvlesson.grading.marking import Mark, key_path, mark_notebook, read_key

CONFIG = "nbgrader_config.py"  # the course root's nbgrader configuration
FLAGS_FOLDER = "flags"  # in the course root: one CSV of flags per assignment
COMMENT_PREFIX = "kvlesson grader: "


@dataclass(frozen=True)
class Flag:
    """One flag as the instructor sees it: who, where, and why."""
    student: str
    notebook: str
    cell: str
    reason: str


@dataclass(frozen=True)
class Graded:
    """One student's notebook after marking: the score out of the autograded points."""
    student: str
    notebook: str
    score: float
    max_score: float
    flags: tuple[Flag, ...]


def gradebook(root: Path) -> Gradebook:
    """The course's gradebook, where nbgrader_config.py of the course root puts it."""
    config = PyFileConfigLoader(CONFIG, path=str(root)).load_config()
    coursedir = CourseDirectory(config=config, root=str(root))
    return Gradebook(coursedir.db_url, course_id=coursedir.course_id)


def autograde(root: Path, assignment: str, force: bool) -> int:
    """Run nbgrader's autograde (in the box, through nbgrader_config.py); its exit code."""
    command = [sys.executable, "-m", "nbgrader", "autograde", assignment]
    return subprocess.run(command + (["--force"] if force else []), cwd=root).returncode


def nearest_graded_cell(nb: nbformat.NotebookNode, index: int) -> str:
    """The grade id of cell `index`, or of the nearest nbgrader cell before it (the
    formgrader only shows comments on those), or of the first one."""
    ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells]
    before = [grade_id for grade_id in ids[:index + 1] if grade_id]
    return before[-1] if before else next(grade_id for grade_id in ids if grade_id)


def answer_cell_for(nb: nbformat.NotebookNode, grade_id: str) -> str | None:
    """The answer cell a flag on cell `grade_id` is written on in the gradebook: nbgrader
    keeps comments on answer (solution) cells only, so the nearest one at or before it,
    else the first one."""
    meta = [cell.metadata.get("nbgrader", {}) for cell in nb.cells]
    ids = [m.get("grade_id") for m in meta]
    upto = meta[:ids.index(grade_id) + 1] if grade_id in ids else []
    before = [m["grade_id"] for m in upto if m.get("solution")]
    answers = [m["grade_id"] for m in meta if m.get("solution")]
    if before:
        return before[-1]
    return answers[0] if answers else None


def flags_of(student: str, notebook: str, nb: nbformat.NotebookNode,
             marks: list[Mark]) -> list[Flag]:
    """Every flag of one notebook: what the box saw, then what the marking found."""
    boxed, box_flags = read_flags(nb)
    flags = [Flag(student, notebook, nearest_graded_cell(nb, f.cell), f.reason)
             for f in box_flags]
    if not boxed:
        flags.append(Flag(student, notebook, nearest_graded_cell(nb, 0),
                          "graded outside the box: check nbgrader_config.py"))
    flags += [Flag(student, notebook, mark.grade_id, reason)
              for mark in marks for reason in mark.flags]
    return flags


def record(gb: Gradebook, assignment: str, graded: Graded, marks: list[Mark],
           nb: nbformat.NotebookNode) -> None:
    """Write the marks into the gradebook, and each flag as a comment on the answer cell
    of its exercise (`nb` is the autograded notebook)."""
    for mark in marks:
        try:
            grade = gb.find_grade(mark.grade_id, graded.notebook, assignment, graded.student)
        except MissingEntry:
            raise ValueError(f"the key of {assignment} has a test cell {mark.grade_id!r} that "
                             "the gradebook does not: run python -m kvlesson.course build, "
                             f"then nbgrader generate_assignment {assignment} --force") from None
        grade.auto_score = mark.score
        if any(flag.cell == mark.grade_id for flag in graded.flags):
            grade.needs_manual_grade = True
    by_cell: dict[str, list[str]] = {}
    for flag in graded.flags:
        by_cell.setdefault(answer_cell_for(nb, flag.cell), []).append(
            f"{flag.cell}: {flag.reason}")
    for cell, reasons in by_cell.items():
        if cell is None:
            continue
        try:
            comment = gb.find_comment(cell, graded.notebook, assignment, graded.student)
        except MissingEntry:
            continue
        comment.auto_comment = COMMENT_PREFIX + "; ".join(reasons)
    gb.db.commit()


def mark_class(root: Path, assignment: str, key: dict) -> list[Graded]:
    """Mark every autograded notebook of `assignment` and record it in the gradebook."""
    results = []
    with gradebook(root) as gb:
        for submission in gb.assignment_submissions(assignment):
            student = submission.student.id
            for notebook in submission.notebooks:
                path = root / "autograded" / student / assignment / f"{notebook.name}.ipynb"
                if not path.is_file():
                    continue  # no notebook submitted: nbgrader already scored it 0
                nb = nbformat.read(path, as_version=4)
                marks = mark_notebook(nb, key)
                if any(flag.kind == TAMPER for flag in read_flags(nb)[1]):
                    marks = [Mark(m.grade_id, m.points, 0.0, m.flags) for m in marks]
                graded = Graded(student, notebook.name, sum(m.score for m in marks),
                                sum(m.points for m in marks),
                                tuple(flags_of(student, notebook.name, nb, marks)))
                record(gb, assignment, graded, marks, nb)
                results.append(graded)
    return sorted(results, key=lambda g: (g.student, g.notebook))


def write_flags_file(root: Path, assignment: str, results: list[Graded]) -> Path:
    """flags/ASSIGNMENT.csv in the course root: one line per flag of the class."""
    path = root / FLAGS_FOLDER / f"{assignment}.csv"
    path.parent.mkdir(exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "notebook", "cell", "reason"])
        for graded in results:
            writer.writerows([flag.student, flag.notebook, flag.cell, flag.reason]
                             for flag in graded.flags)
    return path


def summary(assignment: str, results: list[Graded], flags_file: Path) -> str:
    """What the instructor reads: each student's score, then every flag."""
    lines = [f"{assignment}: {len(results)} notebooks marked"]
    lines += [f"  {g.student:<20} {g.notebook:<16} {g.score:g} / {g.max_score:g}"
              f"{f'   {len(g.flags)} flags' if g.flags else ''}" for g in results]
    flags = [flag for graded in results for flag in graded.flags]
    lines.append(f"{len(flags)} flags (also in {flags_file} and in the formgrader's comments):")
    lines += [f"  {f.student} · {f.notebook} · {f.cell}: {f.reason}" for f in flags]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Grade ASSIGNMENT for the whole class; the exit code the module docstring gives."""
    parser = argparse.ArgumentParser(prog="python -m kvlesson.grade", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignment", help="the assignment to grade, e.g. 01_floor_plan")
    parser.add_argument("--course", type=Path, default=Path("."),
                        help="the course root (where nbgrader_config.py is; default: here)")
    parser.add_argument("--force", action="store_true",
                        help="grade every submission again, not only new ones")
    args = parser.parse_args(argv)
    root = args.course.resolve()
    try:
        if not (root / CONFIG).is_file():
            raise ValueError(f"{root} is not a course root: it has no nbgrader_config.py")
        bwrap_path()
        key = read_key(key_path(root, args.assignment))
    except (ValueError, RuntimeError) as error:
        print(f"kvlesson.grade: {error}", file=sys.stderr)
        return 2
    autograded = autograde(root, args.assignment, args.force)
    try:
        results = mark_class(root, args.assignment, key)
    except ValueError as error:
        print(f"kvlesson.grade: {error}", file=sys.stderr)
        return 2
    print(summary(args.assignment, results, write_flags_file(root, args.assignment, results)))
    if autograded != 0:
        print(f"kvlesson.grade: nbgrader autograde {args.assignment} failed (its log is above): "
              "the submissions it names are not graded", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
