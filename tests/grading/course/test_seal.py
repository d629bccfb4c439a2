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

from kvlesson.grading.course import opened, seal
from support import race
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


def racing_folder(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The walk's race (A1): the instructor's solutions, a student's submission folder with
    filler files that sort before her notebook, and her link to the solutions; the three
    paths."""
    solutions = tmp_path / "instructor" / "kvlesson" / "solutions" / "01_floor_plan"
    solutions.mkdir(parents=True)
    (solutions / "floor_plan.ipynb").write_text("### BEGIN SOLUTION: the instructor's")
    (solutions / "more.txt").write_text("### BEGIN HIDDEN TESTS")
    mine = tmp_path / "inbound" / "ana+01_floor_plan+2026-12-07 01:00:00.000000 UTC+race"
    mine.mkdir(parents=True)
    for n in range(3):
        (mine / f"a{n:03}").write_text("filler")
    (mine / "floor_plan.ipynb").write_text("ana's own work")
    link = tmp_path / "racelink"
    link.symlink_to(solutions, target_is_directory=True)
    return solutions, mine, link


def swap_at_first_open(monkeypatch, mine: Path, link: Path, inside: bool = True) -> list[str]:
    """Swap the student's folder with her link the moment the grader opens something in it
    (`inside`: a file or folder opened through the folder's descriptor; else the folder
    itself); the names opened when it swapped."""
    real_open, swapped = os.open, []

    def open_and_swap(path, flags, *args, dir_fd=None, **kwargs):
        if not swapped and (dir_fd is not None) == inside:
            race.exchange(mine, link)
            swapped.append(os.fsdecode(path))
        return real_open(path, flags, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "open", open_and_swap)
    return swapped


def copied_text(folder: Path) -> str:
    return "".join(p.read_text() for p in folder.rglob("*") if p.is_file())


def test_a_folder_swapped_for_a_link_as_its_first_file_opens_brings_nothing_of_the_link(
    tmp_path, monkeypatch
):
    """The swap lands after the folder is open: everything is reached through the folder's
    descriptor, so what is copied is still the folder that was looked at (her own work),
    and nothing of the instructor's, though her folder's name now points at it."""
    _, mine, link = racing_folder(tmp_path)
    looked = opened.Identity.of(os.lstat(mine))
    swapped = swap_at_first_open(monkeypatch, mine, link)
    refused = seal.seal(mine, tmp_path / "sealed", expected=looked)
    assert swapped == ["a000"] and mine.is_symlink(), swapped  # the race happened
    assert refused == []
    text = copied_text(tmp_path / "sealed")
    assert "ana's own work" in text and "BEGIN" not in text, text


def test_a_folder_swapped_before_it_is_opened_is_not_copied(tmp_path, monkeypatch):
    """Swapped between collect's look and the seal: the name is a link now (never followed);
    swapped for another real folder of hers, it is not the folder that was looked at."""
    _, mine, link = racing_folder(tmp_path)
    looked = opened.Identity.of(os.lstat(mine))
    swap_at_first_open(monkeypatch, mine, link, inside=False)
    refused = seal.seal(mine, tmp_path / "sealed", expected=looked)
    assert [r.reason for r in refused] == [
        "the submission is a symbolic link, not a folder: nothing was copied"
    ]
    monkeypatch.undo()
    other = tmp_path / "inbound" / "another"
    other.mkdir()
    (other / "floor_plan.ipynb").write_text("someone else's")
    race.exchange(mine, other)  # her folder's name now names another real folder
    assert mine.is_dir() and not mine.is_symlink()
    refused = seal.seal(mine, tmp_path / "sealed-other", expected=looked)
    assert [r.reason for r in refused] == [
        "the submission was swapped for another folder or a link while it was "
        "collected: nothing was copied"
    ]
    assert copied_text(tmp_path / "sealed") + copied_text(tmp_path / "sealed-other") == ""


def test_a_subfolder_or_a_file_swapped_for_a_link_is_left_out(tmp_path, monkeypatch):
    """The same race one level down: a folder inside the submission, and then a file, each
    swapped for a link to the solutions between the listing and its opening."""
    solutions, mine, _ = racing_folder(tmp_path)
    (mine / "a000").unlink()
    (mine / "a000").mkdir()
    (mine / "a000" / "notes.txt").write_text("her notes")
    sub_link = tmp_path / "sublink"
    sub_link.symlink_to(solutions, target_is_directory=True)
    swap_at_first_open(monkeypatch, mine / "a000", sub_link)
    refused = seal.seal(mine, tmp_path / "sealed")
    changed = (
        "changed while it was copied (swapped for a link or for another file): "
        "never followed, left out"
    )
    assert [str(r) for r in refused] == [f"a000: {changed}"]
    monkeypatch.undo()
    file_link = tmp_path / "filelink"
    file_link.symlink_to(solutions / "floor_plan.ipynb")
    swap_at_first_open(monkeypatch, mine / "floor_plan.ipynb", file_link)
    refused = seal.seal(mine, tmp_path / "sealed-file")
    assert f"floor_plan.ipynb: {changed}" in [str(r) for r in refused], refused
    assert "BEGIN" not in copied_text(tmp_path / "sealed") + copied_text(tmp_path / "sealed-file")
