"""The notebook's kernel as the build uses it, and the names a cell binds.

The build runs an instructor notebook top to bottom in one kernel, and between its cells
runs code of its own that must leave no trace in the notebook (the probe search, the known
mistakes swapped in and out): `Kernel` does both. `top_level_names` reads which names a cell
binds (a student may read one of the notebook's variables instead of an argument).
"""

from __future__ import annotations

import ast

import nbformat


def top_level_names(source: str) -> list[str]:
    """The names a code cell binds at its top level (variables, functions, imports)."""
    code = "\n".join(
        line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
    )  # IPython's magics
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            names.append(statement.name)
        for target in getattr(statement, "targets", []):
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return names


class Kernel:
    """A notebook's kernel, with a way to run code that leaves no trace in the notebook."""

    def __init__(self, client):
        self.client = client

    def run(self, cell, index: int) -> None:
        self.client.execute_cell(cell, index)

    def quietly(self, code: str) -> bool:
        """Run `code` without storing it; False if it raised."""
        from nbclient.exceptions import CellExecutionError

        cell, first = nbformat.v4.new_code_cell(code), self.client.nb.cells[0]
        try:
            self.client.execute_cell(cell, 0, store_history=False)
        except CellExecutionError:
            return False
        finally:
            self.client.nb.cells[0] = first  # nbclient stores the cell it ran at the index
        return True

    def must(self, code: str) -> None:
        """Run `code` without storing it; the build's own code must not fail (a silent
        failure here once left every self-check without its hints)."""
        if not self.quietly(code):
            raise RuntimeError(f"the build's code failed in the notebook's kernel:\n{code}")
