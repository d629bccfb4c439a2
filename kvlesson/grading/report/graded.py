"""A graded class as the course holds it: each notebook's score and flags, each answer's
outcome and known mistake.

The grading command writes every result into the gradebook (the scores) and beside the
graded notebooks (the marker: flags, and for each exercise its outcome and the known
mistake its answer matched, `kvlesson.grading.marking.diagnosis`). Everything here reads them
back, for the command's summary and for the class report; nothing here writes.
"""

from __future__ import annotations

from dataclasses import replace

import nbformat

from kvlesson.grading.course.folders import Course, marker_of
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.course.notebooks import grade_id_of
from kvlesson.grading.course.results import (
    FAILED,
    NOT_GRADED,
    PASSED,
    SKIPPED,
    Answer,
    ExerciseMark,
    Flag,
    Graded,
)


def graded_notebooks(course: Course, assignment: str) -> list[Graded]:
    """Every submitted notebook's result as the last grading left it: the gradebook's score
    out of the autograded points, and the flags and failure from the marker."""
    out = []
    with course.gradebook() as gb:
        for submission in gb.assignment_submissions(assignment):
            student = submission.student.id
            marker = marker_of(course.autograded / student / assignment)
            flags = tuple(
                replace(f, student=student, notebook=f.notebook or "-", cell=f.cell or "-")
                for f in (marker.flags if marker else ())
            )
            failure = marker.failure if marker else ""
            if failure:
                flags += (Flag(failure, student=student, notebook="-", cell="-"),)
            for notebook in submission.notebooks:
                mine = tuple(f for f in flags if f.notebook in (notebook.name, "-"))
                out.append(
                    Graded(
                        student,
                        notebook.name,
                        notebook.code_score,
                        notebook.max_code_score,
                        mine,
                        failure,
                    )
                )
    return sorted(out, key=lambda g: (g.student, g.notebook))


def exercises_of(course: Course, assignment: str) -> list[tuple[str, str, float]]:
    """The assignment's autograded exercises in the course's order: (notebook, grade_id,
    points), from its instructor notebooks and its key."""
    key = read_key(key_path(course.root, assignment))["exercises"]
    found = []
    for path in sorted((course.source / assignment).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = grade_id_of(cell)
            if cell.cell_type == "code" and grade_id in key:
                found.append((path.stem, grade_id, float(key[grade_id]["points"])))
    return found


def class_answers(course: Course, assignment: str) -> list[Answer]:
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
        marker = marker_of(course.autograded / student / assignment)
        for notebook, grade_id, points in exercises:
            marks = {m.grade_id: m for m in (marker.marks.get(notebook, ()) if marker else ())}
            out.append(
                _answer(
                    student,
                    notebook,
                    grade_id,
                    points,
                    marks.get(grade_id),
                    marker is None or bool(marker.failure),
                )
            )
    return out


def _answer(
    student: str,
    notebook: str,
    grade_id: str,
    points: float,
    mark: ExerciseMark | None,
    failed: bool,
) -> Answer:
    if failed:
        return Answer(student, notebook, grade_id, points, 0.0, NOT_GRADED)
    if mark is None:
        return Answer(student, notebook, grade_id, points, 0.0, SKIPPED)
    score = float(mark.score)
    outcome = mark.outcome or (PASSED if score >= points else FAILED)
    return Answer(student, notebook, grade_id, points, score, outcome, mark.mistake, mark.words)


def graded_assignments(course: Course) -> list[str]:
    """The assignments of the gradebook with at least one graded submission, in the
    course's order (their names start with their number)."""
    if not course.database().is_file():  # nothing graded: leave no empty gradebook behind
        return []
    with course.gradebook() as gb:
        names = [a.name for a in gb.assignments]
        return sorted(
            name
            for name in names
            if any(
                marker_of(course.autograded / s.student.id / name) is not None
                for s in gb.assignment_submissions(name)
            )
        )


def known_mistakes(course: Course, assignment: str) -> set[str]:
    """The codes of the known mistakes the key of `assignment` can name."""
    key = read_key(key_path(course.root, assignment))
    return {
        known["mistake"]
        for exercise in key.get("exercises", {}).values()
        for known in exercise.get("mistakes", [])
    }


def check_known(course: Course, assignment: str) -> None:
    """ValueError naming the course's assignments when `assignment` is not one of them (a
    folder of the instructor notebooks)."""
    source = course.source
    known = (
        sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith("."))
        if source.is_dir()
        else []
    )
    if assignment not in known:
        raise ValueError(
            f"unknown assignment {assignment!r}: the course in {course.root} has "
            f"{', '.join(known) or 'no assignment'}"
        )
