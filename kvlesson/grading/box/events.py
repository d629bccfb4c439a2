"""What the watch reported, as the box's flags on the cells that ran it.

A kernel's launcher copies the watch's and the ledger's report lines into an events file
outside the box (`kvlesson.grading.box.zygote`); after each cell the grader reads what came
since it last looked (`Events.since`) and flags it: a refusal or a write outside the working
copy on the cell that was running (tampering), a forbidden function on the cell that ran it
(by the execution count the ledger gave, `ran_in`).
"""

from __future__ import annotations

from pathlib import Path

from nbformat import NotebookNode

from kvlesson.grading.box.flags import box_flag
from kvlesson.grading.box.ledger import FORBIDDEN_EVENT
from kvlesson.grading.course.results import FORBIDDEN, TAMPERING, Flag


class Events:
    """One kernel's events file, read a complete line at a time."""

    def __init__(self, path: Path):
        self.path, self.read = path, 0
        path.touch()

    def since(self) -> list[str]:
        """The complete lines that came since the last look."""
        with self.path.open("rb") as log:
            log.seek(self.read)
            lines = log.read().decode("utf-8", "replace").splitlines(keepends=True)
        complete = [line for line in lines if line.endswith("\n")]
        self.read += sum(len(line.encode()) for line in complete)
        return complete


def flags_of(lines: list[str], nb: NotebookNode, index: int, counts: dict[str, int]) -> list[Flag]:
    """The flags of report `lines` read after cell `index` ran (`counts`: this kernel's
    execution counts, each the latest cell it was given to)."""
    flags = []
    for line in lines:
        event, reason, detail = (line.rstrip("\n").split("\t", 2) + ["", ""])[:3]
        if event == FORBIDDEN_EVENT:  # reason: the function, detail: where it ran from
            detail, _, count = detail.partition("\t")
            if count == "-":  # a cell run again, out of history: flagged already
                continue
            ran = ran_in(count, index, counts)
            function = reason.rsplit(".", 1)[-1]
            flags.append(
                box_flag(nb, ran, FORBIDDEN, f"cell {ran} ran {function} (from {detail})", reason)
            )
            continue
        flags.append(
            box_flag(nb, index, TAMPERING, f"cell {index} {reason} ({event} {detail})".strip())
        )
    return flags


def ran_in(count: str, index: int, counts: dict[str, int]) -> int:
    """The cell a forbidden call reported with execution count `count` ran in: the latest
    cell the kernel gave that count, when it is this one or one before it (a report can
    reach the grader a cell late); else the cell that just ran, `index`."""
    ran = counts.get(count)
    return ran if ran is not None and ran <= index else index
