"""The watch inside the box: an audit hook installed before any student code runs.

The zygote (`kvlesson.grading.box.zygote`) imports what every notebook of the course
imports (every name of kvlesson, matplotlib's fonts) and what the course's own cells of the
assignment import (the ledger's "preload": so the set-up cell takes well under a second
however busy the machine, and no cell timeout hangs on it); each kernel it forks installs
a `sys.addaudithook` hook (Python offers no way to remove one) and the ledger, then starts
ipykernel (`start_kernel`).

The kernel's import path is decided here, the same with every release of IPython: the
standard library, the installed packages and kvlesson, never the working copy (IPython
9.7 and later leave it off under `python -I`, earlier ones put it first unless told
`ignore_cwd`): a module a cell writes there cannot be imported, in any environment.

When code from a notebook cell (any
frame outside Python's own library, the installed packages and kvlesson) is on the stack,
the hook refuses what an answer never needs: starting a process, loading C code with
ctypes, opening a network socket, adding another audit hook. It reports each refusal, and
every file the cell writes into a hidden folder or outside its working copy and the box's
scratch folders (its empty /tmp and home), as one line on file descriptor N, a pipe whose
other end the launcher outside the box reads. The walls do not depend on it: it is
evidence for the instructor, and a second lock on the doors the walls already close.

With forbidden functions in its ledger, the kernel also keeps the ledger
(kvlesson.grading.box.ledger); cell code may not set another trace or profile function.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from kvlesson.grading.box import ledger
from kvlesson.grading.checks import forbidden

# Audit events (https://docs.python.org/3/library/audit_events.html) refused to cell code.
REFUSED = {
    "subprocess.Popen": "starts a process",
    "os.system": "starts a process",
    "os.exec": "starts a process",
    "os.posix_spawn": "starts a process",
    "os.spawn": "starts a process",
    "os.fork": "starts a process",
    "os.forkpty": "starts a process",
    "os.kill": "sends a signal",
    "os.killpg": "sends a signal",
    "ctypes.dlopen": "loads C code (ctypes)",
    "ctypes.dlsym": "loads C code (ctypes)",
    "ctypes.cdata": "reads raw memory (ctypes)",
    "socket.connect": "opens a network connection",
    "socket.bind": "opens a network socket",
    "socket.sendto": "opens a network connection",
    "sys.addaudithook": "adds an audit hook",
    "sys.setprofile": "sets a profile function",
    "sys.settrace": "sets a trace function",
}
REPORTED = {"open": "writes a file outside its working copy"}
WRITE_MODES = frozenset("wax+")
LINE_LIMIT = 400  # characters of one report line (a pipe write up to 4,096 bytes is atomic)


class Refused(PermissionError):
    """What cell code gets when the box refuses an operation."""


def prefixes(paths: list[Path]) -> tuple[str, ...]:
    return tuple(str(path.resolve()) + os.sep for path in paths)


def install(fd: int, work: Path, scratch: list[Path], hidden: list[Path]) -> None:
    """Install the hook, reporting on `fd`. A write is not reported in the working copy
    `work`, nor in a `scratch` folder unless it lies in a `hidden` one (the course root may
    lie under /tmp). Everything the hook calls is bound now, so a cell that rebinds os,
    sys or builtins later does not change what it does."""
    roots, in_work = forbidden.trusted_roots(), prefixes([work])
    in_hidden, in_scratch = prefixes(hidden), prefixes(scratch) + ("/dev/",)
    write, getframe, realpath = os.write, sys._getframe, os.path.realpath
    refused, reported, write_modes = dict(REFUSED), dict(REPORTED), WRITE_MODES
    write_flags, frozen = os.O_WRONLY | os.O_RDWR, "<frozen "
    is_a, text, number, raw, refuse = isinstance, str, int, bytes, Refused

    def from_a_cell(depth: int = 2, whole_stack: bool = True) -> bool:
        frame = getframe(depth)
        if not whole_stack:  # who called the function that raised the event
            name = frame.f_code.co_filename if frame is not None else ""
            return bool(name) and not name.startswith(roots) and not name.startswith(frozen)
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith(roots) and not name.startswith(frozen):
                return True
            frame = frame.f_back
        return False

    def report(event: str, reason: str, detail: str) -> None:
        line = f"{event}\t{reason}\t{detail}"[:LINE_LIMIT].replace("\n", " ") + "\n"
        try:
            write(fd, line.encode("utf-8", "replace"))
        except OSError:
            raise refuse("kvlesson box: the report channel was closed") from None

    def hook(event: str, args: tuple) -> None:
        if event in refused:
            # kvlesson's own probes set a profile function (chaining to the ledger's): for
            # these two events only the code that called them counts
            caller_only = event in ("sys.setprofile", "sys.settrace")
            if from_a_cell(2, whole_stack=not caller_only):
                detail = " ".join(text(a) for a in args if is_a(a, (text, number, raw)))
                report(event, refused[event], detail)
                raise refuse(f"kvlesson box: a notebook cell may not do this ({event})")
        elif event in reported:
            path, mode = args[0], args[1]
            writes = is_a(mode, text) and not write_modes.isdisjoint(mode)
            writes = writes or (is_a(args[2], number) and args[2] & write_flags)
            if writes and is_a(path, (text, raw)) and from_a_cell():
                full = realpath(path if is_a(path, text) else path.decode("utf-8", "replace"))
                harmless = full.startswith(in_work) or (
                    full.startswith(in_scratch) and not full.startswith(in_hidden)
                )
                if not harmless:
                    report(event, reported[event], full)

    sys.addaudithook(hook)


def start_kernel(setup: dict, request: dict, fd: int, connection: str, ready) -> None:
    """In a forked kernel, before any cell: the import path, the ledger of this submission
    (`request["ledger"]`), the hook reporting on `fd`, then ipykernel on `connection`, with
    the kernel's settings loaded as an IPython extension; `ready()` once its sockets are
    bound, before it serves any request."""
    from ipykernel.kernelapp import IPKernelApp

    work = Path(setup["work"])
    import_path(work)
    reseed()
    _SETTINGS["draw"] = request.get("draw", True)
    ledger.install(fd, request["ledger"])
    install(fd, work, [Path(p) for p in setup["scratch"]], [Path(p) for p in setup["hidden"]])
    app = IPKernelApp.instance()
    app.initialize(
        [
            "-f",
            connection,
            "--InteractiveShellApp.ignore_cwd=True",
            f"--InteractiveShellApp.extensions=['{__name__}']",
            # nbgrader's Execute gives a Python kernel the same: no history file to write
            "--HistoryManager.hist_file=:memory:",
        ]
    )
    ready()
    app.start()


_SETTINGS: dict = {"draw": True}  # this kernel's: whether figures are drawn
FIGURES = ("image/png", "image/jpeg", "image/svg+xml", "application/pdf")


def load_ipython_extension(ip) -> None:
    """Loaded by the kernel before any cell: the ledger switched on for each cell a student
    wrote or changed and for the tests (`kvlesson.grading.box.ledger`), and, for a run
    whose outputs nobody keeps (the second run), no figure drawn."""
    ledger.switch(ip)
    if not _SETTINGS["draw"]:
        for kind in FIGURES:
            ip.display_formatter.formatters[kind].enabled = False


def reseed() -> None:
    """A forked kernel's random numbers its own: Python's `random` reseeds itself in a fork,
    numpy's global generator (made once, in the zygote) is reseeded here."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def import_path(work: Path) -> None:
    """The kernel's import path without the current folder and the working copy (isolated
    mode leaves both off already; this keeps it so whatever started the kernel)."""
    folder = str(work.resolve())
    sys.path[:] = [
        entry
        for entry in sys.path
        if entry
        and entry != "."
        and os.path.realpath(entry) != folder
        and not os.path.realpath(entry).startswith(folder + os.sep)
    ]


def preload_package() -> None:
    """Load every name of kvlesson's surface (which the package loads on first use), so that
    no cell pays for an import of the model's wings, traced by the ledger, within its
    timeout."""
    import kvlesson

    for name in kvlesson.__all__:
        getattr(kvlesson, name)


def preload(modules: list[str]) -> None:
    """Import the modules the course's own cells import, before any cell runs; one that
    is not installed is left to its cell (which then says so)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
