"""The zygote: a process in the box that has done a kernel's imports once, and forks one
kernel per submission.

    python -I -m kvlesson.grading.box --socket FD      (in bwrap: kvlesson.grading.box.launch)

Starting a kernel costs about 1.1 s of a core, nearly all of it imports (matplotlib's fonts,
IPython and zmq, kvlesson's surface, the modules the course's cells import); a fork of a
process that has made them costs a few milliseconds. So a grading worker keeps a zygote
(one per copy of kvlesson: the installed one, and each copy without an exercise's
forbidden functions), which:

* is told its walls, limits and preload once, on its socket, makes the imports, and says
  it is ready; it runs no student code, ever, and reads nothing of a submission;
* for each kernel asked for, forks at once a launcher that leaves the zygote's namespaces
  and puts up the kernel's writable places anew (`kvlesson.grading.box.enter`), then forks
  the kernel, the first process of its own process namespace: it mounts its own /proc,
  locks itself in, installs the watch and the ledger (`kvlesson.grading.box.watch`,
  `ledger`) before any student code, hands the grader a descriptor of itself and of its
  connection folder, and runs ipykernel;
* the launcher copies what the watch reports into the grader's events file and what the
  kernel prints on its own descriptors into the log, each up to a limit, and reports a
  report channel closed while the kernel runs; it dies with the kernel;
* a kernel is never reused: when the grader kills it, its whole process namespace dies with
  it, and its file systems with its mount namespace.

The zygote waits for its launchers (so their CPU time is counted) and ends when the grader
closes its socket.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import sys
import traceback
from pathlib import Path

from kvlesson.grading.box import enter, watch
from kvlesson.grading.box.limits import limit_kernel
from kvlesson.grading.box.messages import receive, send
from kvlesson.grading.box.walls import Mount
from kvlesson.grading.course.isolated import leave

REPORT_BYTES = 4 * 2**20  # what a launcher copies of the watch's reports, at most
OUTPUT_BYTES = 64 * 2**10  # what it copies of the kernel's own output into the log
EXIT_WAIT = 2.0  # seconds a kernel that closed the report channel has to exit
CLOSED_CHANNEL = "channel\tcloses the report channel\tthe kernel was still running\n"
FLOODED = "channel\tfloods the report channel\tmore than {} bytes of reports\n"


def prepare(setup: dict) -> None:
    """Everything a kernel imports before its first cell, once: matplotlib's fonts,
    ipykernel with its debugger, every name of kvlesson, what the course's cells import and
    the code of every forbidden function; then no other process of the account may read
    this one's memory. The debugger's import loads C code (ctypes) and runs `uname -p`:
    done here, before any watch, a kernel's start reports nothing the grader must tell
    from a cell's doing. It starts no thread: a fork copies only the thread that forks."""
    import platform
    import threading

    import matplotlib.font_manager  # noqa: F401 - its first load, before any kernel
    from ipykernel import debugger, kernelapp  # noqa: F401 - the debugger loads debugpy

    from kvlesson.grading.checks import forbidden

    platform.uname().processor  # noqa: B018 - `uname -p`, run once and kept
    watch.preload_package()
    watch.preload(setup["preload"])
    forbidden.catalogue()
    enter.prctl(enter.PR_SET_DUMPABLE, 0)
    if threading.active_count() != 1:
        raise RuntimeError(f"the zygote runs {threading.active_count()} threads: it cannot fork")


def main(argv: list[str] | None = None) -> None:
    """Prepare as the grader says on the socket, then fork a kernel for each request."""
    parser = argparse.ArgumentParser(prog="python -m kvlesson.grading.box", allow_abbrev=False)
    parser.add_argument("--socket", type=int, required=True, help="the grader's socket")
    args = parser.parse_args(argv)
    enter.prctl(enter.PR_SET_PDEATHSIG, signal.SIGKILL)
    grader = socket.socket(fileno=args.socket)
    setup, _ = receive(grader)
    try:
        prepare(setup)
    except Exception:
        send(grader, {"failed": traceback.format_exc(limit=5)})
        raise
    send(grader, {"ready": True})
    while True:
        request, fds = receive(grader)
        if request is None:
            break
        if os.fork() == 0:
            launcher(grader, setup, request, fds)
        for fd in fds:
            os.close(fd)
        reap(block=False)
    reap(block=True)
    leave()  # its kernels gone: nothing left to do


def reap(block: bool) -> None:
    """Wait for the launchers that ended (all of them, with `block`)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def launcher(grader: socket.socket, setup: dict, request: dict, fds: list[int]) -> None:
    """A forked launcher: the kernel's walls, its init forked, its reports copied."""
    code = 1
    try:
        enter.prctl(enter.PR_SET_PDEATHSIG, signal.SIGKILL)
        events, notebook_fds = fds[0], fds[1:]
        enter.leave_the_zygote()
        plan = [Mount(m["kind"], Path(m["target"]), *m["rest"]) for m in setup["fresh"]]
        enter.put_up(plan, Path(setup["work"]), dict(zip(request["notebooks"], notebook_fds)))
        for fd in notebook_fds:
            os.close(fd)
        pipes = {name: os.pipe() for name in ("reports", "output", "status")}
        pid = os.fork()
        if pid == 0:
            os.close(events)
            for name in pipes:
                os.close(pipes[name][0])
            init(grader, setup, request, {n: p[1] for n, p in pipes.items()})
        for name in pipes:
            os.close(pipes[name][1])
        code = copy_until_done(grader, request, pid, events, {n: p[0] for n, p in pipes.items()})
    except BaseException:
        send(grader, {"kernel": request.get("kernel"), "failed": traceback.format_exc(limit=5)})
    finally:
        os._exit(code)


def init(grader: socket.socket, setup: dict, request: dict, pipes: dict[str, int]) -> None:
    """The first process of the kernel's process namespace: its /proc, the kernel forked,
    /proc's settings covered once the kernel has its own user namespace, every capability
    dropped; then it only waits for its processes (orphans included) and ends when the
    kernel ends (the grader kills the kernel), which ends the namespace and everything in
    it. Ending on its own, it has waited for the kernel: the kernel's CPU time is counted
    (Linux drops the times of what a namespace's ending kills)."""
    code = 1
    try:
        enter.prctl(enter.PR_SET_PDEATHSIG, signal.SIGKILL)
        enter.own_proc()
        user_ready, covered = os.pipe(), os.pipe()
        kernel_pid = os.fork()
        if kernel_pid == 0:
            os.close(user_ready[0])
            os.close(covered[1])
            kernel(grader, setup, request, pipes, (user_ready[1], covered[0]))
        grader.close()
        for fd in (user_ready[1], covered[0], *pipes.values()):
            os.close(fd)
        if os.read(user_ready[0], 1):  # the kernel has its own user namespace
            enter.cover_proc()
        enter.drop_capabilities()
        os.close(covered[1])  # go on
        code = wait_for(kernel_pid)
    finally:
        os._exit(code)


def wait_for(kernel_pid: int) -> int:
    """Reap every process of the namespace until the kernel ends; its exit code."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == kernel_pid:
            return os.waitstatus_to_exitcode(status) & 0xFF


def copy_until_done(
    grader: socket.socket, request: dict, pid: int, events: int, reading: dict[str, int]
) -> int:
    """Copy the kernel's reports into `events` and its own output into the log (each up to
    its limit) until both close; say so if the kernel ended before it started; the kernel's
    exit code."""
    copies = {"reports": Copy(events, REPORT_BYTES, FLOODED), "output": Copy(2, OUTPUT_BYTES)}
    started, left = b"", dict(reading)
    while left:
        ready, _, _ = select.select(list(left.values()), [], [])
        for name, fd in [(n, fd) for n, fd in left.items() if fd in ready]:
            chunk = os.read(fd, 65536)
            if not chunk:
                del left[name]
                os.close(fd)
                if name == "reports" and not ended(pid, EXIT_WAIT):
                    os.write(events, CLOSED_CHANNEL.encode())
            elif name == "status":
                started += chunk
            else:
                copies[name].take(chunk)
    if not started:
        send(grader, {"kernel": request["kernel"], "failed": "the kernel ended before it started"})
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) & 0xFF


class Copy:
    """Bytes copied into `fd` up to `most`; past it, `said` once (with the limit)."""

    def __init__(self, fd: int, most: int, said: str = ""):
        self.fd, self.most, self.said, self.copied = fd, most, said, 0

    def take(self, chunk: bytes) -> None:
        room = self.most - self.copied
        if 0 < room <= len(chunk) and self.said:
            os.write(self.fd, self.said.format(self.most).encode())
        if room > 0:
            os.write(self.fd, chunk[:room])
        self.copied += len(chunk)


def ended(pid: int, seconds: float) -> bool:
    """Whether the child `pid` ends within `seconds` (it is left to be waited for)."""
    fd = os.pidfd_open(pid)
    try:
        return bool(select.select([fd], [], [], seconds)[0])
    finally:
        os.close(fd)


def kernel(
    grader: socket.socket,
    setup: dict,
    request: dict,
    pipes: dict[str, int],
    init_pipes: tuple[int, int],
) -> None:
    """The forked kernel: its connection file, a user namespace of its own, locked in once
    its init has covered /proc, its limits, every descriptor closed but its own; the watch
    and the ledger; ipykernel, the grader told once its sockets are bound (connecting
    sooner costs the grader a retry)."""
    told = []
    try:
        enter.prctl(enter.PR_SET_PDEATHSIG, signal.SIGKILL)
        folder = Path(setup["connections"])
        connection = folder / "kernel.json"
        info = {**request["connection"], "ip": str(folder / "kernel-ipc")}
        connection.write_text(json.dumps(info))
        itself, where = os.pidfd_open(os.getpid()), os.open(folder, os.O_PATH | os.O_DIRECTORY)
        os.setsid()
        # the kernel's own /proc files are its account's again (the zygote, whose memory it
        # copies, keeps them root's): an unprivileged grader's kernel writes its user maps
        enter.prctl(enter.PR_SET_DUMPABLE, 1)
        enter.own_user()
        user_ready, covered = init_pipes
        os.write(user_ready, b"1")
        if os.read(covered, 1):
            raise enter.WallError(0, "the kernel's init did not cover /proc")
        enter.drop_capabilities()
        limit_kernel(setup["limits"])
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, target in ((null, 0), (pipes["output"], 1), (pipes["output"], 2)):
            os.dup2(fd, target)
        telling = [grader.fileno(), itself, where, pipes["status"]]
        close_all_but({0, 1, 2, pipes["reports"], *telling})
        os.chdir(setup["work"])

        def ready() -> None:  # the sockets are bound: tell the grader, close what told it
            send(grader, {"kernel": request["kernel"], "started": True}, [itself, where])
            told.append(True)
            os.write(pipes["status"], b"started")
            grader.close()
            for fd in telling[1:]:
                os.close(fd)

        watch.start_kernel(setup, request, pipes["reports"], str(connection), ready)
    except BaseException:
        if not told:
            send(grader, {"kernel": request["kernel"], "failed": traceback.format_exc(limit=5)})
        traceback.print_exc()  # into the log, through the launcher
        os._exit(1)
    os._exit(0)


def close_all_but(kept: set[int]) -> None:
    """Close every descriptor of this process but `kept` (the grader's socket, the
    zygote's, the notebooks' are not the kernel's)."""
    start = 0
    for fd in sorted(kept):
        if start < fd:  # Python 3.11 closes every descriptor for an empty range
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


if __name__ == "__main__":
    main(sys.argv[1:])
