"""The notebooks a test's students hand in: the release with some of the instructor's answers
in it, signed with the student's name; and what each is worth (for tests/system/test_hub.py
and tests/system/test_ta_grading.py).
"""

from __future__ import annotations

import copy

import nbformat

from kvlesson.authoring import command


def signed(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The notebook with the student's name in a comment of every code answer, so that a
    feedback page shows whose work it holds."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            cell.source = f"# work of {name}\n{cell.source}"
    return nb


def answers_to_tests(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    """Each autograded answer cell ('P_answer') and the test cells that grade it ('P_...')."""
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
    answers = [
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]
    return {
        a: [i for i in ids if i != a and i.startswith(a.removesuffix("answer"))] for a in answers
    }


def handed_in(
    release: nbformat.NotebookNode, solution: nbformat.NotebookNode, answered: set[str]
) -> nbformat.NotebookNode:
    """The release with the instructor's answer in the cells `answered` (grade ids)."""
    right = command.answered(release, solution)
    nb = copy.deepcopy(release)
    for mine, model in zip(nb.cells, right.cells):
        if mine.metadata.get("nbgrader", {}).get("grade_id") in answered:
            mine.source = model.source
    return nb


def points(nb: nbformat.NotebookNode) -> dict[str, float]:
    """The points of each graded cell of the instructor's notebook."""
    return {
        c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"]["points"])
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }


# ---------------------------------------------------------------------------
