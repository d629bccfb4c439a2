"""Whose is each cell of a submitted notebook, and which cells work out an answer.

The grade reads a notebook as the course laid it out. A code cell is the course's own when
its id is one of the course's, appears once, and its code is as the course wrote it (or as
the release gave it); every other code cell (an answer, a cell the student added or
changed) is the student's, and is read as code. The code that works out an exercise's
answer is its answer cell and the student's cells that can change what it reads, and so on
back (`kvlesson.grading.marking.answer_flow`); and the course's cells must keep the course's
order.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import nbformat

from kvlesson.grading.course.notebooks import meta, parsed
from kvlesson.grading.course.released import released, released_answer
from kvlesson.grading.marking import answer_flow, cell_scan


@dataclass(frozen=True)
class CourseCells:
    """The course's own code cells of a notebook, from the instructor's version: their ids
    in order, their sources, the answer cells' ids, and the names and modules they import;
    each own cell as the release gave it, and each answer cell as the release gave it."""

    order: list[str]
    source: dict[str, str]
    answers: set[str]
    names: dict[str, object] = field(default_factory=dict)
    modules: set[str] = field(default_factory=set)
    released: dict[str, str] = field(default_factory=dict)
    stubs: dict[str, str] = field(default_factory=dict)
    bound: frozenset[str] = frozenset()  # every name the course's own cells bind

    @classmethod
    def of(cls, instructor: nbformat.NotebookNode) -> "CourseCells":
        code = [c for c in instructor.cells if c.cell_type == "code"]
        answers = {c.get("id") for c in code if meta(c).get("solution")}
        own = [c for c in code if c.get("id") not in answers]
        names, modules = {}, set()
        for cell in own:
            names.update(cell_scan.names_of(cell.source))
            modules.update(m for node in imports(cell.source) for m in node)
        return cls(
            [c.get("id") for c in code],
            {c.get("id"): c.source for c in own},
            answers,
            names,
            modules,
            {c.get("id"): released(c.source) for c in own},
            {c.get("id"): released_answer(c.source) for c in code if c.get("id") in answers},
            frozenset(n for c in own for n in answer_flow.effects(c.source).binds),
        )

    def is_own(self, cell, ids_seen: dict[str, int]) -> bool:
        """A cell of the submission is the course's own: its id is the course's, it appears
        once, and its code is as the course wrote it (a locked cell is put back so) or as
        the release gave it (a test cell without its hidden tests)."""
        cell_id = cell.get("id")
        return (
            ids_seen.get(cell_id) == 1
            and cell_id in self.source
            and cell.source in (self.source[cell_id], self.released[cell_id])
        )


@dataclass(frozen=True)
class Cells:
    """A graded notebook's code cells by whose they are: each exercise's test (grade id:
    index, the first of that id), the student's cells (index, cell) and the course's own
    (their rank in the course's order, index)."""

    tests: dict[str, int]
    theirs: list[tuple[int, object]]
    order: list[tuple[int, int]]

    @property
    def own(self) -> list[int]:
        return [index for _, index in self.order]


def read_cells(nb: nbformat.NotebookNode, key: dict, course: CourseCells) -> Cells:
    """Whose each code cell of `nb` is: the course's own, a test of the key, or the
    student's (an answer, a cell they added or changed)."""
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
    return Cells(tests, theirs, order)


def imports(source: str) -> list[list[str]]:
    tree = parsed(source)
    if tree is None:
        return []
    return [
        cell_scan.imported(node)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]


def first_line(source: str) -> str:
    line = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return line if len(line) <= 60 else line[:57] + "..."


def answer_cell(nb: nbformat.NotebookNode, test: int) -> int | None:
    """The answer cell a test at `test` checks: the nearest one at or above it."""
    return next((i for i in range(test, -1, -1) if meta(nb.cells[i]).get("solution")), None)


def answer_cells(
    nb: nbformat.NotebookNode,
    test: int,
    theirs: dict[int, object],
    course: frozenset[str] = frozenset(),
) -> set[int]:
    """The cells that work out the answer a test at `test` checks: the answer cell above it,
    and every cell of the student's above the test that can change what the test or those
    cells read (`kvlesson.grading.marking.answer_flow`: names bound, dicts and objects changed
    in place, `global`, IPython's `_` and `Out`, functions that change them). An answer may
    use what another exercise's answer defines; it may not use, through another cell, a
    function its own exercise forbids."""
    answer = answer_cell(nb, test)
    if answer is None:
        return set()
    sources = {i: c.source for i, c in enumerate(nb.cells[: test + 1]) if c.cell_type == "code"}
    mine = set(theirs) | {answer}
    return (
        {answer}
        | answer_flow.feeding_cells(sources, mine, test, course)
        | answer_flow.feeding_cells(sources, mine, answer, course)
    )


def moved(order: list[tuple[int, int]], nb: nbformat.NotebookNode) -> dict[int, int]:
    """The course's cells out of the course's order: for each cell that now comes after a
    course cell it came before, that cell's index (test cell index -> moved cell index)."""
    out: dict[int, int] = {}
    for position, (rank, index) in enumerate(order):
        for later_rank, later_index in order[:position]:
            if later_rank > rank:  # a cell the course puts after this one now comes before it
                out.setdefault(index, later_index)
    return out
