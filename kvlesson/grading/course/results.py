"""What grading gives, as types, and their one serialised form.

A submission crosses three process boundaries on its way from the box to the class report:
the box writes its flags into the graded notebook's metadata, the worker answers the grading
command with one JSON line, and the command leaves a marker beside each graded submission,
which the report reads back. Each crossing uses the types below and the functions at the end
of this module, so a flag has one shape from the box to the report:

* `Flag`: one thing the instructor should see: its kind, the reason in words, and where
  (the notebook, the cell's grade id or position, the student);
* `ExerciseMark`: one hidden test's mark: points, score, flags, and its outcome (passed,
  failed, skipped, zeroed, not graded) with the known mistake a wrong answer matched;
* `NotebookResult` and `SubmissionResult`: what one worker gives for one submission;
* `Graded`, `Answer` and `ClassResults`: a graded class as the course holds it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kvlesson.grading.course.text import printable, words

# An exercise's outcome: passed; failed (a wrong answer, with its known mistake if one
# matched); skipped (no code of the student's in the answer cell); zeroed (the values were
# right, a flag cost the points); not graded (the submission could not be graded).
PASSED, FAILED, SKIPPED, ZEROED, NOT_GRADED = (
    "passed",
    "failed",
    "skipped",
    "zeroed",
    "not graded",
)
OUTCOMES = (PASSED, FAILED, SKIPPED, ZEROED, NOT_GRADED)

# The kinds of flag. The box's: a cell that killed its kernel, a cell that could not be
# interrupted (both cost that cell only), tampering (costs the notebook; the reading of the
# student's cells finds it too), a forbidden function that ran from a student's code (costs
# the exercises that forbid it). The reading of cells also asks the instructor to LOOK at a
# cell; every other flag (a mark's words, a file left out, the exchange's refusals, a
# submission that could not be graded) is a NOTE.
KILLED, STUCK, TAMPERING, FORBIDDEN = (
    "killed its kernel",
    "could not be interrupted",
    "tampering",
    "ran a forbidden function",
)
LOOK, NOTE = "look", "note"
KINDS = (KILLED, STUCK, TAMPERING, FORBIDDEN, LOOK, NOTE)


@dataclass(frozen=True)
class Flag:
    """One flag: its kind (one of KINDS), the reason in words, and where: the notebook ("" for
    the submission as a whole), the cell's grade id ("" for none), the cell's position in
    the graded notebook (the box's flags), the function that ran (FORBIDDEN) and the
    student (once the command knows whose it is)."""

    reason: str
    kind: str = NOTE
    notebook: str = ""
    cell: str = ""
    index: int | None = None
    function: str = ""
    student: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind of flag {self.kind!r}: one of {KINDS}")
        # a flag carries the student's text (a file's name, a cell's first line): on one line,
        # printable, storable in the gradebook (kvlesson.grading.course.text)
        object.__setattr__(self, "reason", words(self.reason))
        for name in ("notebook", "cell", "function", "student"):
            object.__setattr__(self, name, printable(getattr(self, name)))


@dataclass(frozen=True)
class ExerciseMark:
    """One hidden test's result: the points it is worth, the score, and the flags; its
    outcome (one of OUTCOMES) and, for a wrong answer, the known mistake it is and the
    words of that mistake's hint ("" when none)."""

    grade_id: str
    points: float
    score: float
    flags: tuple[str, ...]
    outcome: str = ""
    mistake: str = ""
    words: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "flags", tuple(words(flag) for flag in self.flags))


@dataclass
class NotebookResult:
    """One graded notebook of a submission: its exercises' marks, whether it tampered (then
    every mark is 0), and nbgrader's own grades and comments of its cells (the grading
    command sets the late penalty when it writes them)."""

    marks: list[ExerciseMark] = field(default_factory=list)
    tampered: bool = False
    grades: dict = field(default_factory=dict)
    comments: dict = field(default_factory=dict)


@dataclass
class SubmissionResult:
    """What one worker gives the grading command for one submission: each notebook's
    result, every flag, or a failure and its reason; where the graded notebooks are, and
    what nbgrader logged."""

    assignment: str
    student: str
    timestamp: str | None
    graded: bool
    notebooks: dict[str, NotebookResult] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)
    failure: str = ""
    autograded: str = ""  # the private folder of the graded notebooks
    log: str = ""  # what nbgrader logged, for the run's log file

    def __post_init__(self) -> None:
        self.failure = words(self.failure)


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


@dataclass(frozen=True)
class ClassResults:
    """An assignment across the class: every submitted notebook's score and flags, and every
    student's answer to every exercise."""

    assignment: str
    notebooks: tuple[Graded, ...]
    answers: tuple[Answer, ...]


# --- the serialised form -----------------------------------------------------------------


def flag_from(data: dict | list) -> Flag:
    """A flag from its serialised form (a marker written before flags had a kind holds a
    [notebook, cell, reason] list)."""
    if isinstance(data, list):
        notebook, cell, reason = data
        return Flag(str(reason), notebook=notebook or "", cell=cell or "")
    return Flag(**data)


def mark_from(data: dict) -> ExerciseMark:
    return ExerciseMark(**{**data, "flags": tuple(data.get("flags", ()))})


def notebook_from(data: dict) -> NotebookResult:
    return NotebookResult(**{**data, "marks": [mark_from(m) for m in data.get("marks", [])]})


def result_to_json(result: SubmissionResult) -> str:
    """One line of JSON: how a worker answers the grading command."""
    return json.dumps(asdict(result))


def result_from_json(line: str | bytes) -> SubmissionResult:
    data = json.loads(line)
    return SubmissionResult(
        **{
            **data,
            "flags": [flag_from(f) for f in data["flags"]],
            "notebooks": {name: notebook_from(nb) for name, nb in data["notebooks"].items()},
        }
    )


@dataclass(frozen=True)
class Marker:
    """What the grading command stores beside a graded submission (`MARKER` in its folder):
    the submission's time, whether it was graded, why not, its flags, and each notebook's
    marks."""

    timestamp: str | None
    graded: bool
    failure: str
    flags: tuple[Flag, ...]
    marks: dict[str, tuple[ExerciseMark, ...]]

    @classmethod
    def of(cls, result: SubmissionResult) -> "Marker":
        return cls(
            result.timestamp,
            result.graded,
            result.failure,
            tuple(result.flags),
            {name: tuple(nb.marks) for name, nb in result.notebooks.items()},
        )

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, path: Path) -> "Marker | None":
        """The marker in `path`; None when there is none, it is not a plain file, or it is
        not a marker."""
        if not path.is_file() or path.is_symlink():
            return None
        try:
            data = json.loads(path.read_text())
            return cls(
                data.get("timestamp"),
                bool(data.get("graded")),
                data.get("failure", ""),
                tuple(flag_from(f) for f in data.get("flags", [])),
                {
                    name: tuple(mark_from(m) for m in marks)
                    for name, marks in data.get("marks", {}).items()
                },
            )
        except (ValueError, TypeError, AttributeError):
            return None
