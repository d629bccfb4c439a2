"""nbgrader's submit as the hub configures it (`SafeSubmit`), between Unix accounts.

A student's real `nbgrader submit` into an exchange laid out as docs/jupyterhub.md lays it
out. What a student must not be able to do through the exchange: leave a submission
writable by classmates.
"""

from __future__ import annotations

import grp
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from kvlesson.grading.exchange.submit import SUBMISSION_MODE
from support.exchange import AS_ROOT, ASSIGNMENT, nbgrader, uid
from support.paths import ROOT

pytestmark = AS_ROOT


def exchange_as_the_guide_makes_it(root: Path, group: str, owner: str = "root") -> Path:
    """The course's folders in the exchange, as docs/jupyterhub.md has the admin make them:
    owned by the instructor, with the instructors' group; inbound set-group-id and sticky."""
    course = root / "kvlesson"
    for folder, mode in (
        (root, 0o1777),
        (course, 0o755),
        (course / "outbound", 0o755),
        (course / "inbound", 0o3733),
        (course / "feedback", 0o711),
    ):
        folder.mkdir(exist_ok=True)
        os.chown(
            folder,
            uid(owner) if folder != root else 0,
            0 if folder == root else grp.getgrnam(group).gr_gid,
        )
        folder.chmod(mode)
    release = course / "outbound" / ASSIGNMENT
    release.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), release / "ceiling.ipynb")
    return course


def submit(tmp_path: Path, exchange: Path) -> subprocess.CompletedProcess:
    """A student's `nbgrader submit`, with the configuration the hub gives every account."""
    student = tmp_path / "student"
    (student / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), student / ASSIGNMENT / "ceiling.ipynb")
    config = tmp_path / "everyone"
    config.mkdir()
    shutil.copy(ROOT / "hub" / "nbgrader_config.py", config)
    return nbgrader(
        ["submit", ASSIGNMENT],
        student,
        student,
        JUPYTER_CONFIG_PATH=str(config),
        KVLESSON_EXCHANGE=str(exchange),
    )


@pytest.mark.process
def test_a_submission_is_left_to_its_student_and_the_instructors(tmp_path):
    course = exchange_as_the_guide_makes_it(tmp_path / "exchange", group="daemon")
    done = submit(tmp_path, tmp_path / "exchange")
    assert done.returncode == 0, done.stdout + done.stderr
    [folder] = (course / "inbound").iterdir()
    info = folder.stat()
    assert oct(info.st_mode & 0o7777) == oct(SUBMISSION_MODE)
    assert info.st_gid == grp.getgrnam("daemon").gr_gid  # the instructors'


@pytest.mark.process
def test_no_submission_into_an_inbound_folder_whose_group_holds_students(tmp_path):
    # inbound owned by another account, with a group the submitting account is in: its
    # classmates would be in it too.
    course = exchange_as_the_guide_makes_it(tmp_path / "exchange", group="root", owner="daemon")
    done = submit(tmp_path, tmp_path / "exchange")
    assert done.returncode != 0
    assert "Not submitted: the course's inbound folder" in done.stdout + done.stderr
    assert "belongs to the group root, which you are in" in done.stdout + done.stderr
    assert list((course / "inbound").iterdir()) == []
