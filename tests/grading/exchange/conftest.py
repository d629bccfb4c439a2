"""The course folder every exchange test starts from, with the course's nbgrader_config.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.paths import ROOT


@pytest.fixture
def course(tmp_path) -> Path:
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    return course
