"""What one graded submission may use: memory, processes and disk.

The walls keep a kernel away from what it must not touch; these limits keep it from
taking what the others need. Memory is capped per process (`RLIMIT_AS`). Processes are
capped by a pids cgroup when the grader may make one (as root, with the cgroup file
system writable), else, for an unprivileged grader, by `RLIMIT_NPROC` above the processes
its account already runs; with neither, the box's own process namespace still ends them
all with the kernel. Disk is capped by the size of the box's writable folders, each an
in-memory file system (see `walls`). Time is capped per cell (the cell timeout) and per
submission (the grading command's deadline).
"""

from __future__ import annotations

import os
import resource
import shutil
from dataclasses import dataclass
from pathlib import Path

GIB, MIB = 2**30, 2**20
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1, then v2


@dataclass(frozen=True)
class Limits:
    """Memory of each process, processes in all, and bytes each writable folder may hold."""

    memory_bytes: int = 2 * GIB  # a graded kernel reserves about 1 GiB of address space
    processes: int = 64
    disk_bytes: int = 256 * MIB

    def arguments(self) -> list[str]:
        """The launcher's options that carry these limits."""
        return [
            "--memory",
            str(self.memory_bytes),
            "--processes",
            str(self.processes),
            "--disk",
            str(self.disk_bytes),
        ]


def threads_of(uid: int) -> int:
    """Tasks (processes and their threads) the account `uid` runs now: what RLIMIT_NPROC counts."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
        except OSError:
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1").strip())
    return count


class ProcessCap:
    """A pids cgroup of `processes` for one box, if this grader may make one (else None);
    removed when the box is gone."""

    def __init__(self, processes: int, name: str):
        self.path: Path | None = None
        if os.geteuid() != 0:
            return
        for root in CGROUP_ROOTS:
            parent = root / "kvlesson"
            try:
                parent.mkdir(exist_ok=True)
                for old in parent.glob("box-*"):  # a killed launcher's, now empty: removed
                    if not Path(f"/proc/{old.name.removeprefix('box-')}").exists():
                        try:
                            old.rmdir()
                        except OSError:
                            pass
                path = parent / name
                path.mkdir()
            except OSError:
                continue
            if (path / "pids.max").exists():
                (path / "pids.max").write_text(str(processes))
                self.path = path
                return
            shutil.rmtree(path, ignore_errors=True)

    def join(self) -> None:
        """Put the calling process (and so all it starts) into the cgroup."""
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def close(self) -> None:
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError:
                pass


def apply(limits: Limits, cap: ProcessCap, tasks_before: int) -> None:
    """In the box's first process, before it starts the box: cap its memory, and its
    processes by the cgroup or, failing that, by RLIMIT_NPROC above `tasks_before`."""
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    if cap.path is not None:
        cap.join()
    elif os.geteuid() != 0:
        most = tasks_before + limits.processes
        resource.setrlimit(resource.RLIMIT_NPROC, (most, most))
