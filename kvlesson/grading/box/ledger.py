"""The ledger inside the box: every forbidden function that runs from a student's code.

An exercise may forbid package functions; a name is not enough to catch them (another
package function calls them, a name is built at run time, a module of the student's own
calls them). The box builds each assignment's ledger from the instructor's notebooks
(`spec`: the exercises' forbidden functions, the hashes of the course's own cells and of
its test cells, and the modules the course's cells import, which the zygote loads before
any kernel). In the kernel, a trace function notes every forbidden function that starts to
run while code a student wrote is on the stack (an answer cell, a cell they added or
changed, a function of theirs called by a test), at any depth and whatever name reached it,
and reports it as a "forbidden" line on the watch's report pipe. The kernel's extension
(`kvlesson.grading.box.watch.load_ipython_extension`) turns the ledger on for each cell but
the course's own (they compute the lesson's figures) and off after it.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import sys
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kvlesson.grading.checks import forbidden
from kvlesson.grading.course.notebooks import imported_modules, meta, python_of

if TYPE_CHECKING:
    from nbformat import NotebookNode

FORBIDDEN_EVENT = "forbidden"  # the report of a forbidden function that ran (not a refusal)
# Loaded in every graded kernel before any cell: what `%matplotlib inline` and a chart need.
ALWAYS_PRELOADED = ("matplotlib.pyplot", "matplotlib_inline.backend_inline")


def cell_source_hash(code: str) -> str:
    """How a ledger names one of the course's own cells: the hash of its code as the kernel
    runs it (IPython's reading of its magics), trailing newlines aside."""
    return hashlib.sha256(code.rstrip("\n").encode()).hexdigest()


def spec(instructor: Iterable[NotebookNode], names: Iterable[str]) -> dict:
    """An assignment's ledger, from its instructor notebooks: the forbidden functions
    `names`; the hashes of the course's own code cells (answer cells excepted: they are the
    student's), whose calls are not a student's, and of its test cells, which run the
    student's code and so are watched (each as IPython hands it to the kernel, and as it
    runs); and the modules the course's own cells import ("preload")."""
    course, tests, modules = [], [], list(ALWAYS_PRELOADED)
    for nb in instructor:
        for cell in nb.cells:
            if cell.cell_type != "code" or meta(cell).get("solution"):
                continue
            hashes = [cell_source_hash(cell.source), cell_source_hash(python_of(cell.source))]
            course += hashes
            if meta(cell).get("grade"):
                tests += hashes
            modules += imported_modules(cell.source)
    return {
        "forbidden": sorted(set(names)),
        "course": course,
        "tests": tests,
        "preload": list(dict.fromkeys(modules)),
    }


def install(fd: int, wanted: dict) -> None:
    """Watch for the forbidden functions of the ledger `wanted` (`spec`) while code a
    student wrote runs, in every thread; report each, once per function and place, as a
    "forbidden" line on `fd` that ends with the execution count of the cell that ran it
    (the launcher copies the pipe to the events file on its own time: a report may reach it
    after the grader moved on to the next cell, and is still put on its own)."""
    codes = forbidden.resolve(wanted.get("forbidden", ()))
    if not codes:
        return
    course = frozenset(wanted.get("course", ()))  # the course's own code: not a student's
    watched = frozenset(wanted.get("tests", ()))  # the tests: the course's, but they run theirs
    cell = ["-"]  # the execution count of the cell running, "-" for one kept out of history
    counted = [0]  # cells run into history so far: the kernel's execution count of each
    trace = _trace(fd, codes, _students(course), cell)

    def on(info) -> None:  # before a cell: watch it, unless the course's own
        # counted here, as the kernel's reply counts (IPython 9 counts a cell up before its
        # pre_run_cell event, earlier ones after it: its own counter is one off in one)
        if getattr(info, "store_history", True):
            counted[0] += 1
            cell[0] = str(counted[0])
        else:
            cell[0] = "-"
        code = cell_source_hash(info.raw_cell)
        if code not in course or code in watched:
            threading.settrace(trace)
            sys.settrace(trace)

    def off(result) -> None:
        threading.settrace(None)
        sys.settrace(None)

    _LEDGER[:] = [on, off]


def _students(course: frozenset[str]):
    """Whether a code file is a student's: not the course's package or Python's, not code
    made by exec, not one of the course's own cells (by hash); remembered per file."""
    roots, known, getlines = forbidden.trusted_roots(), {}, linecache.getlines

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

    return students


def _trace(fd: int, codes: dict, students, cell: list[str]):
    """The global trace function ("call" events only): a forbidden function with a
    student's code among its callers is reported once per function and place."""
    reported: set[tuple[str, str]] = set()
    write = os.write

    def ledger(frame, event, arg) -> None:
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

    return ledger


_LEDGER: list = []  # the ledger's switches, for the kernel's extension


def switch(ip) -> None:
    """Turn the ledger on before each cell a student wrote or changed, and the tests, and
    off after it (the course's own cells compute the lesson's figures, and are not
    watched); nothing when this kernel keeps no ledger."""
    if _LEDGER:
        on, off = _LEDGER
        ip.events.register("pre_run_cell", on)
        ip.events.register("post_run_cell", off)
