"""The notebook's kernel as the build uses it, and the names a cell binds.

The build runs an instructor notebook top to bottom in one kernel, and between its cells
runs code of its own that must leave no trace in the notebook (the probe search, the known
mistakes swapped in and out): `Kernel` does both. `top_level_names` reads which names a cell
binds (a student may read one of the notebook's variables instead of an argument).
"""

from __future__ import annotations

import ast

import nbformat

# seconds for one batch of the build's own code (every known mistake of an answer, run in
# the kernel in one request): a cell's limit is the notebook's, this one scales with the
# mistakes, generous on a busy machine
BATCH_TIMEOUT = 3600


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
        return self._error_of(code) is None

    def must(self, code: str) -> None:
        """Run `code` without storing it; the build's own code must not fail (a silent
        failure here once left every self-check without its hints)."""
        error = self._error_of(code)
        if error is not None:
            shown = code if len(code) < 2_000 else code[:2_000] + " ..."
            raise RuntimeError(
                f"the build's code failed in the notebook's kernel ({error}):\n{shown}"
            )

    def _error_of(self, code: str) -> str | None:
        """Run `code` without storing it: the error it raised, in a line, or None."""
        from nbclient.exceptions import CellExecutionError

        cell, first = nbformat.v4.new_code_cell(code), self.client.nb.cells[0]
        try:
            self.client.execute_cell(cell, 0, store_history=False)
        except CellExecutionError as error:
            return f"{error.ename}: {error.evalue}"
        finally:
            self.client.nb.cells[0] = first  # nbclient stores the cell it ran at the index
        return None

    def batch(self, code: str) -> None:
        """`must` for code that runs many things in one request (every known mistake of an
        answer, `kvlesson.authoring.mistake_runs`), under its own longer limit."""
        cell_limit, self.client.timeout = self.client.timeout, BATCH_TIMEOUT
        try:
            self.must(code)
        finally:
            self.client.timeout = cell_limit
