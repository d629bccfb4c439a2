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

# Test files of a minute or more, longest first: seconds on this 2-core machine, quiet,
# from `pytest --durations=0` (summed per file) on 2026-11-30. Files not named follow
# in their usual order.
SLOWEST_FIRST = [
    "test_grade_every_assignment.py",  # 102: every assignment graded in the box
    "test_binder.py",  # 92: Binder's environment built and every notebook run in it
    "test_papermill.py",  # 87: the course executed for another card
    "test_browser.py",  # 79: JupyterLab and Chromium, every explorer moved
    "test_hub.py",  # 74: a JupyterHub with a class of real accounts
    "test_sizing.py",  # 72: the capstone's grid searches
    "test_notebooks.py",  # 68: releases regenerated and run
    "test_nbgrader_flow.py",  # 63: a term of 01_floor_plan
    "test_cheats.py",  # 60: a class of cheats graded
    "test_journey.py",  # 34: a student's first hour in the browser
    "test_selfchecks.py",  # 26: wrong answers against every self-check
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
