"""The watch inside the box: an audit hook installed before any student code runs.

    python -I -m kvlesson.grading.box.watch --fd N --work DIR [--scratch DIR] [--hidden DIR] \\
        [--ledger FILE] -f FILE

imports what every notebook of the course imports (every name of kvlesson, matplotlib's
fonts, whose first load runs `fc-list` and writes a cache) and what the course's own cells of this
notebook import (the ledger file's "preload": so the set-up cell takes well under a second
however busy the machine, and no cell timeout hangs on it), installs a `sys.addaudithook`
hook (Python offers no way to remove one), then starts ipykernel.

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

With `--ledger`, the kernel also keeps the ledger of forbidden functions
(kvlesson.grading.box.ledger); cell code may not set another trace or profile function.
"""

from __future__ import annotations

import argparse
import importlib
import json
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


def main(argv: list[str] | None = None) -> None:
    """Install the hook, then run ipykernel with the remaining arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m kvlesson.grading.box.watch", allow_abbrev=False
    )
    parser.add_argument("--fd", type=int, required=True, help="the report pipe")
    parser.add_argument("--work", type=Path, required=True, help="the working copy")
    parser.add_argument(
        "--scratch",
        type=Path,
        action="append",
        default=[],
        help="an emptied, writable folder of the box",
    )
    parser.add_argument(
        "--hidden", type=Path, action="append", default=[], help="a hidden folder of the box"
    )
    parser.add_argument("--ledger", type=Path, help="forbidden functions to watch for (JSON)")
    args, kernel_args = parser.parse_known_args(argv)
    import matplotlib.font_manager  # noqa: F401 - its first load, before any cell
    from ipykernel import kernelapp

    import_path(args.work)
    preload_package()
    if args.ledger is not None:
        preload(json.loads(args.ledger.read_text()).get("preload", ()))
        ledger.install(args.fd, args.ledger)
        kernel_args = [*kernel_args, f"--InteractiveShellApp.extensions=['{ledger.__name__}']"]
    install(args.fd, args.work, args.scratch, args.hidden)

    kernelapp.launch_new_instance(argv=[*kernel_args, "--InteractiveShellApp.ignore_cwd=True"])


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


if __name__ == "__main__":
    main()
