"""A notebook's page on the website, without building it: the release's text with the
solution's outputs on text cells only, the set-up cell's code hidden, links that lead to pages."""

from __future__ import annotations

from pathlib import PurePosixPath

import nbformat
import pytest

from kvlesson.delivery.site.pages import Mismatch, merged, relinked, shell_fences
from support.paths import ROOT


def pair(name: str):
    (release,) = (ROOT / "notebooks" / name).glob("*.ipynb")
    solution = ROOT / "solutions" / name / release.name
    return nbformat.read(release, as_version=4), nbformat.read(solution, as_version=4)


def test_a_page_shows_the_solutions_outputs_on_text_cells_and_none_on_answers_or_tests():
    release, solution = pair("01_floor_plan")
    page, stats = merged(release, solution, "01")
    for cell, executed in zip(page.cells, solution.cells):
        meta = executed.metadata.get("nbgrader", {})
        assert "nbgrader" not in cell.metadata
        if cell.cell_type != "code":
            continue
        if meta.get("solution") or meta.get("grade"):
            assert cell.outputs == [] and "BEGIN" not in cell.source
        else:
            assert cell.outputs == executed.outputs
    assert stats.withheld == sum(
        1
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("solution")
        or c.metadata.get("nbgrader", {}).get("grade")
    )
    setup = next(c for c in page.cells if "selfcheck.load_stamps(" in c.source)
    assert "remove-input" in setup.metadata["tags"] and setup.outputs


def test_a_release_out_of_step_with_solutions_is_refused():
    release, solution = pair("01_floor_plan")
    text = next(i for i, c in enumerate(release.cells) if c.cell_type == "markdown")
    release.cells[text].source += "\nedited by hand"
    with pytest.raises(Mismatch, match="differs between the release and solutions"):
        merged(release, solution, "01")
    with pytest.raises(Mismatch, match="cells"):
        merged(release, nbformat.v4.new_notebook(cells=solution.cells[:-1]), "01")


def test_links_lead_to_pages_or_become_paths_and_shell_lines_are_ipython():
    pages = {PurePosixPath("docs/instructors.md"), PurePosixPath("README.md")}
    here = PurePosixPath("docs/jupyterhub.md")
    text = "[guide](instructors.md#grading), [the script](../binder/postBuild), [x](https://a.b)"
    assert relinked(text, here, pages) == (
        "[guide](instructors.md#grading), the script (`binder/postBuild` in the course's "
        "repository), [x](https://a.b)"
    )
    assert shell_fences("```python\nimport sys\n!{sys.executable} -m x\n```\n").startswith(
        "```ipython\n"
    )
    assert shell_fences("```python\nx = 1\n```\n").startswith("```python\n")
