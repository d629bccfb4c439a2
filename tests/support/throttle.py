"""A starved machine on demand: what a test runs on gets half of one core, and nothing burns
the other half.

The determinism test grades timing-sensitive students again on a starved core. A busy loop
beside them starves them, but burns a core for as long as they run; a CPU quota (a cgroup's
`cpu.cfs_quota_us` on cgroup v1, `cpu.max` on v2) gives the same half core and leaves the rest
of the machine to the rest of the suite. Where this process may not make a cgroup (not root,
no cpu controller), the busy loop is the way: the check is the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

V1 = Path("/sys/fs/cgroup/cpu")
V2 = Path("/sys/fs/cgroup")
PERIOD_US = 100_000  # the scheduler's period
HALF_US = 50_000  # of it, what the starved processes may run


def _make_group() -> tuple[Path, Path] | None:
    """A new cgroup limited to half a core: (its folder, the file a process joins it by)."""
    name = f"kvlesson-half-core-{uuid.uuid4().hex[:8]}"
    try:
        if (V1 / "cpu.cfs_quota_us").exists():
            group = V1 / name
            group.mkdir()
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(HALF_US))
            return group, group / "cgroup.procs"
        if "cpu" in (V2 / "cgroup.controllers").read_text().split():
            group = V2 / name
            group.mkdir()
            (group / "cpu.max").write_text(f"{HALF_US} {PERIOD_US}")
            return group, group / "cgroup.procs"
    except OSError:
        return None
    return None


def _remove(group: Path) -> None:
    """Remove a cgroup once its processes are gone (they may take a moment to be reaped)."""
    for _ in range(100):
        try:
            group.rmdir()
            return
        except OSError:
            os.sched_yield()


@contextmanager
def half_a_core(core: int = 0) -> Iterator[Callable[[], None]]:
    """A `preexec_fn` for the processes to starve: each (and all it starts) runs on `core`
    at half of it at most, by a CPU quota, or beside a busy loop where no quota can be set."""
    made = _make_group()
    if made is None:
        loop = subprocess.Popen(
            [sys.executable, "-c", "while True: pass"],
            preexec_fn=lambda: os.sched_setaffinity(0, {core}),
        )
        try:
            yield lambda: os.sched_setaffinity(0, {core})
        finally:
            loop.kill()
            loop.wait()
        return
    group, procs = made

    def join() -> None:
        os.sched_setaffinity(0, {core})
        procs.write_text(str(os.getpid()))

    try:
        yield join
    finally:
        _remove(group)
