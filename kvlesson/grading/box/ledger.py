"""The ledger inside the box: every forbidden function that runs from a student's code.

An exercise may forbid package functions; a name is not enough to catch them (another
package function calls them, a name is built at run time, a module of the student's own
calls them). With a ledger (`--ledger FILE`: the exercises' forbidden functions, and the
hashes of the course's own cells), a trace function notes every forbidden function that
starts to run while code a student wrote is on the stack (an answer cell, a cell they added
or changed, a function of theirs called by a test), at any depth and whatever name reached
it, and reports it as a "forbidden" line on the watch's report pipe. The kernel loads this
module as an IPython extension, which turns the ledger on for each cell but the course's
own (they compute the lesson's figures) and off after it.
"""

from __future__ import annotations

import hashlib
import json
import linecache
import os
import sys
import threading
from pathlib import Path

from kvlesson.grading.checks import forbidden

FORBIDDEN_EVENT = "forbidden"  # the report of a forbidden function that ran (not a refusal)


def cell_source_hash(code: str) -> str:
    """How a ledger names one of the course's own cells: the hash of its code as the kernel
    runs it (IPython's reading of its magics), trailing newlines aside."""
    return hashlib.sha256(code.rstrip("\n").encode()).hexdigest()


def install(fd: int, spec: Path) -> None:
    """Watch for the forbidden functions of `spec` (JSON: "forbidden", names; "course", the
    hashes of the course's own code cells; "tests", those of its test cells) while code a
    student wrote runs, in every thread; report each, once per function and place, as a
    "forbidden" line on `fd` that ends with the execution count of the cell that ran it
    (the launcher copies the pipe to the events file on its own time: a report may reach it
    after the grader moved on to the next cell, and is still put on its own)."""
    wanted = json.loads(spec.read_text())
    codes = forbidden.resolve(wanted.get("forbidden", ()))
    if not codes:
        return
    course = frozenset(wanted.get("course", ()))  # the course's own code: not a student's
    watched = frozenset(wanted.get("tests", ()))  # the tests: the course's, but they run theirs
    roots = forbidden.trusted_roots()
    known: dict[str, bool] = {}  # a code file: is it a student's?
    reported: set[tuple[str, str]] = set()
    write, getlines = os.write, linecache.getlines

    def students(filename: str) -> bool:
        if filename not in known:
            # code made by exec ("<string>": a dataclass's __init__) is not a cell; a
            # student's exec is refused by the reading of their cells
            made = filename.startswith("<") and not filename.startswith("<ipython-input-")
            if filename.startswith(roots) or made:
                known[filename] = False
            else:
                lines = getlines(filename)  # a cell's source, as IPython keeps it
                known[filename] = not lines or cell_source_hash("".join(lines)) not in course
        return known[filename]

    def ledger(frame, event, arg) -> None:  # a global trace function: "call" events only
        name = codes.get(frame.f_code)
        if name is None:
            return
        caller = frame.f_back
        while caller is not None:
            where = caller.f_code.co_filename
            if students(where):
                if (name, where) not in reported:
                    reported.add((name, where))
                    line = f"{FORBIDDEN_EVENT}\t{name}\t{caller.f_code.co_name}\t{cell[0]}\n"
                    try:
                        write(fd, line.encode("utf-8", "replace"))
                    except OSError:
                        pass
                return
            caller = caller.f_back

    cell = ["-"]  # the execution count of the cell running, "-" for one kept out of history

    def on(info, count: int) -> None:  # before a cell: watch it, unless the course's own
        cell[0] = str(count) if getattr(info, "store_history", True) else "-"
        code = cell_source_hash(info.raw_cell)
        if code not in course or code in watched:
            threading.settrace(ledger)
            sys.settrace(ledger)

    def off(result) -> None:
        threading.settrace(None)
        sys.settrace(None)

    _LEDGER[:] = [on, off]


_LEDGER: list = []  # the ledger's switches, for the IPython extension below


def load_ipython_extension(ip) -> None:
    """Loaded by the kernel (`--InteractiveShellApp.extensions`) before any cell runs: turn
    the ledger on for each cell a student wrote or changed, and for the tests, and off after
    it (the course's own cells compute the lesson's figures, and are not watched)."""
    if _LEDGER:
        on, off = _LEDGER
        # the cell's execution count, as the kernel's reply will give it to the grader
        ip.events.register("pre_run_cell", lambda info: on(info, ip.execution_count))
        ip.events.register("post_run_cell", off)
