"""The second run's decisions: which right answers it checks, which cells it runs, and which
answers changed without the functions their exercises forbid.

The box watches a submission's kernel, but the watch lives in the student's own process,
which can switch it off. So each right answer of an exercise that forbids functions is
worked out again where those functions do not exist (`kvlesson.grading.grade.second_run`
runs the notebook in a fresh box whose kvlesson lacks them), and the answers of the two
runs are compared, probe by probe, in the grade's own normal forms. An answer that changes
needed a function its exercise forbids: it scores 0, with both answers in the flag.

A run first runs only what the compared answers can depend on (`short_cells`): the
course's own cells that import or bind what those cells read, the student's cells that can
reach each answer (`kvlesson.grading.marking.answer_flow`) and the tests; charts are not
drawn. A cell left out can only take something away from an answer, so an answer that is
the same there is the same; where it differs, the whole notebook runs again, up to its last
test to compare, and that run decides, as it always did (`changed_answers`). One second
run withholds every forbidden function of the notebook's right answers at once; an answer
that changes there and whose exercise forbids fewer runs again without its own ones only
(an answer may use what another exercise forbids).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import nbformat

from kvlesson.grading.checks.records import records_of
from kvlesson.grading.course.notebooks import grade_id_of, imported_modules
from kvlesson.grading.course.results import PASSED, ZEROED
from kvlesson.grading.marking import answer_flow, cell_roles, diagnosis
from kvlesson.grading.marking.cell_roles import read_cells
from kvlesson.grading.marking.marks import NotebookMark

Answers = dict[str, list[str] | None]  # a run's answers: grade id -> normal forms (None: none)
# One run without `names` of the tests `grade_ids`, short (`short_cells`) or whole.
Run = Callable[[tuple[str, ...], list[str], bool], Answers]


@dataclass(frozen=True)
class Changed:
    """An answer that changed when worked out without `functions`: before and after."""

    functions: tuple[str, ...]
    before: list[str]
    after: list[str] | None  # None: the test gave no single record in the second run

    def words(self) -> str:
        """Why the answer scores 0, in words that name no right value: only what the
        answer gave without the functions (an error, or that it is another value)."""
        names = ", ".join(self.functions)
        errors = [a.removeprefix("error:") for a in self.after or () if a.startswith("error:")]
        gave = (
            "the test recorded no answer"
            if self.after is None
            else f"it raises {errors[0]}"
            if errors
            else "it gives other values"
        )
        return (
            f"scored 0: worked out again in a fresh box whose kvlesson lacks {names}, "
            f"its answer is not the same ({gave}): it needs a function this exercise "
            "asks you to do without"
        )


def to_compare(mark: NotebookMark, key: dict) -> dict[str, tuple[str, ...]]:
    """The exercises whose right answers the second run checks, with their forbidden
    functions: those that forbid some and scored points in the first run."""
    exercises = key["exercises"]
    return {
        m.grade_id: tuple(sorted(exercises[m.grade_id]["forbidden"]))
        for m in mark.marks
        if m.grade_id in exercises
        and m.outcome == PASSED
        and m.score > 0
        and exercises[m.grade_id]["forbidden"]
    }


def short_cells(
    nb: nbformat.NotebookNode, grade_ids: list[str], key: dict, course: cell_roles.CourseCells
) -> list[int]:
    """The cells a short run of the tests `grade_ids` runs, in order: each test, the
    student's cells that can reach its answer, and the course's own cells that import
    something or bind a name those cells (or another kept course cell) read."""
    cells = read_cells(nb, key, course)
    tests = [cells.tests[g] for g in grade_ids if g in cells.tests]
    kept = set(tests)
    for test in tests:
        kept |= cell_roles.answer_cells(nb, test, dict(cells.theirs), course.bound)
    reads = set().union(*(answer_flow.effects(nb.cells[i].source).reads for i in kept))
    for index in sorted(cells.own, reverse=True):
        if index > max(tests, default=-1):
            continue
        source = nb.cells[index].source
        flow = answer_flow.effects(source)
        if imported_modules(source) or flow.binds & reads:
            kept.add(index)
            reads |= flow.reads
    return sorted(kept)


def changed_answers(checks: dict[str, tuple[str, ...]], before: Answers, run: Run) -> dict:
    """The answers of `checks` (grade id: its forbidden functions) that are not `before`
    when worked out without their functions: a short run first, the whole notebook where
    it differs; `run` runs the box."""
    everything = tuple(sorted({name for names in checks.values() for name in names}))
    changed, later = {}, {}
    for grade_id, after in _checked(everything, list(checks), before, run).items():
        if after == before[grade_id]:
            continue
        if checks[grade_id] == everything:
            changed[grade_id] = Changed(everything, before[grade_id] or [], after)
        else:
            later.setdefault(checks[grade_id], []).append(grade_id)
    for names, grade_ids in sorted(later.items()):
        for grade_id, after in _checked(names, grade_ids, before, run).items():
            if after != before[grade_id]:
                changed[grade_id] = Changed(names, before[grade_id] or [], after)
    return changed


def _checked(names: tuple[str, ...], grade_ids: list[str], before: Answers, run: Run) -> Answers:
    """The answers of `grade_ids` without `names`: the short run's where it gives what the
    first run gave, else the whole run's."""
    short = run(names, grade_ids, True)
    differ = [g for g in grade_ids if short[g] != before[g]]
    return {**short, **(run(names, differ, False) if differ else {})}


def answers_of(nb: nbformat.NotebookNode, key: dict, grade_ids: list[str]) -> Answers:
    """What the tests `grade_ids` recorded in a run of `nb`."""
    return {g: recorded(nb, key["exercises"][g], g) for g in grade_ids}


def last_test(nb: nbformat.NotebookNode, grade_ids: list[str]) -> int:
    """The index of the last of the tests `grade_ids`: nothing after it can change them."""
    return max(i for i, c in enumerate(nb.cells) if grade_id_of(c) in grade_ids)


def recorded(nb: nbformat.NotebookNode, exercise: dict, grade_id: str) -> list[str] | None:
    """The answers the test `grade_id` recorded (the grade's normal forms), or None when it
    recorded none, or more than one."""
    cell = next((c for c in nb.cells if c.cell_type == "code" and grade_id_of(c) == grade_id), None)
    records = records_of(cell) if cell is not None else []
    if len(records) != 1 or not isinstance(records[0].get("values"), list):
        return None
    values = records[0]["values"]
    if len(values) != len(exercise["probes"]):
        return None
    return diagnosis.answers_of(exercise, values)


def zeroed(mark: NotebookMark, words: dict[str, str]) -> NotebookMark:
    """`mark` with each exercise of `words` (grade id: why) scored 0, the words among its
    flags; its values were right, so its outcome is zeroed."""
    return replace(
        mark,
        marks=[
            replace(m, score=0.0, flags=(*m.flags, words[m.grade_id]), outcome=ZEROED)
            if m.grade_id in words
            else m
            for m in mark.marks
        ],
    )
