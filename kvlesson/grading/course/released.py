"""Autograde's check of the locked cells, against what the students were given.

nbgrader's OverwriteCells puts every locked cell (the tests, the set-up) back as the
instructor wrote it and warns "Attribute 'checksum' for cell ... has changed!" when the
submitted cell differs from it. But the gradebook holds each test cell with its hidden
tests, and the students were given it without them, so nbgrader warns for every test
cell with hidden tests of every honest submission (nbgrader issue #1961), and a real
edit drowns among them. Here a locked cell that is exactly what the release gave is put
back silently; any other difference is still warned about, and put back, by nbgrader.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_code_cell
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions, OverwriteCells

from kvlesson.grading.course.notebooks import grade_id_of


def released(source: str) -> str:
    """A cell's source as nbgrader releases it: hidden tests cleared."""
    cell, _ = ClearHiddenTests(enforce_metadata=False).preprocess_cell(new_code_cell(source), {}, 0)
    return cell.source


def released_answer(source: str) -> str:
    """An answer cell's source as nbgrader releases it: the solution replaced by the
    code stub (`# YOUR CODE HERE`, `raise NotImplementedError()`)."""
    cell, _ = ClearSolutions(enforce_metadata=False).preprocess_cell(
        new_code_cell(source), {"language": "python"}, 0
    )
    return cell.source


class OverwriteReleasedCells(OverwriteCells):
    """OverwriteCells that warns only when a locked cell differs from its released form."""

    def preprocess_cell(self, cell: NotebookNode, resources, cell_index: int):
        grade_id = grade_id_of(cell)
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(
                    grade_id, self.notebook_id, self.assignment_id
                )
            except MissingEntry:
                source = None  # nbgrader warns that the cell is not in the gradebook
            if source is not None and source.locked and cell.source == released(source.source):
                cell.source = source.source
        return super().preprocess_cell(cell, resources, cell_index)
