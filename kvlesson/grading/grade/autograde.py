"""nbgrader's autograde of one submission, its steps called directly.

`nbgrader autograde` is an application around two passes of preprocessors: it opens the
gradebook about six times, sanitizes each notebook (outputs cleared, ids deduplicated, the
kernelspec and the locked cells put back as the release had them, the metadata checked),
runs it (`kvlesson.grading.box.execute.BoxedExecute`, in the box), and writes the grades
and the late penalty into the gradebook, which the grading command then writes over with
kvlesson's marks. Here a worker calls the same preprocessors, as nbgrader_config.py lists
them, on each notebook in turn, minus the two that write the gradebook (`SaveAutoGrades`,
`AssignLatePenalties`): the grading command writes each grade row once
(`kvlesson.grading.grade.store`), with nbgrader's own reading of the cells outside the key
(`nbgrader_grades`). The gradebook is only read, from the copy the grading run made.
A notebook nbgrader cannot grade fails as nbgrader fails, with its words in the log, and
`in_words` says why to the student. tests/grading/grade/test_autograde.py runs real
`nbgrader autograde` beside this, so that a change upstream is caught.
"""

from __future__ import annotations

import io
import logging
import re
import traceback
from pathlib import Path

import nbformat
from nbgrader import utils
from nbgrader.converters import Autograde
from nbgrader.nbgraderformat import SchemaTooNewError, SchemaTooOldError
from nbgrader.preprocessors import AssignLatePenalties, SaveAutoGrades
from traitlets.utils.importstring import import_item

from kvlesson.grading.box.execute import BoxedExecute
from kvlesson.grading.box.launch import Zygotes
from kvlesson.grading.course.results import NotebookResult

WRITERS = (SaveAutoGrades, AssignLatePenalties)  # the command writes the gradebook
# nbgrader's own words for a notebook whose metadata is older or newer than it reads
OLD_SCHEMA = (
    "One or more notebooks in the assignment use an old version \nof the nbgrader metadata "
    "format. Please **back up your class files \ndirectory** and then update the metadata "
    "using:\n\nnbgrader update .\n"
)
NEW_SCHEMA = (
    "One or more notebooks in the assignment use an newer version \nof the nbgrader "
    "metadata format. Please update your version of \nnbgrader to the latest version to be "
    "able to use this notebook.\n"
)
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
        r"old version\s+of the nbgrader metadata|SchemaTooOld",
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


class NotGraded(Exception):
    """A notebook nbgrader cannot grade: why, in a student's words, and nbgrader's log."""

    def __init__(self, failure: str, log: str = ""):
        super().__init__(failure)
        self.failure, self.log = failure, log


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


def steps(config, kind: str, log: logging.Logger) -> list:
    """The preprocessors of autograde's `kind` pass ("sanitize" or "autograde") as the
    configuration lists them, made with it, those that write the gradebook left out."""
    default = Autograde.class_traits()[f"{kind}_preprocessors"].default()
    listed = config.Autograde.get(f"{kind}_preprocessors", default)
    classes = [import_item(item) if isinstance(item, str) else item for item in listed]
    return [c(config=config, log=log) for c in classes if not issubclass(c, WRITERS)]


def autograde(
    source: Path, resources: dict, config, zygotes: Zygotes | None, log: logging.Logger
) -> tuple[nbformat.NotebookNode, str]:
    """The notebook at `source` sanitized and run in the box, as autograde leaves it, and
    what its steps logged; `resources`: nbgrader's (assignment, notebook, student, the
    gradebook to read) and the working copy's folder. NotGraded, with nbgrader's words and
    log, if nbgrader cannot grade it."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    log.addHandler(handler)
    try:
        nb = nbformat.read(source, as_version=4)
        for kind in ("sanitize", "autograde"):
            for step in steps(config, kind, log):
                if isinstance(step, BoxedExecute):
                    step.zygotes = zygotes
                nb, resources = step(nb, resources)
        return nb, buffer.getvalue()
    except SchemaTooOldError:
        log.error(OLD_SCHEMA)
    except SchemaTooNewError:
        log.error(NEW_SCHEMA)
    except Exception:
        log.error("There was an error processing assignment: %s", source.parent)
        log.error(traceback.format_exc())
    finally:
        log.removeHandler(handler)
    raise NotGraded(in_words(buffer.getvalue()), buffer.getvalue())


def nbgrader_grades(nb: nbformat.NotebookNode) -> NotebookResult:
    """What nbgrader's SaveAutoGrades would write for a graded notebook: each graded cell's
    automatic score (None where a person must grade it: a written answer), and each answer
    cell's comment ("No response." for one left as released)."""
    grades, comments = {}, {}
    for cell in nb.cells:
        if utils.is_grade(cell):
            score, _ = utils.determine_grade(cell)
            grades[cell.metadata.nbgrader["grade_id"]] = {
                "auto_score": score,
                "needs_manual_grade": score is None,
            }
        if utils.is_solution(cell) or utils.is_task(cell):
            unchanged = cell.metadata.nbgrader.get("checksum") == utils.compute_checksum(cell)
            comments[cell.metadata.nbgrader["grade_id"]] = (
                "No response." if unchanged and not utils.is_task(cell) else None
            )
    return NotebookResult(grades=grades, comments=comments)
