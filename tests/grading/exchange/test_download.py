"""A learning platform's download through the course's zip_collect (kvlesson.grading.exchange
.unpack and .download): one student's odd files cost that student only, lateness is kept,
ids are checked, and nothing of an archive lands outside the download or through a link.

The guide's pattern for Canvas (docs/instructors.md) reads the student, `late_`, the upload's
number and the notebook from each name; a real `nbgrader zip_collect` sorts the download.
"""

from __future__ import annotations

import io
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kvlesson.grading.course import seal
from kvlesson.grading.exchange.download import Named, _newest
from kvlesson.grading.exchange.unpack import MAX_FILE_BYTES, safe_parts
from support.paths import ROOT
from support.patience import HANG

GUIDE = (ROOT / "docs" / "instructors.md").read_text()
PATTERN = re.search(r"--FileNameCollectorPlugin\.named_regexp='([^']+)'", GUIDE)[1]
NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def zipped(members: dict[str, bytes], links: dict[str, str] = {}) -> bytes:
    """A zip of `members` (name: bytes) and symbolic links (name: target)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return out.getvalue()


@pytest.fixture
def downloaded(tmp_path) -> Path:
    """A course with the 01_floor_plan release and a Canvas-style download of a class whose
    files hold every odd case; the course root."""
    course = tmp_path / "course"
    shutil.copytree(ROOT / "notebooks" / "01_floor_plan", course / "notebooks" / "01_floor_plan")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    nb = NOTEBOOK.encode()
    nested = zipped({"inner/ada_9_900_floor_plan.ipynb": b"fay's forgery in ada's name"})
    members = {
        "ada_1001_5001_floor_plan.ipynb": nb,
        "bo_late_1002_5002_floor_plan.ipynb": nb,  # late, says the platform
        "cy_1003_5003_floor_plan.ipynb": b"cy's first",  # handed in again: 5004 is newer
        "cy_1003_5004_floor_plan-1.ipynb": NOTEBOOK.replace("{}", '{"cy": "newest"}').encode(),
        "dee_1004_5005_floor_plan.ipynb": nb,  # two files, the same number: which is newer?
        "dee_1004_5005_floor_plan-1.ipynb": nb,
        "eve_1005_5006_floor_plan.ipynb": b"\0" * (MAX_FILE_BYTES + 1),  # a bomb, unpacked
        "__MACOSX/._ada_1001_5001_floor_plan.ipynb": b"junk",
        "fay_1006_5007_handin.zip": nested,  # a student's own zip, named inside as ada's
        "../../../escaped.ipynb": nb,
    }
    archive = course / "downloaded" / "01_floor_plan" / "archive"
    archive.mkdir(parents=True)
    (archive / "submissions.zip").write_bytes(
        zipped(members, links={"gus_1007_5008_floor_plan.ipynb": "/etc/passwd"})
    )
    return course


@pytest.mark.process
def test_one_students_odd_files_cost_that_student_only(downloaded, tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            "zip_collect",
            "01_floor_plan",
            f"--FileNameCollectorPlugin.named_regexp={PATTERN}",
        ],
        cwd=downloaded,
        env={"HOME": str(tmp_path), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log  # never "Duplicate submission file" for the class
    submitted = downloaded / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["ada", "bo", "cy", "dee"], log
    folder = {name: submitted / name / "01_floor_plan" for name in ("ada", "bo", "cy", "dee")}
    assert (folder["ada"] / "floor_plan.ipynb").read_text() == NOTEBOOK  # not fay's forgery
    assert seal.read_refusals(folder["ada"]) == [] and not seal.late_by_platform(folder["ada"])
    assert seal.late_by_platform(folder["bo"])  # kept through the zip path (the walk's C5)
    assert "newest" in (folder["cy"] / "floor_plan.ipynb").read_text()
    assert any("an older copy of floor_plan" in n for n in seal.read_refusals(folder["cy"]))
    assert not (folder["dee"] / "floor_plan.ipynb").exists()
    assert any("nothing in their names says which" in n for n in seal.read_refusals(folder["dee"]))
    # nothing escaped the download, no link was made or followed, the bomb was not written
    assert not list(tmp_path.rglob("escaped.ipynb")) and "a path with '..'" in log
    assert not [p for p in downloaded.rglob("*") if p.is_symlink()]
    assert "root:" not in "".join(p.read_text(errors="replace") for p in submitted.rglob("*.ipynb"))
    for said in (
        "over the limit of",
        "not a plain file",
        "macOS",
        "an archive inside the download",
    ):
        assert said in log, (said, log[-3000:])


def test_a_members_name_must_be_plain_parts_of_a_path():
    assert safe_parts("submissions/ada_1_2_floor_plan.ipynb") == (
        "submissions",
        "ada_1_2_floor_plan.ipynb",
    )
    for odd in ("/etc/passwd", "../x.ipynb", "a/../../x", "a/.hidden", "a\\..\\x", "a\nb"):
        assert isinstance(safe_parts(odd), str), odd


def test_of_one_students_files_the_newest_is_taken_or_none_with_a_note():
    def named(path, order=None, timestamp=None):
        return Named(path, "cy", "floor_plan", order, timestamp, False)

    taken, said = _newest([named("a", 5003), named("b", 5004)])
    assert taken.path == "b" and said == [
        "not collected: a: an older copy of floor_plan (by the platform's number, b is newer)"
    ]
    taken, said = _newest([named("a", 7), named("b", 7)])
    assert taken is None and "nothing in their names says which is newer" in said[0]


def test_a_student_id_that_is_markup_is_never_taken_from_a_file_name():
    """With a pattern that takes any name (another platform's), a file named as markup or as
    a formula names no student: it is left out, and said."""
    from kvlesson.grading.exchange.download import PlatformFileNames

    names = PlatformFileNames(
        named_regexp=r".*/(?P<student_id>[^_/]+)_(?P<file_id>floor_plan)\.ipynb"
    )
    for odd in ("ana<img src=x onerror=alert(1)>", "=HYPERLINK(1)", ".hidden", "ana bob"):
        assert names._named(f"/extracted/{odd}_floor_plan.ipynb") is None, odd
    taken = names._named("/extracted/ana.lima@uni.example_floor_plan.ipynb")
    assert (taken.student, taken.notebook) == ("ana.lima@uni.example", "floor_plan")
