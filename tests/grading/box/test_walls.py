"""The box's first wall: bubblewrap must be able to make a box as the grading account, and
the command says why in words when it cannot (a laptop or container that forbids
unprivileged user namespaces), before any submission is graded."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kvlesson.grading.box import walls


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


def test_a_machine_that_forbids_user_namespaces_is_named_before_grading(path_with):
    fake_bwrap(path_with, 1, "bwrap: setting up uid map: Permission denied")
    with pytest.raises(RuntimeError) as refused:
        walls.bwrap_path()
    said = str(refused.value)
    assert "bwrap: setting up uid map: Permission denied" in said
    assert "unprivileged user namespaces" in said and "bwrap --ro-bind / / --unshare-all" in said


def test_a_bwrap_that_boxes_is_used(path_with):
    program = fake_bwrap(path_with, 0, "")
    assert walls.bwrap_path() == str(program)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bubblewrap on this machine")
def test_this_machines_bubblewrap_boxes():
    walls.box_problem.cache_clear()
    assert walls.box_problem(shutil.which("bwrap")) == ""
