"""Which known mistake a wrong answer is: named by value, on the inputs the grade used.

The build runs every known mistake of an answer cell (`kvlesson.authoring.mutants`) and
notes what each gives on the hidden test's own inputs (`kvlesson.grading.checks.selfcheck`
`wrong_values`); the key keeps those answers with the words of the mistake's self-check
hint. The marker holds a student's wrong answer against them: the same answer on every
input is that mistake, in the self-check's words; any other is a wrong answer no known
mistake explains. Each exercise of a submission then has an outcome: passed, failed
(with its mistake, if one matched), skipped (no code of the student's in the answer
cell: as released, or emptied), zeroed (the values were right, a flag cost the points)
or not graded.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kvlesson.grading.checks import messages, probes
from kvlesson.grading.course.known_mistakes import is_known
from kvlesson.grading.course.notebooks import parsed
from kvlesson.grading.course.results import FAILED, PASSED, SKIPPED, ZEROED

# what nbgrader's code stub raises in place of a solution (nbgrader_config.py,
# ClearSolutions.code_stub)
PLACEHOLDER_ERROR = "NotImplementedError"
RAISES = "raises"  # the key's answer where a known mistake raises (build/key_mistakes.py)


@dataclass(frozen=True)
class Diagnosis:
    """A wrong answer's known mistake: its code in `kvlesson.authoring.mutants` and the words
    its self-check hint says; `mistake` is "" when no known mistake gives this answer."""

    mistake: str = ""
    words: str = ""


def answers_of(exercise: dict, values: list) -> list[str]:
    """A record's values as answer texts, probe by probe of the key's `exercise`."""
    return [
        probes.answer_text(probes.from_key(probe), value)
        for probe, value in zip(exercise["probes"], values)
    ]


def diagnose(exercise: dict, answers: list[str]) -> Diagnosis:
    """The known mistake that gives the student's `answers` (`answers_of` their recorded
    values) on every input of the hidden test; Diagnosis() when none does."""
    mine = [RAISES if answer.startswith("error:") else answer for answer in answers]
    for known in exercise.get("mistakes", []):
        if known["answers"] == mine and is_known(known["mistake"]):
            return Diagnosis(known["mistake"], known["words"])
    return Diagnosis()


def unanswered(source: str, release: str = "") -> bool:
    """Whether an answer cell holds none of the student's code: as the `release` gave it,
    with or without its placeholder line (and docstrings, comments), or empty."""
    mine = _bare(source)
    return mine is not None and mine in (_bare(""), _bare(release))


def _bare(source: str) -> str | None:
    """A cell's code without the release's placeholder and docstrings, to compare; None
    if it is not Python."""
    tree = parsed(source)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(getattr(node, "body", None), list):
            node.body = [s for s in node.body if not _placeholder(s) and not _docstring(s)]
    return ast.dump(tree)


def _placeholder(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Raise) and PLACEHOLDER_ERROR in ast.unparse(statement)


def _docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def outcome(points: float, score: float, values_right: bool, skipped: bool) -> str:
    """An exercise's outcome from its final score, whether its values were right, and
    whether its answer cell was left as released."""
    if score >= points:
        return PASSED
    if skipped:
        return SKIPPED
    return ZEROED if values_right else FAILED


def feedback_line(grade_id: str, mistake: str, words: str) -> str:
    """What the feedback says under a failed exercise: the known mistake its answer
    matched, in the self-check's words, or that it matched none (`words`, when given, say
    what to re-read instead). It never gives the answer."""
    if mistake:
        return f"{grade_id}: not right; your answer is the one a known mistake gives: {words}"
    return (
        f"{grade_id}: not right, and your answer matches none of the known mistakes "
        f"this exercise checks for: {words or messages.PLAIN.lower()}"
    )


YES_NO_WORDS = "a yes or no is not right: work it out again from what decides it"


def unmatched_words(exercise: dict) -> str:
    """What the feedback says of a wrong answer no known mistake gives: the cell's own words
    (its self-check's `hints={"else": ...}`, or `{"yes_no": ...}` for an exercise of yes or
    no answers), else plainly to re-read the question (a guess at the mistake would mislead;
    never "the units and the rounding")."""
    kinds = [probe["kind"] for probe in exercise["probes"]]
    own = exercise.get("reread", {})
    if set(kinds) == {"yes_no"}:
        return own.get(messages.YES_NO) or YES_NO_WORDS
    return own.get(messages.ELSE) or messages.PLAIN.lower()
