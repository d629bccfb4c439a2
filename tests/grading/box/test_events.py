"""The watch's reports as flags (kvlesson.grading.box.events): each on the cell that ran it.

The launcher copies the watch's reports to the events file on its own time, so the grader
may read a report only after the next cell ran; a forbidden call carries the execution
count of the cell that ran it, and a new kernel counts from 1 again.
"""

from __future__ import annotations

import nbformat

from kvlesson.grading.box.events import Events, flags_of, ran_in
from kvlesson.grading.course.results import FORBIDDEN, TAMPERING


def test_a_forbidden_call_reported_a_cell_late_is_put_on_the_cell_that_ran_it():
    """The launcher copies the watch's reports to the events file on its own time, so the
    grader may read a report only after the next cell ran (Q1's answer flagged on its test
    cell, which feeds one exercise, not both: a cheat's mark changed from run to run). A
    report carries the execution count of the cell that ran it."""
    counts = {"5": 4, "6": 6}  # the answer cell (index 4) had count 5, its test cell count 6
    assert ran_in("5", 6, counts) == 4  # read late, while cell 6 is the one that just ran
    assert ran_in("6", 6, counts) == 6
    assert ran_in("9", 6, counts) == 6  # a count no cell had: the cell that just ran
    assert ran_in("", 6, counts) == 6  # a report without a count
    assert ran_in("7", 6, {"7": 8}) == 6  # never a cell after the one that just ran


def test_each_report_is_a_flag_on_its_cell_and_a_line_is_read_once_whole(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(str(i)) for i in range(4)])
    events = Events(tmp_path / "events.log")
    with events.path.open("a") as log:
        log.write("forbidden\tkvlesson.memory.floor.memory_parts\t<module>\t2\n")
        log.write("subprocess.Popen\tstarts a process\tpython -c x\n")
        log.write("forbidden\tkvlesson.memory.floor.memory_parts\t<module>\t-\n")
        log.write("socket.connect\topens a network")  # not whole yet: left for later
    flags = flags_of(events.since(), nb, 3, {"2": 1, "3": 3})
    assert [(f.kind, f.index, f.function) for f in flags] == [
        (FORBIDDEN, 1, "kvlesson.memory.floor.memory_parts"),
        (TAMPERING, 3, ""),
    ]
    assert flags[0].reason == "cell 1 ran memory_parts (from <module>)"
    assert flags[1].reason == "cell 3 starts a process (subprocess.Popen python -c x)"
    with events.path.open("a") as log:
        log.write(" connection\t127.0.0.1\n")
    [late] = flags_of(events.since(), nb, 3, {})
    assert late.reason == "cell 3 opens a network connection (socket.connect 127.0.0.1)"
    assert events.since() == []
