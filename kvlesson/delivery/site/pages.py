"""A notebook's page: the student's text with the instructor notebook's outputs, never an answer.

The text and code come from the release (`notebooks/`): nbgrader has replaced each solution
and removed the hidden tests. The outputs come from `solutions/`, executed by the build, and
only on the cells that are neither answer cells nor self-check cells (nbgrader's `solution`,
`grade` or `task`): there, the outputs hold the answers and the graders' record lines. Cells
are matched by index, and every other cell's source must be the same on both sides.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import nbformat

from kvlesson.authoring.stamp_places import LOADER  # the set-up cell's stamps: not for reading

RECORD = "KVLESSON-MARK"  # a hidden test's record line
# A relative Markdown link or image: [text](target) or ![alt](target), without a scheme.
LINK = re.compile(r"(!?)\[([^\]]*)\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s#]+)(#[^)\s]*)?\)")


class Mismatch(ValueError):
    """The release and the instructor notebook do not hold the same cells."""


def role(cell) -> str:
    """'answer', 'test' or 'text': what nbgrader makes of a cell (its metadata only)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("solution"):
        return "answer"
    if meta.get("grade") or meta.get("task"):
        return "test"
    return "text"


@dataclass(frozen=True)
class PageStats:
    """What a page shows: cells, outputs copied from solutions/, cells shown without output."""

    cells: int
    outputs: int
    withheld: int


def merged(
    release: nbformat.NotebookNode, solution: nbformat.NotebookNode, name: str
) -> tuple[nbformat.NotebookNode, PageStats]:
    """The release with the solution's outputs on its text cells (see the module)."""
    if len(release.cells) != len(solution.cells):
        raise Mismatch(
            f"{name}: the release has {len(release.cells)} cells, solutions/ "
            f"{len(solution.cells)}: run kvlesson build"
        )
    page = copy.deepcopy(release)
    outputs = withheld = 0
    for index, (cell, executed) in enumerate(zip(page.cells, solution.cells)):
        kind = role(cell)
        if cell.cell_type != executed.cell_type or kind != role(executed):
            raise Mismatch(
                f"{name}: cell {index} is a {cell.cell_type} {kind} cell in the "
                f"release, a {executed.cell_type} {role(executed)} one in solutions/"
            )
        if kind == "text" and cell.source != executed.source:
            raise Mismatch(
                f"{name}: cell {index} differs between the release and solutions/: "
                "run kvlesson build"
            )
        cell.metadata.pop("nbgrader", None)
        if cell.cell_type != "code":
            continue
        if kind == "text":
            cell.outputs = [without_records(o) for o in copy.deepcopy(executed.outputs)]
            cell.execution_count = executed.execution_count
            outputs += len(cell.outputs)
        else:
            cell.outputs, cell.execution_count = [], None
            withheld += 1
        if LOADER in cell.source:
            tags = cell.metadata.setdefault("tags", [])
            tags.append("remove-input")
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
