"""The box's walls and the kernel's import path (kvlesson.grading.box.walls, bubblewrap,
watch).

What a graded kernel sees of a submission and what it can import are decided by design, the
same with every release of IPython: the working copy shows the notebooks alone, and the
import path never holds the working folder. Every writable place is one a kernel makes
anew, with whatever is shown inside it shown again; the root and /dev are read-only. And
bubblewrap must be able to make a box as the grading account: the command says why in
words when it cannot (a laptop or container that forbids unprivileged user namespaces),
before any submission is graded.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from kvlesson.grading.box import bubblewrap, execute, watch
from kvlesson.grading.box.walls import FRESH, HIDDEN, SHARED_MEMORY, SHOWN, Mount, Walls


def test_the_working_copy_shows_the_notebooks_alone(tmp_path):
    for name in ("floor_plan.ipynb", "timestamp.txt", "helper.py"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "floor_plan.ipynb")
    assert execute.notebooks_in(tmp_path) == [tmp_path / "floor_plan.ipynb"]


def walls_of(tmp_path: Path) -> Walls:
    """A course under /tmp, a home with Python inside it (a pyenv), the working copy and
    connection folder in a hidden run folder, as a grading worker has them."""
    home = tmp_path / "home"
    python = home / ".pyenv" / "versions" / "3.11"
    python.mkdir(parents=True)
    run = tmp_path / "run"
    return Walls(
        work=run / "zygote-1" / "work",
        connections=run / "zygote-1" / "connections",
        hidden=(tmp_path / "course", run),
        scratch=(Path("/tmp"), home),
        shown=(python,),
        disk_bytes=2**20,
        files=((tmp_path / "fontlist.json", home / ".cache" / "fontlist.json"),),
    )


def test_every_writable_place_is_made_anew_with_what_is_shown_inside_it(tmp_path):
    walls = walls_of(tmp_path)
    fresh = walls.fresh()
    roots = [m.target for m in fresh if m.kind == FRESH]
    assert set(roots) == {
        Path("/tmp"),
        tmp_path / "home",
        walls.work,
        walls.connections,
        SHARED_MEMORY,
    }
    assert all(m.size == walls.disk_bytes for m in fresh if m.kind == FRESH)
    shown = [m for m in fresh if m.kind == SHOWN]
    # shown again from where the zygote's box shows it, once the home is made anew
    assert Mount(SHOWN, walls.shown[0], walls.shown[0]) in shown
    assert Mount(SHOWN, walls.files[0][1], walls.files[0][1]) in shown
    order = [m.target for m in fresh]
    assert order.index(tmp_path / "home") < order.index(walls.shown[0])
    # the hidden run folder lies in /tmp: it is hidden again, before its working copy
    hidden = [m.target for m in fresh if m.kind == HIDDEN]
    assert tmp_path / "run" in hidden and order.index(tmp_path / "run") < order.index(walls.work)


def test_bubblewrap_makes_every_writable_place_a_sized_one_and_the_rest_read_only(tmp_path):
    walls = walls_of(tmp_path)
    args = bubblewrap.wall_arguments(walls)
    tmpfs = [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]
    sized = [args[i + 3] for i, a in enumerate(args) if a == "--size"]
    assert set(sized) == {str(m.target) for m in walls.mounts() if m.kind == FRESH}
    assert set(tmpfs) - set(sized) == {str(p) for p in walls.hidden}  # empty, then read-only
    read_only = [args[i + 1] for i, a in enumerate(args) if a == "--remount-ro"]
    assert read_only[-2:] == ["/dev", "/"] and set(read_only) >= {str(p) for p in walls.hidden}
    assert "--bind" not in args and "--dev-bind" not in args  # nothing of the machine writable


def test_a_folder_shown_never_uncovers_one_hidden_inside_it(tmp_path):
    """A folder on the grader's import path that holds a hidden one (a script's folder that
    holds the grading run's) is shown before the hidden one is emptied, never after."""
    shown, run = tmp_path / "scripts", tmp_path / "scripts" / "run"
    run.mkdir(parents=True)
    walls = Walls(run / "work", run / "connections", hidden=(run,), shown=(shown,))
    args = bubblewrap.wall_arguments(walls)
    assert args.index(str(shown)) < args.index(str(run)) < args.index(str(run / "work"))
    order = [m.target for m in walls.fresh()]
    assert order.index(run) < order.index(run / "work")


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
    bubblewrap.box_problem.cache_clear()
    yield tmp_path
    bubblewrap.box_problem.cache_clear()


@pytest.mark.process
def test_a_machine_that_forbids_user_namespaces_is_named_before_grading(path_with):
    fake_bwrap(path_with, 1, "bwrap: setting up uid map: Permission denied")
    with pytest.raises(RuntimeError) as refused:
        bubblewrap.bwrap_path()
    said = str(refused.value)
    assert "bwrap: setting up uid map: Permission denied" in said
    assert "unprivileged user namespaces" in said and "bwrap --ro-bind / / --unshare-all" in said


@pytest.mark.process
def test_a_bwrap_that_boxes_is_used(path_with):
    program = fake_bwrap(path_with, 0, "")
    assert bubblewrap.bwrap_path() == str(program)


@pytest.mark.process
def test_this_machines_bubblewrap_boxes():
    """scripts/test.sh installs bubblewrap: the box the suite grades in must work here."""
    bubblewrap.box_problem.cache_clear()
    assert bubblewrap.box_problem(shutil.which("bwrap") or "bwrap") == ""
