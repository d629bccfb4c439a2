"""The box's walls and the kernel's import path (kvlesson.grading.box.walls, watch).

What a graded kernel sees of a submission and what it can import are decided by design, the
same with every release of IPython: the working copy shows the notebooks alone, and the
import path never holds the working folder. And bubblewrap must be able to make a box as the
grading account: the command says why in words when it cannot (a laptop or container that
forbids unprivileged user namespaces), before any submission is graded.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from kvlesson.grading.box import walls, watch
from kvlesson.grading.box.walls import Walls


def test_the_working_copy_shows_the_notebooks_alone(tmp_path):
    work, connections = tmp_path / "work", tmp_path / "connections"
    work.mkdir()
    connections.mkdir()
    for name in ("floor_plan.ipynb", "timestamp.txt", "helper.py"):
        (work / name).write_text("{}")
    (work / "pkg").mkdir()
    (work / "link.ipynb").symlink_to(work / "floor_plan.ipynb")
    walls_ = Walls(work, connections, hidden=(tmp_path / "course",))
    args = walls_.arguments()
    bound = [
        args[i + 1]
        for i, arg in enumerate(args)
        if arg == "--ro-bind" and args[i + 1].startswith(str(work))
    ]
    assert bound == [str(work / "floor_plan.ipynb")], bound


def test_the_kernels_import_path_never_holds_the_working_copy(tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    kept = [p for p in sys.path if p]
    monkeypatch.setattr(sys, "path", ["", ".", str(work), str(work / "sub"), *kept])
    watch.import_path(work)
    assert sys.path == kept


def fake_bwrap(folder: Path, status: int, said: str) -> Path:
    """A `bwrap` that answers as a machine's would, first on PATH."""
    program = folder / "bwrap"
    program.write_text(f"#!/bin/sh\necho {said!r} >&2\nexit {status}\n")
    program.chmod(0o755)
    return program


@pytest.fixture
def path_with(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    walls.box_problem.cache_clear()
    yield tmp_path
    walls.box_problem.cache_clear()


@pytest.mark.process
def test_a_machine_that_forbids_user_namespaces_is_named_before_grading(path_with):
    fake_bwrap(path_with, 1, "bwrap: setting up uid map: Permission denied")
    with pytest.raises(RuntimeError) as refused:
        walls.bwrap_path()
    said = str(refused.value)
    assert "bwrap: setting up uid map: Permission denied" in said
    assert "unprivileged user namespaces" in said and "bwrap --ro-bind / / --unshare-all" in said


@pytest.mark.process
def test_a_bwrap_that_boxes_is_used(path_with):
    program = fake_bwrap(path_with, 0, "")
    assert walls.bwrap_path() == str(program)


@pytest.mark.process
def test_this_machines_bubblewrap_boxes():
    """scripts/test.sh installs bubblewrap: the box the suite grades in must work here."""
    walls.box_problem.cache_clear()
    assert walls.box_problem(shutil.which("bwrap") or "bwrap") == ""
