"""`kvlesson exercise`: a new exercise's cells in an instructor notebook, ready to edit.

    kvlesson exercise 02_ceiling                 # the next name, after the last exercise
    kvlesson exercise 02_ceiling ex2_3 --after ex2_2 --points 2 --function blocks_in_gib

It writes three cells into solutions/<assignment>/<notebook>.ipynb, each with the nbgrader
metadata the course's exercises carry (docs/self-checks.md): the question (markdown), the
answer cell (solution markers), and the test cell (the hidden part that declares the
exercise's rules and records it for the grade; the visible self-check, `stamp=""` for the
build to fill). They hold a small exercise that builds and checks as it is (the cache of one
chat, in GB), to be changed into one's own; and, in tests/authoring/test_selfchecks.py's
`HAND`, three wrong answers of a student's own for it, to be replaced with the new
exercise's. Then `kvlesson check ASSIGNMENT NAME`, which builds the notebook first
(docs/first-exercise.md walks through it).
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from kvlesson.authoring import hand_table
from kvlesson.authoring.command import ROOT, chosen
from kvlesson.authoring.exercise_cells import DEFAULT_FUNCTION, DEFAULT_TITLE, NewExercise
from kvlesson.authoring.kernel import top_level_names
from kvlesson.grading.course.notebooks import grade_id_of, is_answer_cell, meta

NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")  # a grade id's stem, as the course writes them
SELFCHECK_IMPORT = "from kvlesson.grading.checks import selfcheck"


def notebook_of(root: Path, assignment: str) -> Path:
    """The instructor notebook of `assignment`, or a clear refusal."""
    [name] = chosen([assignment], root)
    found = sorted((root / "solutions" / name).glob("*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"solutions/{name} holds {len(found)} notebooks; an assignment has one")
    return found[0]


def next_free(nb, assignment: str) -> NewExercise:
    """The example exercise under the next name the notebook does not have: ex2_3 after
    Exercise 2.2 in 02_ceiling (ex_1, ex_2... where the folder has no number), and a function
    no cell defines."""
    taken = {grade_id_of(c) for c in nb.cells} | {
        name for c in nb.cells if c.cell_type == "code" for name in top_level_names(c.source)
    }
    stem = assignment.split("_", 1)[0]
    prefix = f"ex{int(stem)}_" if stem.isdigit() else "ex_"
    numbers = [int(g[len(prefix) :].split("_")[0]) for g in taken if g and _numbered(g, prefix)]
    name = f"{prefix}{max(numbers, default=0) + 1}"
    function = next(
        f
        for f in (DEFAULT_FUNCTION, *(f"{DEFAULT_FUNCTION}_{n}" for n in range(2, 1000)))
        if f not in taken
    )
    return NewExercise(name, function)


def _numbered(grade_id: str, prefix: str) -> bool:
    return grade_id.startswith(prefix) and grade_id[len(prefix) :].split("_")[0].isdigit()


def refuse_taken(nb, exercise: NewExercise) -> None:
    """A clear refusal for a name or a function the notebook already has."""
    if not NAME.match(exercise.name) or exercise.name.endswith(("_answer", "_tests")):
        raise ValueError(
            f"name must be a short lower-case name such as ex2_3 (its cells become "
            f"ex2_3_answer and ex2_3_tests), got {exercise.name!r}"
        )
    if not exercise.function.isidentifier():
        raise ValueError(f"function must be a Python name, got {exercise.function!r}")
    ids = [grade_id_of(cell) for cell in nb.cells if grade_id_of(cell)]
    taken = {exercise.name, f"{exercise.name}_answer", f"{exercise.name}_tests"} & set(ids)
    if taken:
        raise ValueError(
            f"name {exercise.name} is taken: the notebook has {', '.join(sorted(taken))} "
            f"(its graded cells are {', '.join(ids)})"
        )
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and exercise.function in top_level_names(cell.source):
            raise ValueError(
                f"function {exercise.function} is already defined in the notebook (cell "
                f"{index}): give the new exercise's function another name with --function"
            )


def place(nb, after: str | None) -> int:
    """Where the new cells go: after the graded cell `after` names (a grade id, or an
    exercise's name for its test cell), by default after the notebook's last graded cell
    (or at its end); never between an answer cell and its test cell."""
    graded = {grade_id_of(c): i for i, c in enumerate(nb.cells) if meta(c).get("grade")}
    answers = {grade_id_of(c): i for i, c in enumerate(nb.cells) if is_answer_cell(c)}
    if after is None:
        return max(graded.values(), default=len(nb.cells) - 1) + 1
    if after in answers:
        raise ValueError(
            f"after {after}: that is an answer cell, and its test cell must follow it; "
            f"give the test cell, {after.removesuffix('_answer')}_tests"
        )
    index = graded.get(after, graded.get(f"{after}_tests"))
    if index is None:
        raise ValueError(
            f"after {after}: the notebook has no graded cell of that name; "
            f"it can go after {', '.join(graded) or 'none (leave --after out)'}"
        )
    return index + 1


def with_selfcheck_import(nb) -> None:
    """The notebook's setup cell imports the self-checks (the build puts their stamps
    there): added after `import kvlesson as kv` where a notebook has none (a reading page)."""
    if any(SELFCHECK_IMPORT in c.source.splitlines() for c in nb.cells if c.cell_type == "code"):
        return
    for cell in nb.cells:
        lines = cell.source.splitlines() if cell.cell_type == "code" else []
        if "import kvlesson as kv" in lines:
            at = lines.index("import kvlesson as kv") + 1
            cell.source = "\n".join([*lines[:at], SELFCHECK_IMPORT, *lines[at:]])
            return
    raise ValueError("no cell imports kvlesson (import kvlesson as kv): the notebook has no setup")


@dataclass(frozen=True)
class Added:
    """What `add_exercise` wrote: the notebook, where the cells went, and the HAND file."""

    notebook: Path
    index: int
    hand: Path | None


def add_exercise(
    root: Path, assignment: str, exercise: NewExercise, after: str | None = None
) -> Added:
    """Write `exercise`'s cells into the instructor notebook of `assignment` in the course
    root `root` (after `after`), and its wrong answers into the root's HAND table if it
    has the tests; nothing is written when anything is refused."""
    if not (math.isfinite(exercise.points) and exercise.points > 0):
        raise ValueError(f"points must be a number more than 0, got {exercise.points}")
    path = notebook_of(root, assignment)
    nb = nbformat.read(path, as_version=4)
    refuse_taken(nb, exercise)
    index = place(nb, after)
    table = root / hand_table.TABLE
    text = None
    if table.is_file():
        text = hand_table.with_entry(table.read_text(), f"{exercise.name}_tests", exercise.hand())
    with_selfcheck_import(nb)
    nb.cells[index:index] = exercise.cells()
    nbformat.validate(nb)
    nbformat.write(nb, path)
    if text is not None:
        table.write_text(text)
    return Added(path, index, table if text is not None else None)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment", metavar="ASSIGNMENT", help="a folder of solutions/")
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="the exercise's name, ex2_3 (default: the notebook's next, after its last)",
    )
    parser.add_argument(
        "--after",
        metavar="ID",
        help="a graded cell's id or an exercise's name (ex2_2); default: after the last one",
    )
    parser.add_argument(
        "--points", type=float, default=1, help="what the exercise is worth (default 1)"
    )
    parser.add_argument(
        "--function",
        help=f"the function the student writes (default {DEFAULT_FUNCTION}, if the notebook "
        f"has none of that name)",
    )
    parser.add_argument("--title", default=DEFAULT_TITLE, help="the exercise's title")


def run(args: argparse.Namespace) -> int:
    free = next_free(
        nbformat.read(notebook_of(ROOT, args.assignment), as_version=4), args.assignment
    )
    exercise = NewExercise(
        args.name or free.name, args.function or free.function, args.points, args.title
    )
    added = add_exercise(ROOT, args.assignment, exercise, args.after)
    where = added.notebook.relative_to(ROOT)
    print(f"{exercise.heading} written into {where} (cells {added.index} to {added.index + 2})")
    if added.hand is not None:
        print(f"its wrong answers of a student's own: HAND in {added.hand.relative_to(ROOT)}")
    print(
        f"next: kvlesson check {args.assignment} {exercise.name} (it builds the notebook "
        f"first); then make it your own (docs/first-exercise.md)"
    )
    return 0
