"""The box's Execute step: a forbidden call after a kernel was lost is put on its own cell.

A cell that cannot be interrupted costs its kernel; a new kernel runs the cells before it
again, out of history, and goes on, counting executions from 1 again. A forbidden function
a later cell runs is reported with that new count: it must be flagged on the cell that ran
it, never on the cell the lost kernel once gave the same count (the course's set-up cell
here, which would leave the exercise's own cell unflagged). Runs a real kernel in the box.
"""

from __future__ import annotations

import nbformat
import pytest
from traitlets.config import Config

from kvlesson.grading.box import events
from kvlesson.grading.box.execute import BoxedExecute
from kvlesson.grading.box.flags import read_flags
from kvlesson.grading.box.ledger import cell_source_hash
from kvlesson.grading.course.results import FORBIDDEN, STUCK
from support.patience import scaled

pytestmark = pytest.mark.process  # each test runs a kernel in the box

SET_UP = "import kvlesson as kv"
STUCK_CELL = """
import time
while True:
    try:
        time.sleep(0.1)
    except KeyboardInterrupt:
        pass
"""
FORBIDDEN_CELL = "parts = kv.memory_parts(90, kv.H100_80GB, kv.LLAMA_31_8B)"


def boxed_run(tmp_path, cells: list[str], **options) -> list:
    """The box's flags of a notebook of `cells` run in the box, memory_parts forbidden."""
    course, work = tmp_path / "course", tmp_path / "work"
    course.mkdir()
    work.mkdir()
    ledger = {
        "forbidden": ["memory_parts"],
        "course": [cell_source_hash(SET_UP)],
        "tests": [],
        "preload": [],
    }
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    config = Config()
    config.CourseDirectory.root = str(course)
    execute = BoxedExecute(config=config, allow_errors=True, **options)
    execute.ledger = ledger
    nb, _ = execute.preprocess(nb, {"metadata": {"path": str(work)}})
    return read_flags(nb)[1]


def test_a_forbidden_call_reported_late_is_flagged_on_the_cell_that_ran_it(tmp_path, monkeypatch):
    """The launcher copies the ledger's reports on its own time: read a cell late (here
    always), a report is put on the cell that ran it by the execution count it carries,
    which must be the one the kernel gave that cell (IPython 9 counts a cell up before its
    pre_run_cell event: a count read there names the next cell)."""
    held: list[str] = []
    since = events.Events.since

    def late(self):
        out, held[:] = list(held), since(self)
        return out

    monkeypatch.setattr(events.Events, "since", late)
    flags = boxed_run(tmp_path, [SET_UP, "a = 1", FORBIDDEN_CELL, "b = 2", "c = 3"])
    assert [(f.kind, f.index) for f in flags if f.kind == FORBIDDEN] == [(FORBIDDEN, 2)], flags


def test_a_forbidden_call_after_a_lost_kernel_is_flagged_on_the_cell_that_ran_it(tmp_path):
    cells = [SET_UP, "a = 1", "b = 2", STUCK_CELL, FORBIDDEN_CELL]
    flags = boxed_run(tmp_path, cells, timeout=scaled(3), interrupt_on_timeout=True)
    assert [(f.kind, f.index) for f in flags if f.kind == STUCK] == [(STUCK, 3)], flags
    assert [(f.kind, f.index) for f in flags if f.kind == FORBIDDEN] == [(FORBIDDEN, 4)], flags
