"""Hand the slowest test files out first.

The README's test command spreads whole test files over two pytest-xdist workers
(`--dist loadfile --no-loadscope-reorder`): each worker takes the next file in
collection order when it is nearly done with its own. xdist's default order puts the
files with the most tests first, which leaves the few-test files that build a whole
class, an environment or a hub for the end, where one worker runs them alone while the
other has finished. The longest first keeps both busy to the end.
"""

from __future__ import annotations

import pytest

# Test files of a minute or more, longest first: seconds on this 2-core machine, from
# `pytest --durations=0` (summed per file) on 2026-12-01, both workers busy. Files not
# named follow in their usual order.
SLOWEST_FIRST = [
    "test_hub.py",  # 150: a JupyterHub term as the guide tells it, with real accounts
    "test_cheats.py",  # 130: a class of cheats, class by class, graded two at a time
    "test_binder.py",  # 110: Binder's environment built and every notebook run in it
    "test_papermill.py",  # 100: the course executed for another card
    "test_grade_parallel.py",  # 90: a deadline, a killed worker, a killed command
    "test_browser.py",  # 85: JupyterLab and Chromium, every explorer moved
    "test_nbgrader_flow.py",  # 80: a term of 01_floor_plan
    "test_class_report.py",  # 75: a synthetic class graded, its report opened in Chromium
    "test_grade_every_assignment.py",  # 75: every assignment graded in the box
    "test_sizing.py",  # 70: the capstone's grid searches
    "test_journey.py",  # 60: a student's first hour in the browser
    "test_notebooks.py",  # 60: releases regenerated and run
    "test_selfchecks.py",  # 50: wrong answers against every self-check, lies and blind ones
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
