"""A submission is copied as plain files only, and what the instructor's browser shows of it
runs nothing (kvlesson.grading.course.seal, the exchange; the cleaning of what the browser
shows is tests/grading/grade/test_sanitize.py).

Sealing is what every grading step starts from; these tests plant each kind of thing a
submission could hold besides plain files (links to the course's secrets, a hard link, a
FIFO that would hang a reader, a socket, a file too large, too many files, folders nested
too deep) and check that none is followed or opened, each is named in a refusal, and the
plain files around them are copied. The same copy serves nbgrader's collect (a link planted
in the exchange) and the release of feedback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kvlesson.grading.course import seal
from support.paths import ROOT
from support.patience import HANG


def plant(folder: Path, secret: Path) -> None:
    """A submission folder with a plain notebook and one of every other thing."""
    (folder / "sub").mkdir(parents=True)
    (folder / "floor_plan.ipynb").write_text('{"cells": []}')
    (folder / "sub" / "notes.txt").write_text("mine")
    (folder / "to_secret").symlink_to(secret)
    (folder / "to_folder").symlink_to(secret.parent, target_is_directory=True)
    os.link(secret, folder / "hard_link")
    os.mkfifo(folder / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock"))
    server.close()
    (folder / "big.bin").write_bytes(b"x" * 2_000)


def test_only_plain_files_are_copied_and_every_other_thing_is_named(tmp_path):
    secret = tmp_path / "course" / "keys" / "key.json"
    secret.parent.mkdir(parents=True)
    secret.write_text("the answers")
    plant(tmp_path / "submitted", secret)
    refused = seal.seal(
        tmp_path / "submitted", tmp_path / "sealed", seal.SealLimits(file_bytes=1_000)
    )
    reasons = {r.path: r.reason for r in refused}
    assert sorted(reasons) == ["big.bin", "hard_link", "pipe", "sock", "to_folder", "to_secret"]
    assert "symbolic link" in reasons["to_secret"] and "symbolic link" in reasons["to_folder"]
    assert "hard link" in reasons["hard_link"] and "FIFO" in reasons["pipe"]
    assert "socket" in reasons["sock"] and "2,000 bytes" in reasons["big.bin"]
    copied = sorted(
        p.relative_to(tmp_path / "sealed").as_posix() for p in (tmp_path / "sealed").rglob("*")
    )
    assert copied == ["floor_plan.ipynb", "sub", "sub/notes.txt"]
    assert not any(p.is_symlink() for p in (tmp_path / "sealed").rglob("*"))
    assert "the answers" not in "".join(
        p.read_text() for p in (tmp_path / "sealed").rglob("*") if p.is_file()
    )


def test_counts_sizes_and_depth_have_limits(tmp_path):
    source = tmp_path / "submitted"
    deep = source.joinpath(*[f"d{n}" for n in range(5)])
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_text("x")
    for n in range(6):
        (source / f"f{n}.txt").write_text("y" * 100)
    refused = seal.seal(source, tmp_path / "sealed", seal.SealLimits(files=4, depth=3))
    assert [str(r) for r in refused] == [
        "d0/d1/d2/d3: folders nested deeper than 3",
        "f4.txt: more than 4 files",
        "f5.txt: more than 4 files",
    ]
    assert len(list((tmp_path / "sealed").glob("*.txt"))) == 4
    refused = seal.seal(source, tmp_path / "sealed-bytes", seal.SealLimits(total_bytes=250))
    assert [r.path for r in refused if "250 bytes in all" in r.reason] == [
        "f2.txt",
        "f3.txt",
        "f4.txt",
        "f5.txt",
    ]


def test_a_link_or_a_file_as_the_submission_itself_is_an_empty_submission(tmp_path):
    """Refused with the reason, never raised: an entry of the exchange named as a
    submission but made a file or a link must not stop the collection of the class."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "floor_plan.ipynb").write_text("{}")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "file").write_text("not a folder")
    for name, kind in (("link", "a symbolic link"), ("file", "a file")):
        refused = seal.seal(tmp_path / name, tmp_path / f"sealed-{name}")
        assert [(r.path, r.reason) for r in refused] == [
            (".", f"the submission is {kind}, not a folder: nothing was copied")
        ]
        assert list((tmp_path / f"sealed-{name}").iterdir()) == []
    (tmp_path / "sealed").mkdir()
    with pytest.raises(ValueError, match="already exists"):
        seal.seal(tmp_path / "real", tmp_path / "sealed")


@pytest.mark.process
def test_collect_seals_a_submission_planted_in_the_exchange(tmp_path):
    """nbgrader's own collect, with the course's config: a submission folder in the
    exchange's inbound/ holding a link to the instructor's notebook is collected without
    it, and the refusal is kept beside the submission for the grading command."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    exchange = tmp_path / "exchange"
    inbound = (
        exchange / "kvlesson" / "inbound" / "alice+01_floor_plan+2026-12-01 10:00:00.000000 UTC+abc"
    )
    inbound.mkdir(parents=True)
    instructor = tmp_path / "instructor.ipynb"
    instructor.write_text('{"secret": "the solutions"}')
    (inbound / "floor_plan.ipynb").symlink_to(instructor)
    (inbound / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    env = {**os.environ, "HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            "collect",
            "01_floor_plan",
            f"--Exchange.root={exchange}",
            "--CollectApp.check_owner=False",
        ],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode == 0, done.stderr
    folder = course / "submitted" / "alice" / "01_floor_plan"
    assert not (folder / "floor_plan.ipynb").exists(), "the link was followed"
    assert (folder / "timestamp.txt").is_file()
    assert any("floor_plan.ipynb: a symbolic link" in r for r in seal.read_refusals(folder))


def test_collects_notes_are_told_apart_from_any_other_file_of_their_name(tmp_path):
    seal.write_refusals(tmp_path, ["floor_plan.ipynb: a symbolic link"])
    assert seal.read_refusals(tmp_path) == ["floor_plan.ipynb: a symbolic link"]
    seal.write_refusals(tmp_path, [])
    assert seal.read_refusals(tmp_path) == []
    for other in ('["the grader owes me a point"]', '{"notes": ["no mark of collect"]}', "{"):
        (tmp_path / seal.REFUSALS).write_text(other)
        [note] = seal.read_refusals(tmp_path)
        assert seal.REFUSALS in note and "the grader owes me" not in note, note


@pytest.mark.process
def test_feedback_with_a_link_in_it_is_not_released(tmp_path):
    course = tmp_path / "course"
    feedback = course / "feedback" / "alice" / "01_floor_plan"
    feedback.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    secret = tmp_path / "key.json"
    secret.write_text("the answers")
    (feedback / "floor_plan.html").symlink_to(secret)
    (feedback / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o1777)
    env = {**os.environ, "HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            "release_feedback",
            "01_floor_plan",
            f"--Exchange.root={exchange}",
        ],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode != 0 and "is a symbolic link" in done.stdout + done.stderr, done
    assert "the answers" not in "".join(p.read_text() for p in exchange.rglob("*.html"))
