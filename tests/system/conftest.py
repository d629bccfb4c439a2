"""The end-to-end tier's shared fixtures: Debian's Chromium (`browser`, `page`), the course's
website (`built`, `served`, support.site), and the course with every graded assignment, graded once a run (`graded_course`, support.graded_course), which
test_class_report.py and test_grade_every_assignment.py both read.
"""

from __future__ import annotations

import pytest

from support.browser import browser, page  # noqa: F401 (fixtures, found by name)
from support.site import built, served  # noqa: F401 (fixtures: the website, built once a run)


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory):
    # Imported here, not above: support.report_class reads every solution notebook when it is
    # imported, and a copy of the course made for one assignment (test_first_exercise.py, the
    # check `kvlesson check` runs in it) has only that one.
    from support import graded_course as course

    return course.graded(tmp_path_factory)
