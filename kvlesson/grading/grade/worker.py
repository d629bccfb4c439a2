"""One submission, one sealed run: what a grading worker does for each student.

    python -I -m kvlesson.grading.grade.worker      (started by the grading command)

A worker reads jobs, one JSON line each, from its standard input and answers each with one
JSON line. For a job it seals the submission (plain files only) into a fresh private
course folder outside the course root, with a copy of the gradebook taken when the run
began; runs nbgrader's autograde for that student alone there, each kernel in the box
with the exercises' forbidden functions watched; and marks each graded notebook, inside its
own error handler. An nbgrader error, a notebook that cannot be marked, anything at all,
costs that submission only: it comes back as a failure with the reason in words. The
worker never writes the course's gradebook: the grading command, the one writer, does.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
import traceback
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat

from kvlesson.grading.box import fonts
from kvlesson.grading.box.flags import read_flags
from kvlesson.grading.box.ledger import cell_source_hash
from kvlesson.grading.course import contract, folders, seal
from kvlesson.grading.course.folders import MARKER, Course, read_timestamp
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.course.notebooks import grade_id_of, meta, python_of
from kvlesson.grading.course.results import (
    FORBIDDEN,
    Flag,
    NotebookResult,
    SubmissionResult,
    result_to_json,
)
from kvlesson.grading.grade import second_run
from kvlesson.grading.marking import cell_roles, marks

LOG_LIMIT = 50_000  # characters of nbgrader's log kept per submission


@dataclass
class Job:
    """One submission to grade."""

    root: str  # the course root
    assignment: str
    student: str
    private: str  # a new folder for this job, outside the course root
    template: str  # the gradebook as the run found it (copied per job)
    hide: list[str]  # folders the box must hide besides the course root (the run's folder)
    shared: str = ""  # the run's folder the workers share (kvlesson without some functions)


# Loaded in every graded kernel before any cell: what `%matplotlib inline` and a chart need.
ALWAYS_PRELOADED = ("matplotlib.pyplot", "matplotlib_inline.backend_inline")


@functools.lru_cache(maxsize=16)
def ledger_spec(root: Path, assignment: str, forbidden: tuple[str, ...]) -> str:
    """The box's ledger for this assignment: every forbidden function of its exercises; the
    hashes of the course's own code cells (answer cells excepted: they are the student's),
    whose calls are not a student's; and of its test cells, which run the student's code and
    so are watched (each as IPython hands it to the kernel, and as it runs); and the modules
    the course's own cells import, which the kernel loads before any cell ("preload")."""
    course, tests, modules = [], [], list(ALWAYS_PRELOADED)
    for notebook in sorted((_course(root).source / assignment).glob("*.ipynb")):
        for cell in nbformat.read(notebook, as_version=4).cells:
            role = meta(cell)
            if cell.cell_type != "code" or role.get("solution"):
                continue
            hashes = [cell_source_hash(cell.source), cell_source_hash(python_of(cell.source))]
            course += hashes
            if role.get("grade"):
                tests += hashes
            modules += cell_roles.imported_modules(cell.source)
    return json.dumps(
        {
            "forbidden": list(forbidden),
            "course": course,
            "tests": tests,
            "preload": list(dict.fromkeys(modules)),
        }
    )


@functools.lru_cache(maxsize=16)
def _course(root: Path) -> Course:
    return Course(root, folders.load(root))


def shared_folder(job: Job) -> Path:
    """The folder the run's workers share (the job's own folder when none is given)."""
    return Path(job.shared) if job.shared else Path(job.private) / "shared"


@functools.lru_cache(maxsize=16)
def notebook_names(root: Path, assignment: str) -> tuple[str, ...]:
    """The file names of the assignment's notebooks, as the release gives them."""
    return tuple(sorted(p.name for p in (_course(root).source / assignment).glob("*.ipynb")))


@functools.lru_cache(maxsize=16)
def instructor(root: Path, assignment: str, name: str) -> tuple:
    """The instructor's notebook and its cells' roles: read once per worker, for a class."""
    nb = nbformat.read(_course(root).source / assignment / f"{name}.ipynb", as_version=4)
    return nb, cell_roles.CourseCells.of(nb)


# nbgrader's errors, and what they mean to a student
WORDS = [
    (
        r"exists multiple times",
        "two cells of the notebook carry the same answer id: a cell was "
        "copied (copy and paste). Delete the copy, keep the cell with your answer, save and "
        "submit again",
    ),
    (
        r"newer version|SchemaTooNew|schema_version",
        "the notebook's grading information (the "
        "nbgrader metadata of a cell) was changed. Fetch a fresh copy of the assignment and paste "
        "your answers into it",
    ),
    (
        r"old version of the nbgrader metadata|SchemaTooOld",
        "the grading information of a cell "
        "is missing or was changed (a cell copied from elsewhere, or the metadata edited). Fetch a "
        "fresh copy of the assignment and paste your answers into it",
    ),
    (
        r"NotJSONError|Notebook does not appear to be JSON|Unterminated string|Expecting value",
        "the notebook file is not a notebook (its JSON cannot be read). Submit the .ipynb file "
        "JupyterLab saves",
    ),
]


def in_words(log: str) -> str:
    """An nbgrader failure in words a student understands, with nbgrader's own first error
    (or its last word)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line[len("[ERROR] ") :] for line in lines if line.startswith("[ERROR]")]
    last = errors[0] if errors else (lines[-1] if lines else "")
    for pattern, words in WORDS:
        if re.search(pattern, log):
            return f"not graded: {words} (nbgrader: {last[:200]})"
    return f"not graded: nbgrader could not grade this notebook (nbgrader: {last[:200]})"


def grade_one(job: Job) -> SubmissionResult:
    """Seal, autograde and mark one submission; never raises."""
    try:
        return _grade(job)
    except Exception:  # the grader's own failure: this submission only
        return SubmissionResult(
            job.assignment,
            job.student,
            None,
            False,
            failure="not graded: the grader failed on this submission: "
            + traceback.format_exc(limit=3).strip().splitlines()[-1],
        )


def _grade(job: Job) -> SubmissionResult:
    root, private = Path(job.root), Path(job.private)
    config = folders.load(root)
    course = Course(root, config)
    source = course.submitted / job.student / job.assignment
    timestamp = read_timestamp(source)
    flags = [Flag(note) for note in seal.read_refusals(source)]
    sealed = private / "submitted" / job.student / job.assignment
    refused = seal.seal(source, sealed, ignore=(".ipynb_checkpoints", seal.REFUSALS, MARKER))
    refused += contract.keep_notebooks(sealed, notebook_names(root, job.assignment))
    flags += [Flag(f"left out: {r}") for r in refused]
    shutil.copy(job.template, private / "gradebook.db")
    seal.seal(
        course.source / job.assignment,
        private / course.source.name / job.assignment,
        ignore=("*.ipynb", ".ipynb_checkpoints"),
    )
    key = read_key(key_path(root, job.assignment))

    def result(graded: bool, **more) -> SubmissionResult:
        return SubmissionResult(job.assignment, job.student, timestamp, graded, flags=flags, **more)

    if not any(sealed.glob("*.ipynb")):  # nothing to run: every notebook scores 0
        flags.append(Flag("no notebook was submitted: every exercise scores 0"))
        return result(True)
    forbidden = tuple(sorted({n for ex in key["exercises"].values() for n in ex["forbidden"]}))
    (private / "ledger.json").write_text(ledger_spec(root, job.assignment, forbidden))
    succeeded, log = _autograde(job, config, private)
    out = private / "autograded" / job.student / job.assignment
    notebooks = sorted(out.glob("*.ipynb")) if out.is_dir() else []
    if not succeeded:
        return result(False, failure=in_words(log), log=log)
    for path in notebooks:
        tests = {grade_id_of(c) for c in nbformat.read(path, 4).cells}
        if not tests & set(key["exercises"]):
            return result(
                False,
                failure=(
                    f"not graded: {path.name} has none of its graded cells (the nbgrader metadata "
                    "of its cells was removed, or the notebook was made anew). Fetch a fresh copy "
                    "of the assignment and paste your answers into it"
                ),
            )
    graded = result(True, autograded=str(out), log=log)
    grades = _grades(private / "gradebook.db", job.assignment, job.student)
    again = second_run.SecondRun(
        config, private, shared_folder(job), (private / "ledger.json").read_text(), sealed
    )
    for path in notebooks:
        notebook, found = _marked(root, job.assignment, path, key, again)
        graded.log = "\n".join([graded.log, *again.log])[-LOG_LIMIT:]
        again.log.clear()
        graded.notebooks[path.stem] = replace(
            grades.get(path.stem, NotebookResult()),
            marks=notebook.marks,
            tampered=notebook.tampered,
        )
        graded.flags += found
    return graded


def _autograde(job: Job, config, private: Path) -> tuple[bool, str]:
    """nbgrader's autograde of one student in the private course folder: whether it
    succeeded, and its log (the end of it, if long)."""
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    config.CourseDirectory.root = str(private)
    config.CourseDirectory.db_url = f"sqlite:///{private / 'gradebook.db'}"
    config.BoxedExecute.ledger = str(private / "ledger.json")
    config.BoxedExecute.font_cache = fonts.font_cache(shared_folder(job))
    config.BoxedExecute.hide = [job.root, *job.hide]
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id, coursedir.student_id = job.assignment, job.student
    app = Autograde(coursedir=coursedir, config=config)
    app.force = True
    with warnings.catch_warnings():  # nbgrader's own SQLAlchemy warnings, see the guide
        warnings.filterwarnings("ignore", module="nbgrader")
        warnings.filterwarnings("ignore", message=".*not in session.*")
        outcome = capture_log(app)
    log = (outcome.get("log", "") + "\n" + outcome.get("error", "")).strip()
    return bool(outcome.get("success")), log[-LOG_LIMIT:]


def _grades(db: Path, assignment: str, student: str) -> dict[str, NotebookResult]:
    """nbgrader's grades, comments and late penalty for each notebook of the submission."""
    from nbgrader.api import Gradebook, MissingEntry

    out: dict[str, NotebookResult] = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return out
        for notebook in submission.notebooks:
            out[notebook.name] = NotebookResult(
                grades={
                    g.name: {"auto_score": g.auto_score, "needs_manual_grade": g.needs_manual_grade}
                    for g in notebook.grades
                },
                comments={c.name: c.auto_comment for c in notebook.comments},
                late_penalty=notebook.late_submission_penalty,
            )
    return out


def _marked(
    root: Path, assignment: str, path: Path, key: dict, again: second_run.SecondRun | None = None
) -> tuple[marks.NotebookMark, list[Flag]]:
    """One graded notebook marked outside the kernel, inside its own error handler: its
    marks, and its flags (each exercise's, the notebook's, and what the box saw); with
    `again`, its right answers checked by the second run."""
    name = path.stem
    try:
        nb = nbformat.read(path, as_version=4)
        _, box_flags = read_flags(nb)
        source, course = instructor(root, assignment, name)
        mark = marks.mark_notebook(nb, key, source, box_flags, course)
        if again is not None:
            mark = again.check(path, key, mark)
        flags = [Flag(f, notebook=name, cell=m.grade_id) for m in mark.marks for f in m.flags]
        flags += [Flag(f, notebook=name) for f in mark.flags]
        # a forbidden function that ran is a flag only where it costs an exercise (above)
        flags += [replace(f, notebook=name) for f in box_flags if f.kind != FORBIDDEN]
    except Exception as error:  # a notebook that breaks the marker: 0 and the reason
        reason = f"could not be marked ({type(error).__name__}: {str(error)[:200]}): it scores 0"
        mark, flags = marks.unmarkable(key, reason), [Flag(reason, notebook=name)]
    return mark, flags


def main() -> None:
    """Grade the jobs that come on standard input, one JSON line each, answering each on
    standard output; whatever else prints goes to standard error (the run's log)."""
    from kvlesson.grading.course.isolated import die_with_parent

    die_with_parent()
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # a print of nbgrader's or a library's lands in the log, not in an answer
    for line in sys.stdin:
        answers.write(result_to_json(grade_one(Job(**json.loads(line)))) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
