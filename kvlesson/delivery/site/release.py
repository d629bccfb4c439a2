"""The notebook a page offers to download: the course's release, never a student's work.

`notebooks/` is nbgrader's release of `solutions/`, but in a copy of the course a student
works in, it holds their answers (and JupyterLab's trailing empty cell). The website offers
the working copy only when it is exactly the release of the instructor notebook: the same
cells, each answer still nbgrader's stub, each self-check without its hidden tests. Otherwise
it offers the release as committed to git, when that one is, and says so; otherwise no file,
with what differs. Nothing here writes to `notebooks/` or tells anyone to rebuild it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import nbformat

from kvlesson.delivery.site.pages import cleared, role, without_hidden_tests

CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"  # nbgrader_config.py's
TEXT_STUB = "YOUR ANSWER HERE"


@dataclass(frozen=True)
class Offered:
    """The notebook's text to download (None: no copy), and what the build should say."""

    text: str | None
    note: str = ""


def difference(release: nbformat.NotebookNode, solution: nbformat.NotebookNode) -> str | None:
    """How `release` differs from nbgrader's release of `solution`, in words; None if not."""
    if len(release.cells) != len(solution.cells):
        extra = release.cells[len(solution.cells) :]
        empty = extra and all(not cell.source.strip() for cell in extra)
        return f"it has {len(release.cells)} cells where the release has {len(solution.cells)}" + (
            " (an empty cell added at its end, as JupyterLab adds one)" if empty else ""
        )
    for index, (cell, source) in enumerate(zip(release.cells, solution.cells)):
        kind = role(source)
        if cell.cell_type != source.cell_type or role(cell) != kind:
            return f"cell {index} is a {cell.cell_type} {role(cell)} cell, not a {kind} one"
        if kind == "answer":
            expected = cleared(source.source, source.cell_type, CODE_STUB, TEXT_STUB)
        elif kind == "test":
            expected = without_hidden_tests(source.source)
        else:
            expected = source.source
        if cell.source != expected:
            what = "holds an answer" if kind == "answer" else "was changed"
            return f"cell {index} ({kind}) {what}"
    return None


def committed(root: Path, path: PurePosixPath) -> str | None:
    """The file at `path` as committed in the repository at `root` (HEAD); None when `root`
    is no git repository, git is missing or the file is not committed."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "show", f"HEAD:{path}"],
            capture_output=True,
            text=True,
        )
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def offered(root: Path, path: PurePosixPath, solution: nbformat.NotebookNode) -> Offered:
    """The release of `solution` to offer for download, read from `root`/`path` or from git."""
    working = (root / path).read_text() if (root / path).is_file() else None
    differs = "it is missing"
    if working is not None:
        differs = difference(nbformat.reads(working, as_version=4), solution)
        if differs is None:
            return Offered(working)
    said = f"{path} is not the course's release of solutions/ ({differs}; someone's work?)"
    text = committed(root, path)
    if text is not None and difference(nbformat.reads(text, as_version=4), solution) is None:
        return Offered(text, f"{said}: its page offers the release as committed to git.")
    return Offered(
        None,
        f"{said}: its page offers no download. Build the website from a copy of the course "
        "that nobody has worked in to offer it; nothing here changes your notebooks.",
    )
