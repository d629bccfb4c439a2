"""What a student hands in is the assignment's notebooks alone (kvlesson.grading.course.contract).

Whatever else a submission holds (a module an answer imports, a data file, a folder, a copy
of the notebook under another name) is taken out of the sealed copy before anything runs,
and each is named with a reason a student can read; odd names (bytes that are not UTF-8, a
newline, a very long name) are named in a form a flag, the gradebook and a terminal can
show.
"""

from __future__ import annotations

import os
from pathlib import Path

from kvlesson.grading.course import contract, seal

NOTEBOOKS = ["floor_plan.ipynb"]


def submission(folder: Path) -> Path:
    folder.mkdir()
    (folder / "floor_plan.ipynb").write_text('{"cells": []}')
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    (folder / "submission_secret.txt").write_text("s3cr3t")
    (folder / "helper.py").write_text("import kvlesson\n")
    (folder / "floor_plan-Copy1.ipynb").write_text('{"cells": []}')
    (folder / "data").mkdir()
    (folder / "data" / "table.csv").write_text("a,b\n")
    return folder


def test_only_the_assignments_notebooks_and_nbgraders_own_files_stay(tmp_path):
    sealed = submission(tmp_path / "sealed")
    removed = {r.path: r.reason for r in contract.keep_notebooks(sealed, NOTEBOOKS)}
    assert sorted(p.name for p in sealed.iterdir()) == [
        "floor_plan.ipynb",
        "submission_secret.txt",
        "timestamp.txt",
    ]
    assert sorted(removed) == ["data/", "floor_plan-Copy1.ipynb", "helper.py"]
    assert removed["helper.py"].startswith(
        "a file handed in beside the notebook: only floor_plan.ipynb is graded"
    )
    assert "put what it needs in the notebook itself" in removed["helper.py"]
    assert removed["data/"].startswith("a folder handed in beside the notebook")
    assert (
        "a notebook this assignment does not have (it has floor_plan.ipynb)"
        in removed["floor_plan-Copy1.ipynb"]
    )


def test_a_submission_of_notebooks_alone_loses_nothing(tmp_path):
    sealed = tmp_path / "sealed"
    sealed.mkdir()
    (sealed / "floor_plan.ipynb").write_text("{}")
    assert contract.keep_notebooks(sealed, NOTEBOOKS) == []
    assert [p.name for p in sealed.iterdir()] == ["floor_plan.ipynb"]


def test_odd_names_are_left_out_in_a_form_every_reader_can_show(tmp_path):
    sealed = tmp_path / "sealed"
    sealed.mkdir()
    (sealed / "floor_plan.ipynb").write_text("{}")
    for name in (b"caf\xe9.py", b"two\nlines.py", b"x" * 250):
        (sealed / os.fsdecode(name)).write_text("")
    shown = sorted(r.path for r in contract.keep_notebooks(sealed, NOTEBOOKS))
    assert "caf\\xe9.py" in shown and "two\\nlines.py" in shown, shown
    assert any(p.endswith("... (250 characters)") and len(p) < 150 for p in shown), shown
    for path in shown:
        path.encode("utf-8")  # the gradebook's SQLite and a CSV take it as it is
        assert path.isprintable(), path


def test_a_students_own_list_of_refusals_is_never_taken_for_collects(tmp_path):
    """Only the course's collect writes kvlesson-refused.json beside a submission, after it
    sealed it: a file of that name in what the student handed in is left out, with a note,
    and what the grader then reads is collect's own list."""
    inbound = tmp_path / "inbound"
    inbound.mkdir()
    (inbound / "floor_plan.ipynb").write_text("{}")
    (inbound / seal.REFUSALS).write_text('["=HYPERLINK(\\"http://x\\")", "ann copied"]')
    refused = seal.seal(inbound, tmp_path / "collected")
    assert [r.path for r in refused] == [seal.REFUSALS]
    assert "never taken for it" in refused[0].reason
    assert not (tmp_path / "collected" / seal.REFUSALS).exists()
    assert seal.read_refusals(tmp_path / "collected") == []
