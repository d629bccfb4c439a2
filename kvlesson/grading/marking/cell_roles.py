"""Whose is each cell of a submitted notebook, and which cells work out an answer.

The grade reads a notebook as the course laid it out. A code cell is the course's own when
its id is one of the course's, appears once, and its code is as the course wrote it (or as
the release gave it); every other code cell (an answer, a cell the student added or
changed) is the student's, and is read as code. The code that works out an exercise's
answer is its answer cell and the student's cells that bind the names it reads, and so on
back; and the course's cells must keep the course's order.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import nbformat

from kvlesson.grading.course.notebooks import meta, parsed
from kvlesson.grading.course.released import released, released_answer
from kvlesson.grading.marking import cell_scan


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

    @classmethod
    def of(cls, instructor: nbformat.NotebookNode) -> "CourseCells":
        code = [c for c in instructor.cells if c.cell_type == "code"]
        answers = {c.get("id") for c in code if meta(c).get("solution")}
        own = [c for c in code if c.get("id") not in answers]
        names, modules = {}, set()
        for cell in own:
            names.update(cell_scan.names_of(cell.source))
            modules.update(m for node in imports(cell.source) for m in node)
        return cls([c.get("id") for c in code], {c.get("id"): c.source for c in own}, answers,
                   names, modules, {c.get("id"): released(c.source) for c in own},
                   {c.get("id"): released_answer(c.source) for c in code
                    if c.get("id") in answers})

    def is_own(self, cell, ids_seen: dict[str, int]) -> bool:
        """A cell of the submission is the course's own: its id is the course's, it appears
        once, and its code is as the course wrote it (a locked cell is put back so) or as
        the release gave it (a test cell without its hidden tests)."""
        cell_id = cell.get("id")
        return (ids_seen.get(cell_id) == 1 and cell_id in self.source
                and cell.source in (self.source[cell_id], self.released[cell_id]))


def imports(source: str) -> list[list[str]]:
    tree = parsed(source)
    if tree is None:
        return []
    return [cell_scan.imported(node) for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))]


def first_line(source: str) -> str:
    line = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return line if len(line) <= 60 else line[:57] + "..."


def answer_cell(nb: nbformat.NotebookNode, test: int) -> int | None:
    """The answer cell a test at `test` checks: the nearest one at or above it."""
    return next((i for i in range(test, -1, -1) if meta(nb.cells[i]).get("solution")), None)


def answer_cells(nb: nbformat.NotebookNode, test: int, theirs: dict[int, object]) -> set[int]:
    """The cells that work out the answer a test at `test` checks: the answer cell above it,
    and, following the names it reads, every cell of the student's above it that last bound
    one of them (and so on). An answer may use what another exercise's answer defines; it
    may not use, through another cell, a function its own exercise forbids."""
    answer = answer_cell(nb, test)
    if answer is None:
        return set()
    found, todo = {answer}, [answer]
    while todo:
        index = todo.pop()
        for name in reads(nb.cells[index].source):
            binder = next((i for i in range(index - 1, -1, -1)
                           if i in theirs and name in binds(nb.cells[i].source)), None)
            if binder is not None and binder not in found:
                found.add(binder)
                todo.append(binder)
    return found


def reads(source: str) -> set[str]:
    tree = parsed(source)
    if tree is None:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def binds(source: str) -> set[str]:
    """The names a cell binds at its top level: assignments, functions, classes, imports."""
    tree = parsed(source)
    if tree is None:
        return set()
    names = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in statement.names)
        else:
            names.update(n.id for n in ast.walk(statement)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return names


def moved(order: list[tuple[int, int]], nb: nbformat.NotebookNode) -> dict[int, int]:
    """The course's cells out of the course's order: for each cell that now comes after a
    course cell it came before, that cell's index (test cell index -> moved cell index)."""
    out: dict[int, int] = {}
    for position, (rank, index) in enumerate(order):
        for later_rank, later_index in order[:position]:
            if later_rank > rank:  # a cell the course puts after this one now comes before it
                out.setdefault(index, later_index)
    return out
