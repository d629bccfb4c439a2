"""What one graded submission may use: memory, processes and disk.

The walls keep a kernel away from what it must not touch; these limits keep it from
taking what the others need. Memory is capped per process (`RLIMIT_AS`). Processes are
capped by a pids cgroup around a zygote's box when the grader may make one (as root, with
the cgroup file system writable: a zygote runs one kernel at a time, so the kernel gets
the cgroup's processes less the zygote's own), else, for an unprivileged grader, by
`RLIMIT_NPROC` in the kernel, which Linux counts in the kernel's own user namespace; with
neither, the kernel's own process namespace still ends them all with the kernel. Disk is
capped by the size of every writable place of the box, each an in-memory file system (see
`walls`). Time is capped per cell (the cell timeout) and per submission (the grading
command's deadline).
"""

from __future__ import annotations

import os
import resource
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

GIB, MIB = 2**30, 2**20
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1, then v2
ZYGOTE_TASKS = 3  # in a zygote's cgroup beside the kernel's: the zygote, the launcher, the init


@dataclass(frozen=True)
class Limits:
    """Memory of each process, processes in all, and bytes each writable folder may hold."""

    memory_bytes: int = 2 * GIB  # a graded kernel reserves about 1 GiB of address space
    processes: int = 64
    disk_bytes: int = 256 * MIB

    def as_dict(self) -> dict:
        return asdict(self)


def limit_kernel(limits: dict) -> None:
    """In a forked kernel, before any cell: the memory of each of its processes, and (for
    an unprivileged grader, whom no cgroup caps) the processes of its own user namespace."""
    memory, processes = limits["memory_bytes"], limits["processes"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if os.geteuid() != 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


class ProcessCap:
    """A pids cgroup of `processes` for one zygote's box, if this grader may make one (else
    its path is None); removed when the box is gone."""

    def __init__(self, processes: int, name: str):
        self.path: Path | None = None
        if os.geteuid() != 0:
            return
        for root in CGROUP_ROOTS:
            parent = root / "kvlesson"
            try:
                parent.mkdir(exist_ok=True)
                for old in parent.glob("box-*"):  # a killed grader's, now empty: removed
                    if not Path(f"/proc/{old.name.split('-')[1]}").exists():
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
