"""The launcher, outside the box: a zygote started in bubblewrap, and kernels asked of it.

A grading worker (or one autograde) keeps its zygotes (`kvlesson.grading.box.zygote`) in a
`Zygotes`, one per copy of kvlesson and set of modules to preload, each started on first
use in a box of its own (`kvlesson.grading.box.bubblewrap`) with a folder of its own for
the working copy and the connection files, inside its pids cgroup
(`kvlesson.grading.box.limits`). `Zygote.kernel` asks for one kernel: the submission's
notebooks and the events file go with the request as open descriptors, and the kernel
answers with a descriptor of itself (a pidfd: the grader sees it end and kills it, whatever
namespace it is in) and one of its connection folder, through which the grader reaches its
sockets (`ForkedKernel.ip`). Closing a zygote ends it once its kernels are gone.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kvlesson.grading.box.bubblewrap import bwrap_command
from kvlesson.grading.box.limits import ZYGOTE_TASKS, Limits, ProcessCap
from kvlesson.grading.box.messages import receive, send
from kvlesson.grading.box.walls import Walls
from kvlesson.grading.course import isolated

CLOSE_WAIT = 60.0  # seconds a closed zygote has to end on its own before it is killed
KILL_WAIT = 5.0  # seconds a killed kernel has to be gone before the grader looks again
STARTED = itertools.count(1)  # zygotes this process started: each names its own cgroup


class ZygoteError(RuntimeError):
    """A zygote or a kernel that could not start, with why."""


@dataclass
class ForkedKernel:
    """One kernel a zygote forked: a pidfd of it and a descriptor of its connection folder."""

    pidfd: int
    folder: int

    @property
    def ip(self) -> str:
        """The prefix of its sockets as this process reaches them (through the descriptor)."""
        return f"/proc/{os.getpid()}/fd/{self.folder}/kernel-ipc"

    def alive(self, wait: float = 0) -> bool:
        """Whether the kernel still runs (after waiting up to `wait` seconds for its end)."""
        return not select.select([self.pidfd], [], [], wait)[0]

    def signal(self, number: int) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, number)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        for fd in (self.pidfd, self.folder):
            try:
                os.close(fd)
            except OSError:
                pass


@dataclass
class Zygote:
    """A zygote in its box, prepared for `walls` and `limits`, with `preload` loaded."""

    walls: Walls
    limits: Limits
    preload: tuple[str, ...]
    process: subprocess.Popen | None = None
    socket: socket.socket | None = None
    cap: ProcessCap | None = None
    asked: int = 0

    def start(self, name: str) -> None:
        """Start the zygote and wait until it has made its imports."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.cap = ProcessCap(self.limits.processes + ZYGOTE_TASKS, name)
        command = [*isolated.python("kvlesson.grading.box"), "--socket", str(theirs.fileno())]
        self.process = subprocess.Popen(
            bwrap_command(self.walls, command),
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            preexec_fn=self.cap.join,
        )
        theirs.close()
        self.socket = ours
        send(ours, self.setup())
        answer, _ = receive(ours)
        if not answer or not answer.get("ready"):
            self.close()
            why = (answer or {}).get("failed") or "it ended (its log says why)"
            raise ZygoteError(f"the grading box's zygote could not start: {why}")

    def setup(self) -> dict:
        """What the zygote is told once: each kernel's fresh walls, folders and limits."""
        return {
            "fresh": [
                {"kind": m.kind, "target": str(m.target), "rest": [_text(m.source), m.size]}
                for m in self.walls.fresh()
            ],
            "work": str(self.walls.work),
            "connections": str(self.walls.connections),
            "scratch": [str(p) for p in self.walls.scratch],
            "hidden": [str(p) for p in self.walls.hidden],
            "limits": self.limits.as_dict(),
            "preload": list(self.preload),
        }

    def kernel(
        self, connection: dict, ledger: dict, notebooks: list[Path], events: Path, draw: bool
    ) -> ForkedKernel:
        """A new kernel on `connection` (jupyter_client's connection info), keeping the
        ledger `ledger`, the `notebooks` in its working copy, its reports into `events`."""
        self.asked += 1
        opened = [os.open(events, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)]
        opened += [os.open(path, os.O_RDONLY | os.O_CLOEXEC) for path in notebooks]
        request = {
            "kernel": self.asked,
            "connection": {k: v for k, v in connection.items() if k != "ip"},
            "ledger": ledger,
            "notebooks": [path.name for path in notebooks],
            "draw": draw,
        }
        try:
            send(self.socket, json.loads(json.dumps(request, default=_plain)), opened)
        finally:
            for fd in opened:
                os.close(fd)
        while True:
            answer, fds = receive(self.socket)
            if answer is None:
                raise ZygoteError("the grading box's zygote ended (its log says why)")
            if answer.get("kernel") != self.asked:  # a launcher's word about an earlier one
                for fd in fds:
                    os.close(fd)
                continue
            if answer.get("started") and len(fds) == 2:
                return ForkedKernel(*fds)
            for fd in fds:
                os.close(fd)
            raise ZygoteError(f"a kernel could not start in the box: {answer.get('failed')}")

    def tell(self) -> None:
        """Tell the zygote to end (its socket closed): it ends once its kernels are gone."""
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def close(self) -> None:
        """End the zygote: told to, it ends once its kernels are gone (killed after
        CLOSE_WAIT seconds), and its cgroup removed."""
        self.tell()
        if self.process is not None:
            try:
                self.process.wait(timeout=CLOSE_WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.cap is not None:
            self.cap.close()


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _plain(value: object) -> object:
    """The connection info's bytes (its key) as text, as a connection file holds them."""
    return value.decode() if isinstance(value, bytes) else str(value)


class Zygotes:
    """A worker's zygotes, one per (walls, limits, preload), started on first use, each
    with its own working copy and connection folder under `folder`."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.zygotes: dict[tuple, Zygote] = {}

    def get(self, walls_for, limits: Limits, preload: tuple[str, ...], key: tuple) -> Zygote:
        """The zygote of `key`, started if it is not there yet: `walls_for(work,
        connections)` makes its walls."""
        full = (*key, limits, preload)
        if full not in self.zygotes:
            home = self.folder / f"zygote-{len(self.zygotes) + 1}"
            (home / "work").mkdir(parents=True)
            (home / "connections").mkdir()
            zygote = Zygote(walls_for(home / "work", home / "connections"), limits, preload)
            zygote.start(f"box-{os.getpid()}-{next(STARTED)}")
            self.zygotes[full] = zygote
        return self.zygotes[full]

    def close(self) -> None:
        """End every zygote: all told at once (their sockets closed), so that they end side
        by side, then each waited for."""
        for zygote in self.zygotes.values():
            zygote.tell()
        for zygote in self.zygotes.values():
            zygote.close()
        self.zygotes.clear()
