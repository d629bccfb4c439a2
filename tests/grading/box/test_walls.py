"""The box's walls and the kernel's import path (kvlesson.grading.box.walls, watch).

What a graded kernel sees of a submission and what it can import are decided by design, the
same with every release of IPython: the working copy shows the notebooks alone, and the
import path never holds the working folder.
"""

from __future__ import annotations

import sys

from kvlesson.grading.box import watch
from kvlesson.grading.box.walls import Walls


def test_the_working_copy_shows_the_notebooks_alone(tmp_path):
    work, connections = tmp_path / "work", tmp_path / "connections"
    work.mkdir()
    connections.mkdir()
    for name in ("floor_plan.ipynb", "timestamp.txt", "helper.py"):
        (work / name).write_text("{}")
    (work / "pkg").mkdir()
    (work / "link.ipynb").symlink_to(work / "floor_plan.ipynb")
    walls = Walls(work, connections, hidden=(tmp_path / "course",))
    args = walls.arguments()
    bound = [args[i + 1] for i, arg in enumerate(args) if arg == "--ro-bind"
             and args[i + 1].startswith(str(work))]
    assert bound == [str(work / "floor_plan.ipynb")], bound


def test_the_kernels_import_path_never_holds_the_working_copy(tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    kept = [p for p in sys.path if p]
    monkeypatch.setattr(sys, "path", ["", ".", str(work), str(work / "sub"), *kept])
    watch.import_path(work)
    assert sys.path == kept
