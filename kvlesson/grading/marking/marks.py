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
from kvlesson.grading.course.notebooks import grade_id_of, meta
from kvlesson.grading.course.results import (
    FAILED,
    FORBIDDEN,
    NOT_GRADED,
    PASSED,
    TAMPERING,
    ZEROED,
    ExerciseMark,
    Flag,
)
from kvlesson.grading.marking import cell_roles, cell_scan, diagnosis


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
    ids_seen: dict[str, int] = {}
    for cell in nb.cells:
        ids_seen[cell.get("id")] = ids_seen.get(cell.get("id"), 0) + 1
    tests, theirs, order = {}, [], []
    for index, cell in enumerate(nb.cells):
        grade_id = meta(cell).get("grade_id")
        if cell.cell_type == "code" and grade_id in key["exercises"] and grade_id not in tests:
            tests[grade_id] = index
        if cell.cell_type != "code":
            continue
        if course.is_own(cell, ids_seen):
            order.append((course.order.index(cell.get("id")), index))
        elif grade_id not in key["exercises"]:
            theirs.append((index, cell))
    notebook_flags, tampered = [], False
    names = dict(course.names)
    seen_forbidden: list[tuple[int, str, str]] = []  # (cell index, function, where)
    everything_forbidden = {name for ex in key["exercises"].values() for name in ex["forbidden"]}
    codes = forbidden.resolve(everything_forbidden)

    def where_is(index: int) -> str:
        source = nb.cells[index].source if 0 <= index < len(nb.cells) else ""
        return f"cell {index} (`{cell_roles.first_line(source)}`)"

    for index, cell in theirs:
        where = where_is(index)
        for finding in cell_scan.scan(cell.source, set(course.names), course.modules):
            notebook_flags.append(
                f"{where}: {finding.what}"
                + (" (tampering: the notebook scores 0)" if finding.kind == TAMPERING else "")
            )
            tampered |= finding.kind == TAMPERING
        names.update(cell_scan.names_of(cell.source))
        for name in probes.mentioned(cell.source, everything_forbidden) + forbidden.used_in(
            cell.source, names, codes
        ):
            seen_forbidden.append((index, _last_name(name), where))
        for text in cell_scan.strings_naming(cell.source, everything_forbidden):
            notebook_flags.append(
                f"{where}: has the string {text!r}, which names a function an exercise forbids"
            )
    for flag in box_flags:
        if flag.kind == FORBIDDEN:
            seen_forbidden.append((flag.index, _last_name(flag.function), where_is(flag.index)))
        tampered |= flag.kind == TAMPERING  # what the box refused or reported
    moved = cell_roles.moved(order, nb)
    marks = []
    for grade_id, exercise in key["exercises"].items():
        if grade_id not in tests:
            marks.append(
                ExerciseMark(
                    grade_id,
                    float(exercise["points"]),
                    0.0,
                    ("the test cell is missing from the notebook",),
                )
            )
            continue
        mark, test = (
            mark_cell(nb.cells[tests[grade_id]], exercise, key.get("setting")),
            tests[grade_id],
        )
        flags, score = list(mark.flags), mark.score
        feeding = cell_roles.answer_cells(nb, test, dict(theirs), course.bound) | {test}
        hits = sorted(
            {
                (where, name)
                for index, name, where in seen_forbidden
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
        marks.append(replace(mark, score=score, flags=tuple(flags)))
    if tampered:
        marks = [replace(m, score=0.0) for m in marks]
    return NotebookMark(
        [_with_outcome(m, nb, tests.get(m.grade_id), course) for m in marks],
        tuple(notebook_flags),
        tampered,
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
