"""Which known mistake a wrong answer is: named by value, on the inputs the grade used.

The build runs every known mistake of an answer cell (`kvlesson.grading.mistakes`) and
notes what each gives on the hidden test's own inputs (`kvlesson.grading.selfcheck`
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

from kvlesson.grading import cell_scan, probes
from kvlesson.grading.mistakes import MISTAKES

PASSED, FAILED, SKIPPED, ZEROED, NOT_GRADED = "passed", "failed", "skipped", "zeroed", \
    "not graded"
WHOLE_NUMBERS = ("count", "count_or_none")  # the probe kinds that ask for an int
FLOAT_MISTAKES = ("float", "true_div")  # the mistakes whose hints say the answer is a float
# what nbgrader's code stub raises in place of a solution (nbgrader_config.py,
# ClearSolutions.code_stub)
PLACEHOLDER_ERROR = "NotImplementedError"


@dataclass(frozen=True)
class Diagnosis:
    """A wrong answer's known mistake: its code in `kvlesson.grading.mistakes` and the words
    its self-check hint says; `mistake` is "" when no known mistake gives this answer."""

    mistake: str = ""
    words: str = ""


def key_mistakes(wrong: list[dict], index: int, right: list[dict],
                 hints: dict[str, str]) -> list[dict]:
    """For the key: the answers each known mistake gives on the hidden test at `index` of
    its cell's probe calls (`right`: that test's probes, with their right normal forms),
    with the words of its self-check hint (`hints`: the cell's own words for a mistake,
    else the mistake's). An answer is named only when the mistakes that give it are one
    (`one_mistake`): two different mistakes with one answer are a coincidence, not a
    diagnosis. Kept: a
    mistake whose words describe what it gives on some input (`_described`)."""
    right_answers = tuple(probe["normal"] for probe in right)
    found: dict[tuple, list[dict]] = {}
    for row in wrong:
        cells = row.get("answers") or []
        answers = cells[index] if index < len(cells) else []
        if len(answers) != len(right) or tuple(answers) == right_answers or not any(
                _described(row["mistake"], probe, answer)
                for probe, answer in zip(right, answers)):
            continue
        found.setdefault(tuple(answers), []).append(
            {"mistake": row["mistake"], "words": hints.get(row["mistake"], row["hint"]),
             "answers": answers, "same": row.get("same", "")})
    return [{k: same[0][k] for k in ("mistake", "words", "answers")}
            for same in found.values() if one_mistake(same)]


def one_mistake(rows: list[dict]) -> bool:
    """Whether known mistakes that give one answer are one mistake, which a hint may name:
    they say the same words, or they are one wrong function (the same non-empty "same",
    what each gives on every input the build tried), in which case the first, in the
    order of MISTAKES, names them."""
    return len({row["words"] for row in rows}) == 1 or (
        len({row.get("same", "") for row in rows}) == 1 and bool(rows[0].get("same")))


def _described(mistake: str, probe: dict, answer: str) -> bool:
    """Whether a known mistake's `answer` on one input is one its words describe: a wrong
    answer of the kind asked for (what a self-check gives this mistake's hint for), or a
    float where a whole number is asked, for the mistakes whose words say so. Not: an
    error, or another kind of answer (a float for yes or no)."""
    if answer == probe["normal"]:
        return False
    if answer.startswith("kind:"):
        return (answer == "kind:float" and mistake in FLOAT_MISTAKES
                and probe["kind"] in WHOLE_NUMBERS)
    return not answer.startswith("error:")


def answers_of(exercise: dict, values: list) -> list[str]:
    """A record's values as answer texts, probe by probe of the key's `exercise`."""
    return [probes.answer_text(probes.from_key(probe), value)
            for probe, value in zip(exercise["probes"], values)]


def diagnose(exercise: dict, answers: list[str]) -> Diagnosis:
    """The known mistake that gives the student's `answers` (`answers_of` their recorded
    values) on every input of the hidden test; Diagnosis() when none does."""
    for known in exercise.get("mistakes", []):
        if known["answers"] == answers and known["mistake"] in MISTAKES:
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
    try:
        tree = ast.parse(cell_scan.python_of(source))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(getattr(node, "body", None), list):
            node.body = [s for s in node.body if not _placeholder(s) and not _docstring(s)]
    return ast.dump(tree)


def _placeholder(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Raise) and PLACEHOLDER_ERROR in ast.unparse(statement)


def _docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


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
    what to look at instead). It never gives the answer."""
    if mistake:
        return (f"{grade_id}: not right; your answer is the one a known mistake gives: "
                f"{words}")
    return (f"{grade_id}: not right, and your answer matches none of the known mistakes "
            f"this exercise checks for: {words or 'check the units and the rounding the question asks for'}")


YES_NO_WORDS = ("a yes or no is the other way round: work the case through again from what "
                "decides it")  # what no known mistake can name: any wrong yes is every mistake's


def unmatched_words(exercise: dict) -> str:
    """What the feedback says of a wrong answer no known mistake gives: for an exercise of
    yes-or-no probes only, that one is the other way round; else "" (units and rounding)."""
    kinds = {probe["kind"] for probe in exercise["probes"]}
    return YES_NO_WORDS if kinds == {"yes_no"} else ""
