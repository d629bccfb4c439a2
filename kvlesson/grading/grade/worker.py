"""One submission's path through a grading worker: seal, box, marks, second run, result.

    python -I -m kvlesson.grading.grade.worker      (started by the grading command)

A worker reads jobs, one JSON line each, from its standard input and answers each with one
JSON line. For a job it

1. seals the submission (plain files only, its notebooks alone: `kvlesson.grading.course.
   seal`, `contract`) into a fresh private folder outside the course root;
2. autogrades each notebook in the box (`kvlesson.grading.grade.autograde`: nbgrader's
   sanitizing steps, then the run in the box), each kernel forked from the worker's zygote
   (`kvlesson.grading.box.launch`) with the assignment's ledger (`kvlesson.grading.box.
   ledger`: the exercises' forbidden functions watched);
3. marks each graded notebook against the key outside the kernel, inside its own error
   handler (`kvlesson.grading.marking.marks`);
4. works each right answer of an exercise that forbids functions out again without them
   (`kvlesson.grading.grade.second_run`, decided by `kvlesson.grading.marking.second_run`);
5. answers with one `SubmissionResult` (`kvlesson.grading.course.results`).

An nbgrader error, a notebook that cannot be marked, anything at all, costs that submission
only: it comes back as a failure with the reason in words. The worker never writes the
course's gradebook (it reads the copy the run made): the grading command, the one writer,
does. Its zygotes live as long as it does, one kernel forked per notebook run.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import sys
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat

from kvlesson.grading.box import fonts, ledger
from kvlesson.grading.box.flags import read_flags
from kvlesson.grading.box.launch import Zygotes
from kvlesson.grading.course import contract, folders, seal
from kvlesson.grading.course.folders import MARKER, Course, read_timestamp
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.course.notebooks import grade_id_of
from kvlesson.grading.course.results import FORBIDDEN, Flag, SubmissionResult, result_to_json
from kvlesson.grading.grade.autograde import NotGraded, autograde, nbgrader_grades
from kvlesson.grading.grade.pool import Job
from kvlesson.grading.grade.second_run import SecondRun
from kvlesson.grading.marking import cell_roles, marks

LOG_LIMIT = 50_000  # characters of nbgrader's log kept per submission
LOG = logging.getLogger(__name__)  # nbgrader's steps log here, per submission


@dataclass
class Sealed:
    """A submission sealed: its folder, its time, and what the seal left out."""

    folder: Path
    timestamp: str | None
    flags: list[Flag] = field(default_factory=list)


@functools.lru_cache(maxsize=16)
def _course(root: Path) -> Course:
    return Course(root, folders.load(root))


@functools.lru_cache(maxsize=16)
def notebook_names(root: Path, assignment: str) -> tuple[str, ...]:
    """The file names of the assignment's notebooks, as the release gives them."""
    return tuple(sorted(p.name for p in (_course(root).source / assignment).glob("*.ipynb")))


@functools.lru_cache(maxsize=16)
def instructor(root: Path, assignment: str, name: str) -> tuple:
    """The instructor's notebook and its cells' roles: read once per worker, for a class."""
    nb = nbformat.read(_course(root).source / assignment / f"{name}.ipynb", as_version=4)
    return nb, cell_roles.CourseCells.of(nb)


@functools.lru_cache(maxsize=16)
def assignment_ledger(root: Path, assignment: str, forbidden: tuple[str, ...]) -> dict:
    """The box's ledger of the assignment (`kvlesson.grading.box.ledger.spec`)."""
    names = [Path(name).stem for name in notebook_names(root, assignment)]
    return ledger.spec([instructor(root, assignment, name)[0] for name in names], forbidden)


def shared_folder(job: Job) -> Path:
    """The folder the run's workers share (the job's own folder when none is given)."""
    return Path(job.shared) if job.shared else Path(job.private) / "shared"


def grade_one(job: Job, zygotes: Zygotes | None = None) -> SubmissionResult:
    """Seal, autograde, mark and check one submission; never raises."""
    try:
        return _grade(job, zygotes)
    except Exception:  # the grader's own failure: this submission only
        return SubmissionResult(
            job.assignment,
            job.student,
            None,
            False,
            failure="not graded: the grader failed on this submission: "
            + traceback.format_exc(limit=3).strip().splitlines()[-1],
        )


def _grade(job: Job, zygotes: Zygotes | None) -> SubmissionResult:
    root, course = Path(job.root), _course(Path(job.root))
    sealed = seal_submission(course, job)
    key = read_key(key_path(root, job.assignment))
    result = SubmissionResult(
        job.assignment, job.student, sealed.timestamp, True, flags=sealed.flags
    )
    if not any(sealed.folder.glob("*.ipynb")):  # nothing to run: every notebook scores 0
        result.flags.append(Flag("no notebook was submitted: every exercise scores 0"))
        return result
    config = box_settings(course, job, key)
    out = Path(job.private) / "autograded"
    try:
        graded, log = autograde_all(job, course, sealed.folder, out, key, config, zygotes)
    except NotGraded as error:
        return replace(result, graded=False, failure=error.failure, log=error.log[-LOG_LIMIT:])
    result.autograded = str(out)
    again = SecondRun(
        config, shared_folder(job), sealed.folder, zygotes, config.BoxedExecute.ledger
    )
    for name, nb in graded.items():
        mark, found = marked(root, job.assignment, name, nb, key, again)
        result.notebooks[name] = replace(
            nbgrader_grades(nb), marks=mark.marks, tampered=mark.tampered
        )
        result.flags += found
    result.log = "\n".join([log, *again.log])[-LOG_LIMIT:]
    return result


def seal_submission(course: Course, job: Job) -> Sealed:
    """The submission sealed into the job's private folder, its notebooks alone, with
    collect's notes and what the seal left out as flags."""
    source = course.submitted / job.student / job.assignment
    flags = [Flag(note) for note in seal.read_refusals(source)]
    folder = Path(job.private) / "submitted"
    refused = seal.seal(source, folder, ignore=(".ipynb_checkpoints", seal.REFUSALS, MARKER))
    refused += contract.keep_notebooks(folder, notebook_names(course.root, job.assignment))
    flags += [Flag(f"left out: {r}") for r in refused]
    return Sealed(folder, read_timestamp(source), flags)


def box_settings(course: Course, job: Job, key: dict):
    """Autograde's configuration for this job: the course's, with the box's ledger of the
    assignment, the run's font list, and the run's folder hidden."""
    config = copy.deepcopy(course.config)
    forbidden = tuple(sorted({n for ex in key["exercises"].values() for n in ex["forbidden"]}))
    config.CourseDirectory.root = job.root
    config.BoxedExecute.ledger = assignment_ledger(course.root, job.assignment, forbidden)
    config.BoxedExecute.font_cache = fonts.font_cache(shared_folder(job))
    config.BoxedExecute.hide = list(job.hide)
    return config


def autograde_all(
    job: Job,
    course: Course,
    sealed: Path,
    out: Path,
    key: dict,
    config,
    zygotes: Zygotes | None,
) -> tuple[dict[str, nbformat.NotebookNode], str]:
    """Each sealed notebook autograded in the box and written into `out`, beside the files
    nbgrader's autograde puts there (the assignment's own files, the submission's time),
    and what autograde logged; NotGraded for the first one nbgrader cannot grade, or one
    with none of its graded cells."""
    seal.seal(course.source / job.assignment, out, ignore=("*.ipynb", ".ipynb_checkpoints"))
    for name in contract.NBGRADER_FILES:
        if (sealed / name).is_file() and not (out / name).exists():
            (out / name).write_bytes((sealed / name).read_bytes())
    graded, logs = {}, []
    for path in sorted(sealed.glob("*.ipynb")):
        resources = {
            "unique_key": path.stem,
            "metadata": {"path": str(sealed), "name": path.stem},
            "nbgrader": {
                "student": job.student,
                "assignment": job.assignment,
                "notebook": path.stem,
                "db_url": f"sqlite:///{job.template}",
            },
        }
        nb, log = autograde(path, resources, config, zygotes, LOG)
        if not {grade_id_of(c) for c in nb.cells} & set(key["exercises"]):
            raise NotGraded(
                f"not graded: {path.name} has none of its graded cells (the nbgrader metadata "
                "of its cells was removed, or the notebook was made anew). Fetch a fresh copy "
                "of the assignment and paste your answers into it"
            )
        nbformat.write(nb, out / path.name)
        graded[path.stem] = nb
        logs.append(log)
    return graded, "".join(logs)


def marked(
    root: Path, assignment: str, name: str, nb, key: dict, again: SecondRun
) -> tuple[marks.NotebookMark, list[Flag]]:
    """One graded notebook marked outside the kernel, its right answers checked by the
    second run, inside its own error handler: its marks, and its flags (each exercise's,
    the notebook's, and what the box saw)."""
    try:
        _, box_flags = read_flags(nb)
        source, course = instructor(root, assignment, name)
        mark = marks.mark_notebook(nb, key, source, box_flags, course)
        mark = again.check(nb, key, mark, course, f"{name}.ipynb")
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
    standard output; whatever else prints goes to standard error (the run's log). The
    worker's zygotes are ended when the input ends."""
    from kvlesson.grading.course.isolated import die_with_parent, leave

    die_with_parent()
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # a print of nbgrader's or a library's lands in the log, not in an answer
    zygotes = Zygotes(Path.cwd() / f"zygotes-{os.getpid()}")
    try:
        for line in sys.stdin:
            answers.write(result_to_json(grade_one(Job(**json.loads(line)), zygotes)) + "\n")
            answers.flush()
    finally:
        zygotes.close()
    leave()  # every answer given (each written out as it came)


if __name__ == "__main__":
    main()
