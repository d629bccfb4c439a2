"""The one writer: a graded submission into the course, and what has a result already.

Workers grade side by side; only the grading command writes, one result at a time, so
nbgrader's SQLite gradebook never has two writers. A result goes in as the formgrader
expects it: the graded notebooks, cleaned of live HTML, with the submission's other plain
files and a marker of when and how it was graded, swapped into autograded/ in one move;
then its grade rows, written once: the marks, nbgrader's own reading of the cells outside
the key (a written answer needs a person; the worker reads it as nbgrader's SaveAutoGrades
would), each flag as a comment on the answer cell of its exercise, and so the known mistake
each failed exercise's answer matched (or that it matched none), which the feedback shows;
and late work by the course's policy (grade/lateness.py: the plugin the configuration names,
`AssignLatePenalties.plugin_class`, asked on the course's marks, and a flag). A submission has a result
when its marker names its submission time and the gradebook holds it; a run killed midway
leaves the others to the next.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import nbformat

from kvlesson.grading.course import notebooks, seal
from kvlesson.grading.course.folders import MARKER, Course, marker_of, read_timestamp
from kvlesson.grading.course.ids import id_problem
from kvlesson.grading.course.results import FAILED, Flag, Marker, SubmissionResult
from kvlesson.grading.course.text import printable
from kvlesson.grading.grade.sanitize import markdown_text, sanitized
from kvlesson.grading.marking import diagnosis

COMMENT_PREFIX = "kvlesson grader: "


def submitted_folders(course: Course, assignment: str) -> tuple[list[str], list[str]]:
    """The students with a submission of `assignment` (their folder in submitted/ a real one),
    and, apart, each folder whose name cannot be a student's id, named printably with why."""
    students, odd = [], []
    for path in sorted(course.submitted.glob(f"*/{assignment}")):
        if path.parent.is_symlink():
            continue
        problem = id_problem(path.parent.name)
        if problem:
            odd.append(
                f"submitted/{printable(path.parent.name)}: not graded: its name {problem}, "
                "so it is no student's id"
            )
        else:
            students.append(path.parent.name)
    return students, odd


def pending(course: Course, assignment: str, force: bool) -> list[str]:
    """The students whose submission has no result yet: no marker, a marker of an older
    submission, or no submission in the gradebook (a run killed after the files were
    written); every student with `force`. A folder whose name cannot be a student id is
    never one of them (`submitted_folders` names it)."""
    students, _ = submitted_folders(course, assignment)
    if force:
        return students
    with course.gradebook() as gb:
        known = {s.student.id for s in gb.assignment_submissions(assignment)}
    out = []
    for student in students:
        marker = marker_of(course.autograded / student / assignment)
        stamp = read_timestamp(course.submitted / student / assignment)
        if marker is None or marker.timestamp != stamp or student not in known:
            out.append(student)
    return out


def store_files(course: Course, assignment: str, result: SubmissionResult) -> None:
    """Put the graded notebooks (cleaned of live HTML) and the submission's other plain
    files into autograded/STUDENT/ASSIGNMENT, with the marker, in one swap."""
    dest = course.autograded / result.student / assignment
    fresh = dest.parent / f".{assignment}.new"
    shutil.rmtree(fresh, ignore_errors=True)
    if result.graded:
        seal.seal(Path(result.autograded), fresh, ignore=("*.ipynb", MARKER))
        for name in result.notebooks:
            nb = nbformat.read(Path(result.autograded) / f"{name}.ipynb", as_version=4)
            nbformat.write(sanitized(nb), fresh / f"{name}.ipynb")
    else:
        fresh.mkdir(parents=True)
    Marker.of(result).write(fresh / MARKER)
    for path in fresh.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o444)
    old = dest.parent / f".{assignment}.old"
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists() or dest.is_symlink():
        dest.rename(old)
    fresh.rename(dest)
    shutil.rmtree(old, ignore_errors=True)


def answer_cell_for(
    nb: nbformat.NotebookNode | None, grade_id: str, answers: list[str]
) -> str | None:
    """The answer cell a flag on cell `grade_id` is written on in the gradebook: nbgrader
    keeps comments on answer (solution) cells only, so the nearest one at or before it in
    the graded notebook `nb`, else the first one (`answers`, the notebook's answer cells)."""
    if nb is not None:
        meta = [notebooks.meta(cell) for cell in nb.cells]
        ids = [m.get("grade_id") for m in meta]
        upto = meta[: ids.index(grade_id) + 1] if grade_id in ids else []
        before = [m["grade_id"] for m in upto if m.get("solution") and m["grade_id"] in answers]
        if before:
            return before[-1]
    return answers[0] if answers else None


def as_markdown(text: str) -> str:
    """`text` as Markdown that shows it as written (the feedback renders a comment as
    Markdown): the emphasis marks outside `code` escaped, so 2**30 stays 2**30."""
    parts = text.split("`")
    return "`".join(
        part if inside % 2 else re.sub(r"([\\*_])", r"\\\1", part)
        for inside, part in enumerate(parts)
    )


def submission_time(result: SubmissionResult):
    """The submission's time as nbgrader stores it; None, with a flag on the result, when
    its `timestamp.txt` holds no time nbgrader can read (the mark is then stored without a
    time, and no late penalty applies)."""
    from nbgrader.utils import parse_utc

    if not result.timestamp:
        return None
    try:
        return parse_utc(result.timestamp)
    except (ValueError, OverflowError, TypeError) as error:
        result.flags.append(
            Flag(
                f"the submission's time {result.timestamp!r} cannot be read "
                f"({type(error).__name__}): stored without a time, so no "
                "late penalty applies; check it by hand"
            )
        )
        return None


def store_grades(course: Course, assignment: str, result: SubmissionResult) -> None:
    """Write one result into the gradebook: the marks of the autograded tests, nbgrader's own
    grades of the other cells, 0 throughout for a submission that could not be graded, and
    each flag as a comment on the answer cell of its exercise."""
    from kvlesson.grading.grade.lateness import Late  # nbgrader's plugin: when grades are written

    timestamp = submission_time(result)
    with course.gradebook() as gb, warnings.catch_warnings():
        # nbgrader's own SQLAlchemy warnings when it makes a submission ("Object of type
        # <SubmittedAssignment> not in session"): harmless, see docs/instructors.md
        warnings.filterwarnings("ignore", message=".*not in session.*")
        gb.update_or_create_student(result.student)
        submission = gb.update_or_create_submission(assignment, result.student, timestamp=timestamp)
        late = Late.of(course, submission, course.submitted / result.student / assignment)
        for notebook in submission.notebooks:
            info = result.notebooks.get(notebook.name) if result.graded else None
            marks = {m.grade_id: m for m in info.marks} if info else {}
            flagged = {flag.cell for flag in result.flags if flag.notebook == notebook.name}
            for grade in notebook.grades:
                theirs = info.grades.get(grade.name, {}) if info else {}
                if info is None:
                    grade.auto_score, grade.needs_manual_grade = 0.0, False
                elif grade.name in marks:
                    grade.auto_score = marks[grade.name].score
                    grade.needs_manual_grade = grade.name in flagged
                else:  # as nbgrader's SaveAutoGrades: a grade a person gave is reviewed
                    grade.auto_score = theirs.get("auto_score")
                    grade.needs_manual_grade = bool(
                        theirs.get("needs_manual_grade", True) or grade.manual_score is not None
                    )
            if info is not None:  # by the course's policy, on the course's marks; flagged
                notebook.late_submission_penalty = late.flag(result.student, notebook, result)
            graded = (
                nbformat.read(Path(result.autograded) / f"{notebook.name}.ipynb", 4)
                if info is not None
                else None
            )
            texts = dict(info.comments) if info else {}
            answers = sorted(c.name for c in notebook.comments)
            reasons: dict[str, list[str]] = {}
            for flag in result.flags:
                if flag.notebook in (notebook.name, ""):
                    target = answer_cell_for(graded, flag.cell, answers)
                    # a flag holds the student's text: it renders as that text, never a link
                    reasons.setdefault(target, []).append(
                        markdown_text(f"{flag.cell}: {flag.reason}" if flag.cell else flag.reason)
                    )
            if not result.graded and answers:
                reasons.setdefault(answers[0], []).append(markdown_text(result.failure))
            for mark in info.marks if info else ():
                if mark.outcome == FAILED:  # what the feedback names
                    target = answer_cell_for(graded, mark.grade_id, answers)
                    reasons.setdefault(target, []).append(
                        as_markdown(
                            diagnosis.feedback_line(mark.grade_id, mark.mistake, mark.words)
                        )
                    )
            for target, lines in reasons.items():
                texts[target] = COMMENT_PREFIX + "; ".join(lines)
            for comment in notebook.comments:
                comment.auto_comment = texts.get(comment.name, comment.auto_comment)
        gb.db.commit()
