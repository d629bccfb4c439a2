"""A notebook's page on the website, without building it: made from the instructor notebook,
the text cells with their outputs, each exercise a question with a blank, each self-check a
line, the set-up cell's code hidden, links that lead to pages."""

from __future__ import annotations

from pathlib import PurePosixPath

import nbformat
import pytest

from kvlesson.delivery.site.pages import (
    CODE_BLANK,
    Mismatch,
    page_of,
    relinked,
    role,
    shell_fences,
)
from support.paths import ROOT

MACHINERY = (
    "NotImplementedError",
    "YOUR CODE HERE",
    "YOUR ANSWER HERE",
    "selfcheck.verify",
    "selfcheck.record",
    "BEGIN SOLUTION",
    "HIDDEN TESTS",
)


def solution_of(name: str) -> nbformat.NotebookNode:
    (path,) = (ROOT / "solutions" / name).glob("*.ipynb")
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "solutions").iterdir()))
def test_a_page_shows_questions_and_blanks_and_no_machinery(name):
    solution = solution_of(name)
    page, stats = page_of(solution, name)
    # the code a page shows (notebook 0's text may name the stub, to say what to do with it)
    text = "\n".join(cell.source for cell in page.cells if cell.cell_type == "code")
    assert [word for word in MACHINERY if word in text] == []
    exercises = [cell for cell in solution.cells if role(cell) != "text"]
    assert stats.withheld == len(exercises)
    answers = [c for c in solution.cells if role(c) == "answer" and c.cell_type == "code"]
    assert text.count(CODE_BLANK) == len(answers)
    for cell in page.cells:
        assert "nbgrader" not in cell.metadata
        if "kvlesson-answer" in cell.metadata.get("tags", []):
            assert cell.outputs == []  # an answer cell's output is its answer


def test_text_cells_keep_the_outputs_the_build_executed_and_the_setup_hides_its_stamps():
    solution = solution_of("01_floor_plan")
    page, stats = page_of(solution, "01")
    shown = [c for c in page.cells if c.cell_type == "code" and c.outputs]
    executed = [
        c for c in solution.cells if c.cell_type == "code" and role(c) == "text" and c.outputs
    ]
    assert [c.outputs for c in shown] == [c.outputs for c in executed]
    assert stats.outputs == sum(len(c.outputs) for c in executed)
    setup = next(c for c in page.cells if "selfcheck.load_stamps(" in c.source)
    assert "remove-input" in setup.metadata["tags"] and setup.outputs


def test_an_answer_keeps_its_frame_and_the_solution_becomes_a_blank():
    solution = solution_of("01_floor_plan")
    page, _ = page_of(solution, "01")
    answer = next(c for c in page.cells if "def pool_bytes(share):" in c.source)
    assert answer.source.splitlines() == [
        "def pool_bytes(share):",
        '    """The cache pool in bytes at a share in percent."""',
        f"    {CODE_BLANK}",
    ]


def test_a_written_answer_is_a_blank_and_a_self_check_a_line():
    solution = solution_of("02_ceiling")
    page, _ = page_of(solution, "02")
    sources = [c.source for c in page.cells if c.cell_type == "markdown"]
    assert any("kvlesson-blank" in s and "in words" in s for s in sources)
    assert sum("kvlesson-self-check" in s for s in sources) == sum(
        role(c) == "test" for c in solution.cells
    )


def test_an_output_may_take_another_form_and_a_marker_outside_an_exercise_is_refused():
    solution = solution_of("04_preemption")
    seen = []

    def restyle(output):
        seen.append(output)
        return {"output_type": "display_data", "data": {"text/plain": "moved"}, "metadata": {}}

    page, _ = page_of(solution, "04", restyle)
    assert seen and all(
        o == {"output_type": "display_data", "data": {"text/plain": "moved"}, "metadata": {}}
        for c in page.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    text = next(i for i, c in enumerate(solution.cells) if role(c) == "text")
    solution.cells[text].source += "\n### BEGIN SOLUTION"
    with pytest.raises(Mismatch, match=f"cell {text} holds an nbgrader marker"):
        page_of(solution, "04")


def test_links_lead_to_pages_or_become_paths_and_shell_lines_are_ipython():
    pages = {PurePosixPath("docs/instructors.md"), PurePosixPath("about.md")}
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
