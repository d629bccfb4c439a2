"""The launcher: what a boxed kernelspec runs, outside the box.

    python -I -m kvlesson.grading.box --course ROOT --work DIR --connections DIR \\
        --events FILE [--hide PATH ...] [--ledger FILE] [--package COPY] [--font-cache FILE] \\
        [limits] -- -f CONNECTION_FILE ...

It opens the report pipe, starts the kernel in bwrap with the watch (kvlesson.grading.box.watch)
installed, and copies each report line into FILE, a file outside the box that the grader
reads. If the pipe closes while the kernel still runs, a cell closed it: that is reported
too. The box gets its limits (kvlesson.grading.box.limits) before it starts. The launcher
runs in isolated mode, in the working copy, and dies with the grader (so does the box);
its exit code is the kernel's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

from kvlesson.grading.box.limits import Limits, ProcessCap, apply, threads_of
from kvlesson.grading.box.walls import Walls, bwrap_command
from kvlesson.grading.course import isolated
from kvlesson.grading.course.isolated import die_with_parent

CLOSED_CHANNEL = "channel\tcloses the report channel\tthe kernel was still running\n"
EXIT_WAIT = 2.0  # seconds a kernel that closed its end of the pipe has to exit


def kernel_command(
    report_fd: int, walls: Walls, kernel_args: list[str], ledger: Path | None = None
) -> list[str]:
    """The command run inside the box: ipykernel behind the watch, in isolated mode."""
    folders = [
        arg
        for kind, paths in (("--scratch", walls.scratch), ("--hidden", walls.hidden))
        for path in paths
        for arg in (kind, str(path))
    ]
    return [
        *isolated.python("kvlesson.grading.box.watch"),
        "--fd",
        str(report_fd),
        "--work",
        str(walls.work),
        *folders,
        *(["--ledger", str(ledger)] if ledger else []),
        *kernel_args,
    ]


def run(
    walls: Walls, events: Path, kernel_args: list[str], limits: Limits, ledger: Path | None = None
) -> int:
    """Run the boxed kernel, within `limits`, until it exits, copying its reports into
    `events`."""
    read_end, write_end = os.pipe()
    command = bwrap_command(walls, kernel_command(write_end, walls, kernel_args, ledger))
    cap = ProcessCap(limits.processes, f"box-{os.getpid()}")
    tasks = threads_of(os.geteuid())
    with events.open("ab", buffering=0) as log:
        try:
            kernel = subprocess.Popen(
                command,
                pass_fds=(write_end,),
                cwd=walls.connections,
                preexec_fn=lambda: apply(limits, cap, tasks),
            )
        finally:
            os.close(write_end)
        with os.fdopen(read_end, "rb", buffering=0) as reports:
            for line in iter(reports.readline, b""):
                log.write(line)
        try:
            return kernel.wait(timeout=EXIT_WAIT)
        except subprocess.TimeoutExpired:
            log.write(CLOSED_CHANNEL.encode())
            return kernel.wait()
        finally:
            cap.close()


def main(argv: list[str] | None = None) -> int:
    """Start one boxed kernel for the grader; its exit code."""
    parser = argparse.ArgumentParser(prog="python -m kvlesson.grading.box", allow_abbrev=False)
    parser.add_argument("--course", type=Path, required=True, help="the course root (hidden)")
    parser.add_argument("--work", type=Path, required=True, help="the submission's working copy")
    parser.add_argument(
        "--connections",
        type=Path,
        required=True,
        help="the folder of the kernel's connection file and sockets",
    )
    parser.add_argument("--events", type=Path, required=True, help="where reports go")
    parser.add_argument(
        "--hide",
        type=Path,
        action="append",
        default=[],
        help="another folder to hide (the exchange)",
    )
    parser.add_argument(
        "--ledger",
        type=Path,
        help="forbidden functions to watch for, and the "
        "course's own cells (JSON, in the connection folder)",
    )
    parser.add_argument(
        "--package",
        type=Path,
        help="a copy of kvlesson to put in place of "
        "every kvlesson on the path (kvlesson.grading.box.withheld)",
    )
    parser.add_argument(
        "--font-cache",
        type=Path,
        help="matplotlib's list of the machine's "
        "fonts, shown where the kernel's matplotlib looks (kvlesson.grading."
        "box.fonts)",
    )
    defaults = Limits()
    parser.add_argument(
        "--memory",
        type=int,
        default=defaults.memory_bytes,
        help="bytes of address space each process may take",
    )
    parser.add_argument(
        "--processes", type=int, default=defaults.processes, help="processes the box may run"
    )
    parser.add_argument(
        "--disk",
        type=int,
        default=defaults.disk_bytes,
        help="bytes each writable folder of the box may hold",
    )
    parser.add_argument(
        "kernel_args", nargs=argparse.REMAINDER, help="after --: ipykernel's arguments"
    )
    args = parser.parse_args(argv)
    kernel_args = args.kernel_args[1:] if args.kernel_args[:1] == ["--"] else args.kernel_args
    die_with_parent()
    limits = Limits(args.memory, args.processes, args.disk)
    walls = Walls.for_submission(
        args.course,
        args.work,
        args.connections,
        tuple(args.hide),
        limits.disk_bytes,
        args.package,
        args.font_cache,
    )
    return run(walls, args.events, kernel_args, limits, args.ledger)
