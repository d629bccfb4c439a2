"""Flags: what the box saw a submission do, stored in its autograded notebook.

The grader writes them into the notebook's metadata (`kvlesson_box`), out of reach of the
kernel, as `kvlesson.grading.course.results.Flag`s in their serialised form; the worker
reads them back for the marking, which zeroes a notebook that tampered, and shows every
flag to the instructor.
"""

from __future__ import annotations

from dataclasses import asdict

import nbformat

from kvlesson.grading.course.notebooks import grade_id_of
from kvlesson.grading.course.results import Flag, flag_from

METADATA_KEY = "kvlesson_box"


def box_flag(
    nb: nbformat.NotebookNode, index: int, kind: str, reason: str, function: str = ""
) -> Flag:
    """A flag of the box's on cell `index` of `nb` (its grade id, if nbgrader tracks it)."""
    return Flag(
        reason, kind, cell=grade_id_of(nb.cells[index]) or "", index=index, function=function
    )


def write_flags(nb: nbformat.NotebookNode, flags: list[Flag], boxed: bool) -> None:
    """Store the flags (and whether the kernel ran in the box) in the notebook's metadata."""
    nb.metadata[METADATA_KEY] = {"boxed": boxed, "flags": [asdict(flag) for flag in flags]}


def read_flags(nb: nbformat.NotebookNode) -> tuple[bool, list[Flag]]:
    """Whether the notebook was graded in the box, and the flags the box stored in it."""
    stored = nb.metadata.get(METADATA_KEY)
    if stored is None:
        return False, []
    return bool(stored.get("boxed")), [flag_from(flag) for flag in stored.get("flags", [])]
