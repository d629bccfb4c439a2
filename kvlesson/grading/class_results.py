"""A graded class as the course holds it: each notebook's score and flags, each answer's
outcome and known mistake.

The grading command writes every result into the gradebook (the scores) and beside the
graded notebooks (the marker: flags, and for each exercise its outcome and the known
mistake its answer matched, `kvlesson.grading.diagnosis`). Everything here reads them
back, for the command's summary and for the class report; nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat

from kvlesson.grading import cell_roles, diagnosis
from kvlesson.grading.gradebook_writer import Course, marker_of
from kvlesson.grading.marking import key_path, read_key


@dataclass(frozen=True)
class Flag:
    """One flag as the instructor sees it: who, where, and why."""
    student: str
    notebook: str
    cell: str
    reason: str


@dataclass(frozen=True)
class Graded:
    """One student's notebook as the gradebook holds it: score out of the autograded points."""
    student: str
    notebook: str
    score: float
    max_score: float
    flags: tuple[Flag, ...]
    failure: str = ""


@dataclass(frozen=True)
class Answer:
    """One student's answer to one exercise, as the marker judged it: its outcome, and for
    a failed one the known mistake it matched ("" for none) in its self-check's words."""
    student: str
    notebook: str
    exercise: str
    points: float
    score: float
    outcome: str
    mistake: str = ""
    words: str = ""


def class_results(course: Course, assignment: str) -> list[Graded]:
    """Every submitted notebook's result as the last grading left it: the gradebook's score
    out of the autograded points, and the flags and failure from the marker."""
    out = []
    with course.gradebook() as gb:
        for submission in gb.assignment_submissions(assignment):
            student = submission.student.id
            marker = marker_of(course.autograded / student / assignment) or {}
            flags = tuple(Flag(student, notebook or "-", cell or "-", reason)
                          for notebook, cell, reason in marker.get("flags", []))
            if marker.get("failure"):
                flags += (Flag(student, "-", "-", marker["failure"]),)
            for notebook in submission.notebooks:
                mine = tuple(f for f in flags if f.notebook in (notebook.name, "-"))
                out.append(Graded(student, notebook.name, notebook.code_score,
                                  notebook.max_code_score, mine, marker.get("failure", "")))
    return sorted(out, key=lambda g: (g.student, g.notebook))


def exercises_of(course: Course, assignment: str) -> list[tuple[str, str, float]]:
    """The assignment's autograded exercises in the course's order: (notebook, grade_id,
    points), from its instructor notebooks and its key."""
    key = read_key(key_path(course.root, assignment))["exercises"]
    source = course.config.CourseDirectory.get("source_directory", "source")
    found = []
    for path in sorted((course.root / source / assignment).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell_roles.meta(cell).get("grade_id")
            if cell.cell_type == "code" and grade_id in key:
                found.append((path.stem, grade_id, float(key[grade_id]["points"])))
    return found


def answers(course: Course, assignment: str) -> list[Answer]:
    """Every submitted student's answer to every exercise of `assignment`. A submission
    that could not be graded counts each exercise as not graded; a notebook not handed in
    counts its exercises as skipped. A result marked before exercises had outcomes counts
    as passed or failed by its score, with no mistake named (grade with --force to name
    them)."""
    exercises = exercises_of(course, assignment)
    with course.gradebook() as gb:
        students = sorted(s.student.id for s in gb.assignment_submissions(assignment))
    out = []
    for student in students:
        marker = marker_of(course.autograded / student / assignment) or {}
        for notebook, grade_id, points in exercises:
            marks = {m["grade_id"]: m for m in marker.get("marks", {}).get(notebook, [])}
            out.append(_answer(student, notebook, grade_id, points, marks.get(grade_id),
                               bool(marker.get("failure")) or not marker))
    return out


def _answer(student: str, notebook: str, grade_id: str, points: float, mark: dict | None,
            failed: bool) -> Answer:
    if failed:
        return Answer(student, notebook, grade_id, points, 0.0, diagnosis.NOT_GRADED)
    if mark is None:
        return Answer(student, notebook, grade_id, points, 0.0, diagnosis.SKIPPED)
    score = float(mark["score"])
    outcome = mark.get("outcome") or (diagnosis.PASSED if score >= points else diagnosis.FAILED)
    return Answer(student, notebook, grade_id, points, score, outcome,
                  mark.get("mistake", ""), mark.get("words", ""))


def graded_assignments(course: Course) -> list[str]:
    """The assignments of the gradebook with at least one graded submission, in the
    course's order (their names start with their number)."""
    if not course.database().is_file():  # nothing graded: leave no empty gradebook behind
        return []
    with course.gradebook() as gb:
        names = [a.name for a in gb.assignments]
        return sorted(name for name in names
                      if any(marker_of(course.autograded / s.student.id / name) is not None
                             for s in gb.assignment_submissions(name)))


def known_mistakes(course: Course, assignment: str) -> set[str]:
    """The codes of the known mistakes the key of `assignment` can name."""
    key = read_key(key_path(course.root, assignment))
    return {known["mistake"] for exercise in key.get("exercises", {}).values()
            for known in exercise.get("mistakes", [])}


def check_known(course: Course, assignment: str) -> None:
    """ValueError naming the course's assignments when `assignment` is not one of them (a
    folder of the instructor notebooks)."""
    source = course.root / course.config.CourseDirectory.get("source_directory", "source")
    known = sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith(".")
                   ) if source.is_dir() else []
    if assignment not in known:
        raise ValueError(f"unknown assignment {assignment!r}: the course in {course.root} has "
                         f"{', '.join(known) or 'no assignment'}")
