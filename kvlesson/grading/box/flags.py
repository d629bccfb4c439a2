"""Flags: what the box saw a submission do, stored in its autograded notebook.

The grader writes them into the notebook's metadata (`kvlesson_box`), out of reach of the
kernel; `python -m kvlesson.grade` reads them back, zeroes a notebook that tampered, and
shows every flag to the instructor.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import nbformat

METADATA_KEY = "kvlesson_box"
# The kinds of flag: a cell that killed its kernel, a cell that could not be interrupted
# (both cost that cell only), a refused or reported operation (costs the notebook), and a
# forbidden function that ran from a student's code (costs the exercises that forbid it).
LOST, STUCK, TAMPER = "killed its kernel", "could not be interrupted", "tampering"
FORBIDDEN = "ran a forbidden function"
KINDS = (LOST, STUCK, TAMPER, FORBIDDEN)


@dataclass(frozen=True)
class BoxFlag:
    """One thing the box saw: the cell (its position and nbgrader grade id, if any), the
    kind of flag (one of KINDS) and the reason in words."""
    cell: int
    grade_id: str | None
    kind: str
    reason: str
    function: str = ""  # for FORBIDDEN: the qualified name of the function that ran

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind of flag {self.kind!r}: one of {KINDS}")


def grade_id_of(cell: nbformat.NotebookNode) -> str | None:
    """The nbgrader grade id of a cell, or None for a cell nbgrader does not track."""
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def write_flags(nb: nbformat.NotebookNode, flags: list[BoxFlag], boxed: bool) -> None:
    """Store the flags (and whether the kernel ran in the box) in the notebook's metadata."""
    nb.metadata[METADATA_KEY] = {"boxed": boxed, "flags": [asdict(flag) for flag in flags]}


def read_flags(nb: nbformat.NotebookNode) -> tuple[bool, list[BoxFlag]]:
    """Whether the notebook was graded in the box, and the flags the box stored in it."""
    stored = nb.metadata.get(METADATA_KEY)
    if stored is None:
        return False, []
    return bool(stored.get("boxed")), [BoxFlag(**flag) for flag in stored.get("flags", [])]
