"""One submission, one sealed run: what a grading worker does for each student.

    python -I -m kvlesson.grading.grade_worker      (started by the grading command)

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
import sqlite3
import sys
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from kvlesson.grading import (cell_roles, cell_scan, course_config, marking, safe_exchange,
                              seal)
from kvlesson.grading.box.flags import FORBIDDEN, read_flags
from kvlesson.grading.box.ledger import cell_source_hash

MARKER = ".kvlesson-graded.json"  # in a graded submission's folder: when and how it was graded
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


@dataclass
class Result:
    """What one job gives the writer: each notebook's marks, nbgrader's grades and comments,
    every flag (notebook, cell, reason), or a failure and its reason."""

    assignment: str
    student: str
    timestamp: str | None
    graded: bool
    notebooks: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)
    failure: str = ""
    autograded: str = ""  # the private folder of the graded notebooks
    log: str = ""  # what nbgrader logged, for the run's log file


@functools.lru_cache(maxsize=16)
def ledger_spec(root: Path, assignment: str, forbidden: tuple[str, ...]) -> str:
    """The box's ledger for this assignment: every forbidden function of its exercises; the
    hashes of the course's own code cells (answer cells excepted: they are the student's),
    whose calls are not a student's; and of its test cells, which run the student's code and
    so are watched (each as IPython hands it to the kernel, and as it runs)."""
    course, tests = [], []
    for notebook in sorted((root / _source_dir(root) / assignment).glob("*.ipynb")):
        for cell in nbformat.read(notebook, as_version=4).cells:
            meta = cell_roles.meta(cell)
            if cell.cell_type != "code" or meta.get("solution"):
                continue
            hashes = [cell_source_hash(cell.source),
                      cell_source_hash(cell_scan.python_of(cell.source))]
            course += hashes
            if meta.get("grade"):
                tests += hashes
    return json.dumps({"forbidden": list(forbidden), "course": course, "tests": tests})


@functools.lru_cache(maxsize=16)
def _source_dir(root: Path) -> str:
    config = course_config.load(root)
    return config.CourseDirectory.get("source_directory", "source")


@functools.lru_cache(maxsize=16)
def instructor(root: Path, assignment: str, name: str) -> tuple:
    """The instructor's notebook and its cells' roles: read once per worker, for a class."""
    nb = nbformat.read(root / _source_dir(root) / assignment / f"{name}.ipynb", as_version=4)
    return nb, cell_roles.CourseCells.of(nb)


# nbgrader's errors, and what they mean to a student
WORDS = [
    (r"exists multiple times", "two cells of the notebook carry the same answer id: a cell was "
     "copied (copy and paste). Delete the copy, keep the cell with your answer, save and "
     "submit again"),
    (r"newer version|SchemaTooNew|schema_version", "the notebook's grading information (the "
     "nbgrader metadata of a cell) was changed. Fetch a fresh copy of the assignment and paste "
     "your answers into it"),
    (r"old version of the nbgrader metadata|SchemaTooOld", "the grading information of a cell "
     "is missing or was changed (a cell copied from elsewhere, or the metadata edited). Fetch a "
     "fresh copy of the assignment and paste your answers into it"),
    (r"NotJSONError|Notebook does not appear to be JSON|Unterminated string|Expecting value",
     "the notebook file is not a notebook (its JSON cannot be read). Submit the .ipynb file "
     "JupyterLab saves"),
]


def in_words(log: str) -> str:
    """An nbgrader failure in words a student understands, with nbgrader's own first error
    (or its last word)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line[len("[ERROR] "):] for line in lines if line.startswith("[ERROR]")]
    last = errors[0] if errors else (lines[-1] if lines else "")
    for pattern, words in WORDS:
        if re.search(pattern, log):
            return f"not graded: {words} (nbgrader: {last[:200]})"
    return f"not graded: nbgrader could not grade this notebook (nbgrader: {last[:200]})"


def grade(job: Job) -> Result:
    """Seal, autograde and mark one submission; never raises."""
    try:
        return _grade(job)
    except Exception:  # the grader's own failure: this submission only
        return Result(job.assignment, job.student, None, False,
                      failure="not graded: the grader failed on this submission: "
                              + traceback.format_exc(limit=3).strip().splitlines()[-1])


def _grade(job: Job) -> Result:
    root, private = Path(job.root), Path(job.private)
    config = course_config.load(root)
    submitted = Path(config.CourseDirectory.get("submitted_directory", "submitted"))
    source = root / submitted / job.student / job.assignment
    timestamp = _timestamp(source)
    flags = [("", "", note) for note in safe_exchange.read_refusals(source)]
    refused = seal.seal(source, private / "submitted" / job.student / job.assignment,
                        ignore=(".ipynb_checkpoints", safe_exchange.REFUSALS, MARKER))
    flags += [("", "", f"left out: {r}") for r in refused]
    shutil.copy(job.template, private / "gradebook.db")
    source_dir = config.CourseDirectory.get("source_directory", "source")
    seal.seal(root / source_dir / job.assignment, private / source_dir / job.assignment,
              ignore=("*.ipynb", ".ipynb_checkpoints"))
    key = marking.read_key(marking.key_path(root, job.assignment))
    sealed = private / "submitted" / job.student / job.assignment
    if not any(sealed.glob("*.ipynb")):  # nothing to run: every notebook scores 0
        flags.append(("", "", "no notebook was submitted: every exercise scores 0"))
        return Result(job.assignment, job.student, timestamp, True, flags=flags)
    forbidden = tuple(sorted({n for ex in key["exercises"].values() for n in ex["forbidden"]}))
    (private / "ledger.json").write_text(ledger_spec(root, job.assignment, forbidden))
    succeeded, log = _autograde(job, config, private)
    out = private / "autograded" / job.student / job.assignment
    notebooks = sorted(out.glob("*.ipynb")) if out.is_dir() else []
    if not succeeded:
        return Result(job.assignment, job.student, timestamp, False, flags=flags, failure=in_words(log), log=log)
    for path in notebooks:
        tests = {cell_roles.meta(c).get("grade_id") for c in nbformat.read(path, 4).cells}
        if not tests & set(key["exercises"]):
            return Result(job.assignment, job.student, timestamp, False, flags=flags, failure=(
                f"not graded: {path.name} has none of its graded cells (the nbgrader metadata "
                "of its cells was removed, or the notebook was made anew). Fetch a fresh copy "
                "of the assignment and paste your answers into it"))
    result = Result(job.assignment, job.student, timestamp, True, flags=flags, autograded=str(out), log=log)
    grades = _grades(private / "gradebook.db", job.assignment, job.student)
    for path in notebooks:
        name = path.stem
        result.notebooks[name] = {**grades.get(name, {}), **_marked(root, job.assignment, path, key)}
        result.flags += [(name, cell, reason) for cell, reason in result.notebooks[name]["flags"]]
    return result


def _timestamp(folder: Path) -> str | None:
    path = folder / "timestamp.txt"
    try:
        return path.read_text().strip()[:64] if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _autograde(job: Job, config, private: Path) -> tuple[bool, str]:
    """nbgrader's autograde of one student in the private course folder: whether it
    succeeded, and its log (the end of it, if long)."""
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    config.CourseDirectory.root = str(private)
    config.CourseDirectory.db_url = f"sqlite:///{private / 'gradebook.db'}"
    config.BoxedExecute.ledger = str(private / "ledger.json")
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


def _grades(db: Path, assignment: str, student: str) -> dict[str, dict]:
    """nbgrader's grades, comments and late penalty for each notebook of the submission."""
    from nbgrader.api import Gradebook, MissingEntry

    out: dict[str, dict] = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return out
        for notebook in submission.notebooks:
            out[notebook.name] = {
                "grades": {g.name: {"auto_score": g.auto_score,
                                    "needs_manual_grade": g.needs_manual_grade}
                           for g in notebook.grades},
                "comments": {c.name: c.auto_comment for c in notebook.comments},
                "late_penalty": notebook.late_submission_penalty,
            }
    return out


def _marked(root: Path, assignment: str, path: Path, key: dict) -> dict:
    """One graded notebook marked outside the kernel, inside its own error handler."""
    try:
        nb = nbformat.read(path, as_version=4)
        _, box_flags = read_flags(nb)
        source, course = instructor(root, assignment, path.stem)
        mark = marking.mark_notebook(nb, key, source, box_flags, course)
        flags = [(m.grade_id, f) for m in mark.marks for f in m.flags]
        flags += [("", f) for f in mark.flags]
        # a forbidden function that ran is a flag only where it costs an exercise (above)
        flags += [(f.grade_id or "", f.reason) for f in box_flags if f.kind != FORBIDDEN]
    except Exception as error:  # a notebook that breaks the marker: 0 and the reason
        reason = f"could not be marked ({type(error).__name__}: {str(error)[:200]}): it scores 0"
        mark, flags = marking.unmarkable(key, reason), [("", reason)]
    return {"marks": [asdict(m) for m in mark.marks], "tampered": mark.tampered,
            "flags": flags}


def snapshot(gradebook: Path, copy: Path) -> None:
    """A consistent copy of the gradebook (SQLite's own backup, safe while it is in use)."""
    with sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True) as src, \
            sqlite3.connect(copy) as dst:
        src.backup(dst)


def main() -> None:
    """Grade the jobs that come on standard input, one JSON line each, answering each on
    standard output; whatever else prints goes to standard error (the run's log)."""
    from kvlesson.grading.box.launch import die_with_parent

    die_with_parent()
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # a print of nbgrader's or a library's lands in the log, not in an answer
    for line in sys.stdin:
        result = grade(Job(**json.loads(line)))
        answers.write(json.dumps(asdict(result)) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
