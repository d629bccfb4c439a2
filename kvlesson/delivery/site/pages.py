"""A notebook's page: the course's text and outputs, each exercise as a question, no answer.

A page is made from the instructor notebook (`solutions/`), never from a student's working
copy: every cell that is neither an answer nor a self-check keeps its text and the outputs
the build executed; an answer cell shows its code with the solution cut out and a blank,
`...`, where the student writes (a written answer: a blank to write in); a self-check cell
becomes a line saying what it does in the notebook (its code and its stamps are machinery,
and its hidden tests are the grader's). Nothing between nbgrader's solution or hidden-test
markers reaches a page, and no output of an answer or a self-check (those hold answers and
the grader's record lines). The set-up cell's stamps are hidden too.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable

import nbformat
from nbformat.v4 import new_markdown_cell
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

from kvlesson.authoring.stamp_places import LOADER  # the set-up cell's stamps: not for reading

RECORD = "KVLESSON-MARK"  # a hidden test's record line
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
CODE_BLANK = "...  # your code"  # where a student writes, on a page
WORDS_BLANK = (
    '<div class="kvlesson-blank"><p><b>Your answer</b>, in words, goes here in the notebook.'
    "</p></div>"
)
ANSWER_NOTE = (
    "**Your answer** goes in the cell below, in the notebook: write your code where it shows `...`."
)
SELF_CHECK = (
    '<p class="kvlesson-self-check"><b>Self-check.</b> In the notebook, a cell here checks the '
    "answer above when you run it: it prints <i>Self-check passed.</i>, or a hint that starts "
    "with <i>Not yet</i>.</p>"
)
# A relative Markdown link or image: [text](target) or ![alt](target), without a scheme.
LINK = re.compile(r"(!?)\[([^\]]*)\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s#]+)(#[^)\s]*)?\)")


class Mismatch(ValueError):
    """A notebook the website cannot show as the course wrote it (a marker left in its text)."""


def role(cell) -> str:
    """'answer', 'test' or 'text': what nbgrader makes of a cell (its metadata only)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("solution"):
        return "answer"
    if meta.get("grade") or meta.get("task"):
        return "test"
    return "text"


def cleared(source: str, cell_type: str, code: str, words: str) -> str:
    """An answer's source with its solution replaced as nbgrader replaces it, by `code` (a
    code cell) or `words` (a written answer), indented where the solution stood."""
    clear = ClearSolutions(code_stub={"python": code}, text_stub=words, enforce_metadata=False)
    cell = nbformat.from_dict({"cell_type": cell_type, "source": source, "metadata": {}})
    clear.preprocess_cell(cell, {"language": "python"}, 0)
    return cell.source


def without_hidden_tests(source: str) -> str:
    """A test cell's source as nbgrader releases it: hidden tests cleared."""
    cell = nbformat.from_dict({"cell_type": "code", "source": source, "metadata": {}})
    ClearHiddenTests(enforce_metadata=False).preprocess_cell(cell, {}, 0)
    return cell.source


@dataclass(frozen=True)
class PageStats:
    """What a page shows: cells, outputs kept, exercise cells shown as a blank or a line."""

    cells: int
    outputs: int
    withheld: int


Restyle = Callable[[dict], "dict | None"]  # an output in another form for the page, or None


def page_of(
    solution: nbformat.NotebookNode, name: str, restyle: Restyle = lambda output: None
) -> tuple[nbformat.NotebookNode, PageStats]:
    """The page of an instructor notebook (see the module). `restyle(output)` may give an
    output of a text cell another form for the page (an explorer, moving): None keeps it."""
    page = copy.deepcopy(solution)
    cells, outputs, withheld = [], 0, 0
    for index, cell in enumerate(page.cells):
        kind = role(cell)
        cell.metadata.pop("nbgrader", None)
        if kind == "text":
            if any(marker in cell.source for marker in MARKERS):
                raise Mismatch(f"{name}: cell {index} holds an nbgrader marker outside an exercise")
            if cell.cell_type == "code":
                kept = [restyle(output) or without_records(output) for output in cell.outputs]
                cell.outputs = kept
                outputs += len(kept)
                if LOADER in cell.source:
                    cell.metadata.setdefault("tags", []).append("remove-input")
            cells.append(cell)
        elif kind == "answer" and cell.cell_type == "code":
            cell.source = cleared(cell.source, "code", CODE_BLANK, "")
            cell.outputs, cell.execution_count = [], None
            cell.metadata.setdefault("tags", []).append("kvlesson-answer")  # its blank, drawn
            cells += [new_markdown_cell(ANSWER_NOTE), cell]
            withheld += 1
        elif kind == "answer":
            cells.append(new_markdown_cell(WORDS_BLANK))
            withheld += 1
        else:
            cells.append(new_markdown_cell(SELF_CHECK))
            withheld += 1
    page.cells = cells
    page.metadata.pop("widgets", None)
    return page, PageStats(len(page.cells), outputs, withheld)


def without_records(output):
    """An output without any record line a hidden test printed (none should reach here)."""
    if output.get("output_type") == "stream":
        output["text"] = "".join(
            line for line in output.get("text", "").splitlines(True) if RECORD not in line
        )
    return output


def relinked(markdown: str, here: PurePosixPath, pages: set[PurePosixPath]) -> str:
    """Markdown whose relative links lead to the site's pages; a link to a file of the
    repository that is not a page (a script, a config) becomes its path as code."""

    def replace(match: re.Match) -> str:
        image, text, target, anchor = match.groups()
        resolved = normal(here.parent / target)
        if image or resolved in pages or resolved.suffix in (".png", ".svg", ".jpg"):
            return match.group(0)
        return f"{text} (`{resolved}` in the course's repository)"

    return LINK.sub(replace, markdown)


FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.M | re.S)


def shell_fences(markdown: str) -> str:
    """Python code blocks that hold a shell line (`!...`, as a notebook runs one) marked as
    IPython, which Pygments can colour (plain Python cannot lex the `!`)."""

    def mark(match: re.Match) -> str:
        body = match.group(1)
        shell = any(line.lstrip().startswith("!") for line in body.splitlines())
        return f"```ipython\n{body}```" if shell else match.group(0)

    return FENCE.sub(mark, markdown)


def normal(path: PurePosixPath) -> PurePosixPath:
    """A relative path with `..` and `.` worked out (never above the site's root)."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return PurePosixPath(*parts)
