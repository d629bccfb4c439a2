"""The notebook a page offers to download (kvlesson.delivery.site.release): the release, never
a student's work, and words that say what differs without a command that would overwrite it."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import nbformat
import pytest

from kvlesson.delivery.site.pages import role
from kvlesson.delivery.site.release import difference, offered
from support.paths import ROOT

NAME = PurePosixPath("notebooks/01_floor_plan/floor_plan.ipynb")
OVERWRITING = ("kvlesson build", "kvlesson.course", "python -m", "git checkout", "git stash")


def pair():
    release = nbformat.read(ROOT / NAME, as_version=4)
    solution = nbformat.read(ROOT / "solutions" / NAME.relative_to("notebooks"), as_version=4)
    return release, solution


def worked(release: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The release as a student leaves it: an answer written, an empty cell at the end."""
    mine = copy.deepcopy(release)
    answer = next(c for c in mine.cells if role(c) == "answer" and c.cell_type == "code")
    answer.source = answer.source.replace("raise NotImplementedError()", "return 0")
    mine.cells.append(nbformat.v4.new_code_cell(""))
    return mine


def test_the_committed_release_is_the_release_of_its_solution():
    for release_path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        release = nbformat.read(release_path, as_version=4)
        solution = nbformat.read(
            ROOT / "solutions" / release_path.relative_to(ROOT / "notebooks"), as_version=4
        )
        assert difference(release, solution) is None, release_path.name


def test_a_students_work_is_told_apart_in_words():
    release, solution = pair()
    mine = worked(release)
    assert "an empty cell added at its end, as JupyterLab adds one" in difference(mine, solution)
    mine.cells.pop()
    assert "holds an answer" in difference(mine, solution)
    changed = copy.deepcopy(release)
    text = next(c for c in changed.cells if role(c) == "text" and c.cell_type == "markdown")
    text.source += " (edited)"
    assert "was changed" in difference(changed, solution)


def test_the_working_copy_is_offered_when_it_is_the_release(tmp_path):
    course = tmp_path / "course"
    (course / NAME).parent.mkdir(parents=True)
    shutil.copy(ROOT / NAME, course / NAME)
    _, solution = pair()
    found = offered(course, NAME, solution)
    assert found.text == (ROOT / NAME).read_text() and found.note == ""


@pytest.mark.process  # git
def test_a_worked_copy_is_never_offered_the_committed_release_is(tmp_path):
    course = tmp_path / "course"
    (course / NAME).parent.mkdir(parents=True)
    shutil.copy(ROOT / NAME, course / NAME)
    git = ["git", "-C", str(course), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the release"], check=True)
    release, solution = pair()
    nbformat.write(worked(release), course / NAME)
    before = (course / NAME).read_text()
    found = offered(course, NAME, solution)
    assert found.text == (ROOT / NAME).read_text()
    assert "offers the release as committed to git" in found.note
    assert (course / NAME).read_text() == before  # the student's work, untouched
    assert not any(words in found.note for words in OVERWRITING)


@pytest.mark.process  # git, which finds no repository here
def test_outside_git_a_worked_copy_is_not_offered_and_the_words_say_why(tmp_path):
    course = tmp_path / "course"
    (course / NAME).parent.mkdir(parents=True)
    release, solution = pair()
    nbformat.write(worked(release), course / NAME)
    found = offered(Path(course), NAME, solution)
    assert found.text is None
    assert "is not the course's release" in found.note and "offers no download" in found.note
    assert "an empty cell added at its end" in found.note
    assert not any(words in found.note for words in OVERWRITING)
