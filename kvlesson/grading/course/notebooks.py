"""A notebook's cells as nbgrader marks them, and a cell's code as the kernel runs it.

nbgrader keeps a cell's role in its metadata (`metadata.nbgrader`: `solution` for an
answer cell, `grade` and `points` for a graded one, `grade_id`); an instructor's answer
cell holds its solution between `### BEGIN SOLUTION` and `### END SOLUTION`. Every part of
the grader reads cells through these few functions. A cell's code is read as IPython runs
it (`%` magics and `!` lines turned into calls), and parsed without ever being run; what a
cell imports is read from that code.
"""

from __future__ import annotations

import ast

SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def meta(cell) -> dict:
    """A cell's nbgrader metadata ({} when it has none, or none of a mapping's shape)."""
    found = cell.get("metadata", {}).get("nbgrader", {})
    return found if isinstance(found, dict) else {}


def grade_id_of(cell) -> str | None:
    """The nbgrader grade id of a cell, or None for a cell nbgrader does not track."""
    return meta(cell).get("grade_id")


def is_answer_cell(cell) -> bool:
    """A code cell where the student writes an answer (nbgrader's `solution`)."""
    return cell.cell_type == "code" and bool(meta(cell).get("solution"))


def is_test_cell(cell) -> bool:
    """A graded code cell that is no answer: a test cell (a self-check and hidden tests)."""
    found = meta(cell)
    return cell.cell_type == "code" and bool(found.get("grade")) and not found.get("solution")


def answer_code(source: str) -> str:
    """An answer cell's code as a student who got it right writes it: no markers."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS)


def python_of(source: str) -> str:
    """A cell as the kernel runs it: `%` magics and `!` lines turned into the calls IPython
    makes of them (`get_ipython().run_line_magic(...)`, `get_ipython().system(...)`)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # IPython could not read it: the Python parser will say why
        return source


def imported_modules(source: str) -> list[str]:
    """The modules a cell's imports load, in order: `import a.b` gives a.b, `from a import
    b, c` gives a, a.b and a.c (b or c may be a name, not a module: loading it then fails,
    and whoever loads these skips it)."""
    tree = parsed(source)
    found: list[str] = []
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [
                node.module,
                *(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"),
            ]
    return found


def parsed(source: str) -> ast.Module | None:
    """A cell's code (as the kernel runs it) as a syntax tree; None when it is no Python."""
    try:
        return ast.parse(python_of(source))
    except SyntaxError:
        return None
