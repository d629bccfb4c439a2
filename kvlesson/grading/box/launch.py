"""The launcher: what a boxed kernelspec runs, outside the box.

    python -m kvlesson.box --course ROOT --work DIR --connections DIR --events FILE \\
        [--hide PATH ...] -- -f CONNECTION_FILE [kernel arguments]

It opens the report pipe, starts the kernel in bwrap with the watch (kvlesson.grading.box.watch)
installed, and copies each report line into FILE, a file outside the box that the grader
reads. If the pipe closes while the kernel still runs, a cell closed it: that is reported
too. The launcher dies with the grader (so does the box), and its exit code is the kernel's.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

from kvlesson.grading.box.walls import Walls, bwrap_command

PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies
CLOSED_CHANNEL = "channel\tcloses the report channel\tthe kernel was still running\n"
EXIT_WAIT = 2.0  # seconds a kernel that closed its end of the pipe has to exit


def die_with_parent() -> None:
    """Ask Linux to kill this launcher when the grader that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def kernel_command(report_fd: int, walls: Walls, kernel_args: list[str]) -> list[str]:
    """The command run inside the box: ipykernel behind the watch."""
    folders = [arg for kind, paths in (("--scratch", walls.scratch), ("--hidden", walls.hidden))
               for path in paths for arg in (kind, str(path))]
    return [sys.executable, "-m", "kvlesson.grading.box.watch", "--fd", str(report_fd),
            "--work", str(walls.work), *folders, *kernel_args]


def run(walls: Walls, events: Path, kernel_args: list[str]) -> int:
    """Run the boxed kernel until it exits, copying its reports into `events`."""
    read_end, write_end = os.pipe()
    command = bwrap_command(walls, kernel_command(write_end, walls, kernel_args))
    with events.open("ab", buffering=0) as log:
        kernel = subprocess.Popen(command, pass_fds=(write_end,))
        os.close(write_end)
        with os.fdopen(read_end, "rb", buffering=0) as reports:
            for line in iter(reports.readline, b""):
                log.write(line)
        try:
            return kernel.wait(timeout=EXIT_WAIT)
        except subprocess.TimeoutExpired:
            log.write(CLOSED_CHANNEL.encode())
            return kernel.wait()


def main(argv: list[str] | None = None) -> int:
    """Start one boxed kernel for the grader; its exit code."""
    parser = argparse.ArgumentParser(prog="python -m kvlesson.box", allow_abbrev=False)
    parser.add_argument("--course", type=Path, required=True, help="the course root (hidden)")
    parser.add_argument("--work", type=Path, required=True, help="the submission's working copy")
    parser.add_argument("--connections", type=Path, required=True,
                        help="the folder of the kernel's connection file and sockets")
    parser.add_argument("--events", type=Path, required=True, help="where reports go")
    parser.add_argument("--hide", type=Path, action="append", default=[],
                        help="another folder to hide (the exchange)")
    parser.add_argument("kernel_args", nargs=argparse.REMAINDER,
                        help="after --: ipykernel's arguments")
    args = parser.parse_args(argv)
    kernel_args = args.kernel_args[1:] if args.kernel_args[:1] == ["--"] else args.kernel_args
    die_with_parent()
    walls = Walls.for_submission(args.course, args.work, args.connections, tuple(args.hide))
    return run(walls, args.events, kernel_args)
