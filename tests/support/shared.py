"""What many test files read, made once a run: a folder built by the first worker that asks.

pytest-xdist runs test files in two worker processes, so a session fixture runs once in each.
For a thing that costs minutes (a class graded in the box), the pattern pytest-xdist documents
is a file lock in the folder the workers share (`tmp_path_factory.getbasetemp().parent`): the
first worker to ask builds it, a later one waits for the lock and reads what is there. Run
without xdist, the same code builds it once in the one process.

A build that fails is recorded, and every later ask fails with the same words at once, instead
of building it again (and failing again) in each file that reads it.
"""

from __future__ import annotations

import fcntl
import shutil
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

DONE, FAILED = "done", "failed"  # what a built folder's marker file says


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this run sees (the run's own, without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


def once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]):
    """The folder `name` of this run, made by `build(folder)` in the first worker that asks;
    a later ask, in any worker, waits for it and gets the same folder."""
    root = shared_folder(tmp_path_factory)
    folder, marker = root / name, root / f"{name}.state"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = marker.read_text() if marker.exists() else ""
        if state == DONE:
            return folder
        if state.startswith(FAILED):
            pytest.fail(f"{name}, built once for the run, failed:\n{state}", pytrace=False)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        try:
            build(folder)
        except BaseException:
            marker.write_text(f"{FAILED}\n{traceback.format_exc()}")
            raise
        marker.write_text(DONE)
        return folder
