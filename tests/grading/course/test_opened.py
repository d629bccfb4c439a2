"""A student's folder opened once and walked by its descriptor (kvlesson.grading.course.opened):
a link is listed, never followed; a folder or a file is the one that was looked at, or it is
not opened; the time of a submission is read the same way. The race itself, against the
seal, is in tests/grading/course/test_seal.py; as a student account against a real collect,
in tests/system/test_cheats_round4.py.
"""

from __future__ import annotations

import os
import time

import pytest

from kvlesson.grading.course import opened
from support import race


@pytest.fixture
def folder(tmp_path):
    """A student's folder: a file, a folder with a file, a link to a secret outside."""
    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / "work.ipynb").write_text("mine")
    (mine / "sub" / "notes.txt").write_text("notes")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "answers.txt").write_text("the answers")
    (mine / "link").symlink_to(tmp_path / "secret", target_is_directory=True)
    return mine


def test_a_tree_is_listed_through_descriptors_and_no_link_is_followed(folder):
    with opened.folder(folder) as fd:
        found = {where: info for where, info in opened.tree(fd)}
    assert sorted(found) == ["link", "sub", "sub/notes.txt", "work.ipynb"]
    assert os.path.islink(folder / "link") and not any("answers" in w for w in found)


def test_a_link_or_another_folder_is_not_opened_as_the_folder_looked_at(folder, tmp_path):
    looked = opened.Identity.of(os.lstat(folder))
    with pytest.raises(OSError):  # a link, with O_NOFOLLOW | O_DIRECTORY
        opened.open_folder(folder / "link")
    race.exchange(folder, tmp_path / "secret")  # its name now names another real folder
    with pytest.raises(opened.Changed):
        opened.open_folder(folder, looked)


def test_a_file_swapped_after_the_listing_is_not_opened(folder, tmp_path):
    with opened.folder(folder) as fd:
        seen = dict(opened.listing(fd))["work.ipynb"]
        (tmp_path / "other.ipynb").write_text("someone else's")
        race.exchange(folder / "work.ipynb", tmp_path / "other.ipynb")
        with pytest.raises(opened.Changed):
            opened.open_file(fd, "work.ipynb", seen)
        assert opened.read_small(fd, "link") is None  # a link is never read
        assert opened.read_small(fd, "work.ipynb") == b"someone else's"  # a plain file now


def test_the_latest_change_is_read_through_the_descriptor(folder):
    (folder / "sub" / "late.txt").write_text("written last")
    time.sleep(0.05)  # past the file system's clock tick: its folder changed before it
    with (folder / "sub" / "late.txt").open("a") as late:
        late.write(", and again")
    with opened.folder(folder) as fd:
        latest, what = opened.latest_change(fd)
        assert what == "sub/late.txt"
        assert opened.latest_change(fd, most=1)[1] == "."  # only the folder itself looked at
