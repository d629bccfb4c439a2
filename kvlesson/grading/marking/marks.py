"""Marking an autograded notebook outside the student's kernel.

Student code runs in the same kernel as the tests, so a verdict reached in that kernel can
be faked. Here, in the grader's own process, each hidden test cell's record line
(`KVLESSON-MARK {...}`, printed by `kvlesson.grading.checks.selfcheck.record`) is compared with the
key written when the release was made (`keys/<assignment>.json`, expected values with their
exact types). Every cell the student could edit or add is read as code, never run
(`kvlesson.grading.marking.cell_scan`), the forbidden functions the box saw run are counted, and the
course's own cells must keep their order. Each exercise gets an `ExerciseMark`: its score and flags
in words an instructor can read; a notebook that tampered scores 0 in all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import nbformat

from kvlesson.grading.checks import forbidden, probes, selfcheck
from kvlesson.grading.checks.records import records_of
from kvlesson.grading.course.notebooks import meta
from kvlesson.grading.course.results import (
    FAILED,
    FORBIDDEN,
    NOT_GRADED,
    PASSED,
    TAMPERING,
    ExerciseMark,
    Flag,
)
from kvlesson.grading.marking import cell_roles, cell_scan, diagnosis
from kvlesson.grading.marking.cell_roles import Cells, read_cells


@dataclass(frozen=True)
class NotebookMark:
    """A notebook's marks, the flags that belong to no one exercise, and whether it
    tampered (then every mark is 0)."""

    marks: list[ExerciseMark]
    flags: tuple[str, ...] = ()
    tampered: bool = False


def _last_name(call: object) -> str:
    return str(call).rsplit(".", 1)[-1]


def mark_cell(cell, exercise: dict, setting: dict | None) -> ExerciseMark:
    """The mark of one hidden test cell against its exercise in the key."""
    grade_id, points = meta(cell)["grade_id"], float(exercise["points"])
    records = records_of(cell)
    if len(records) != 1:
        what = "no record line" if not records else f"{len(records)} record lines"
        return ExerciseMark(
            grade_id,
            points,
            0.0,
            (
                f"{what} in the test cell's output: the cell did not run, or the output was "
                f"tampered with",
            ),
        )
    record, flags = records[0], []
    values = record.get("values")
    if (
        record.get("id") != grade_id
        or not isinstance(values, list)
        or len(values) != len(exercise["probes"])
    ):
        return ExerciseMark(grade_id, points, 0.0, (f"the record does not belong to {grade_id}",))
    # each recorded value against the key's probe: same kind, same normal form
    answers = diagnosis.answers_of(exercise, values)
    right = values_right = answers == [probe["normal"] for probe in exercise["probes"]]
    known = diagnosis.Diagnosis() if right else diagnosis.diagnose(exercise, answers)
    if not right and not known.mistake:
        known = diagnosis.Diagnosis("", diagnosis.unmatched_words(exercise))
    failed = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
    if right and failed:
        flags.append(
            "the values are right but the cell failed in the kernel (changed setting, "
            "a forbidden call, or tampering): check by hand"
        )
    calls = record.get("calls") if isinstance(record.get("calls"), list) else []
    used = [str(c) for c in calls if _last_name(c) in exercise["forbidden"]]
    if used:
        flags.append(
            "scored 0: "
            + selfcheck.forbidden_message("the answer", used, tuple(exercise["forbidden"]))[
                len("Not yet: ") :
            ]
        )
        right = False
    if setting and record.get("setting") != setting:
        flags.append(f"the notebook's setting {record.get('setting')} is not the key's {setting}")
    return ExerciseMark(
        grade_id,
        points,
        points if right else 0.0,
        tuple(flags),
        PASSED if values_right else FAILED,
        known.mistake,
        known.words,
    )


@dataclass
class Reading:
    """What the reading of the student's cells found: flags that belong to no one exercise,
    whether the notebook tampered, and each forbidden function named, reached or run
    (cell index, function, where in words)."""

    flags: list[str]
    tampered: bool
    forbidden: list[tuple[int, str, str]]


def read_theirs(
    nb: nbformat.NotebookNode,
    cells: Cells,
    key: dict,
    course: cell_roles.CourseCells,
    box_flags: list[Flag],
) -> Reading:
    """The student's cells read as code (tampering, forbidden functions named or reached,
    strings that name one) and what the box saw (a forbidden function that ran, tampering)."""
    reading, names = Reading([], False, []), dict(course.names)
    everything = {name for ex in key["exercises"].values() for name in ex["forbidden"]}
    codes = forbidden.resolve(everything)
    for index, cell in cells.theirs:
        where = where_is(nb, index)
        for finding in cell_scan.scan(cell.source, set(course.names), course.modules):
            reading.flags.append(
                f"{where}: {finding.what}"
                + (" (tampering: the notebook scores 0)" if finding.kind == TAMPERING else "")
            )
            reading.tampered |= finding.kind == TAMPERING
        names.update(cell_scan.names_of(cell.source))
        for name in probes.mentioned(cell.source, everything) + forbidden.used_in(
            cell.source, names, codes
        ):
            reading.forbidden.append((index, _last_name(name), where))
        for text in cell_scan.strings_naming(cell.source, everything):
            reading.flags.append(
                f"{where}: has the string {text!r}, which names a function an exercise forbids"
            )
    for flag in box_flags:
        if flag.kind == FORBIDDEN:
            reading.forbidden.append(
                (flag.index, _last_name(flag.function), where_is(nb, flag.index))
            )
        reading.tampered |= flag.kind == TAMPERING  # what the box refused or reported
    return reading


def where_is(nb: nbformat.NotebookNode, index: int) -> str:
    source = nb.cells[index].source if 0 <= index < len(nb.cells) else ""
    return f"cell {index} (`{cell_roles.first_line(source)}`)"


def mark_exercise(
    nb: nbformat.NotebookNode,
    grade_id: str,
    exercise: dict,
    setting: dict | None,
    cells: Cells,
    reading: Reading,
    moved: dict[int, int],
    course: cell_roles.CourseCells,
) -> ExerciseMark:
    """One exercise's mark: its test's record against the key, then 0 for a forbidden
    function in the code that works out its answer, or a course cell moved above it."""
    if grade_id not in cells.tests:
        missing = ("the test cell is missing from the notebook",)
        return ExerciseMark(grade_id, float(exercise["points"]), 0.0, missing)
    test = cells.tests[grade_id]
    mark = mark_cell(nb.cells[test], exercise, setting)
    flags, score = list(mark.flags), mark.score
    feeding = cell_roles.answer_cells(nb, test, dict(cells.theirs), course.bound) | {test}
    hits = sorted(
        {
            (where, name)
            for index, name, where in reading.forbidden
            if index in feeding and name in exercise["forbidden"]
        }
    )
    for where, name in hits:
        flags.append(
            "scored 0: "
            + selfcheck.forbidden_message(
                where, [name], tuple(exercise["forbidden"]), through="uses"
            )[len("Not yet: ") :]
        )
        score = 0.0
    if test in moved:
        flags.append(
            f"scored 0: the course's cell {moved[test]} was moved above this "
            "test; the grade reads the notebook in the course's order"
        )
        score = 0.0
    return replace(mark, score=score, flags=tuple(flags))


def mark_notebook(
    nb: nbformat.NotebookNode,
    key: dict,
    instructor: nbformat.NotebookNode,
    box_flags: list[Flag] = (),
    course: cell_roles.CourseCells | None = None,
) -> NotebookMark:
    """Every exercise of the key, marked from the autograded notebook `nb`: the record of
    its hidden test against the key; the student's cells read as code (tampering costs the
    notebook); a forbidden function named, reached (read) or run (`box_flags`, what the box
    saw) by the code that works out an exercise's answer, which costs the exercise; and the
    course's cells in the course's order. `course`: the instructor notebook's cells, read
    once for a class (default: read now)."""
    course = course or cell_roles.CourseCells.of(instructor)
    cells = read_cells(nb, key, course)
    reading = read_theirs(nb, cells, key, course, list(box_flags))
    moved = cell_roles.moved(cells.order, nb)
    marks = [
        mark_exercise(nb, g, ex, key.get("setting"), cells, reading, moved, course)
        for g, ex in key["exercises"].items()
    ]
    if reading.tampered:
        marks = [replace(m, score=0.0) for m in marks]
    return NotebookMark(
        [_with_outcome(m, nb, cells.tests.get(m.grade_id), course) for m in marks],
        tuple(reading.flags),
        reading.tampered,
    )


def _with_outcome(
    mark: ExerciseMark, nb: nbformat.NotebookNode, test: int | None, course: cell_roles.CourseCells
) -> ExerciseMark:
    """A final mark with its outcome: passed, skipped (no code of the student's in the
    answer cell above its test), zeroed (right values, a flag cost the points) or failed."""
    answer = cell_roles.answer_cell(nb, test) if test is not None else None
    skipped = answer is not None and diagnosis.unanswered(
        nb.cells[answer].source, course.stubs.get(nb.cells[answer].get("id"), "")
    )
    right = mark.outcome == PASSED  # mark_cell's verdict on the values alone
    return replace(mark, outcome=diagnosis.outcome(mark.points, mark.score, right, skipped))


def unmarkable(key: dict, reason: str) -> NotebookMark:
    """A notebook that cannot be marked: 0 for every exercise, and why."""
    return NotebookMark(
        [
            ExerciseMark(grade_id, float(ex["points"]), 0.0, (reason,), NOT_GRADED)
            for grade_id, ex in key["exercises"].items()
        ],
        (reason,),
        False,
    )
