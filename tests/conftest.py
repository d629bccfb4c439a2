"""Mark the end-to-end runs, and hand the slowest test files out first.

Everything under tests/system/, and the executed instructor notebooks that `--nbval`
collects from solutions/, is a `system` test: `pytest -m "not system"` leaves them out
(the quick loop of docs/architecture.md).

The README's test command spreads whole test files over two pytest-xdist workers
(`--dist loadfile --no-loadscope-reorder`): each worker takes the next file in
collection order when it is nearly done with its own. xdist's default order puts the
files with the most tests first, which leaves the few-test files that build a whole
class, an environment or a hub for the end, where one worker runs them alone while the
other has finished. The longest first keeps both busy to the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# The browser fixtures (`browser`, `page`: Debian's Chromium) for every test that asks for them.
pytest_plugins = ["support.browser"]

SYSTEM = Path(__file__).resolve().parent / "system"
SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"

# Test files of a minute or more, in the order that ran quickest on this 2-core machine
# (2026-12-02: 7 min 58 s for the suite; with the hub's term first it took 9 min 1 s). The
# seconds are a file's time from `pytest --durations=0`, summed, on 2026-12-01. Files not
# named follow in their usual order.
SLOWEST_FIRST = [
    "test_cheats.py",  # 134: a class of cheats, class by class, graded two at a time
    "test_binder.py",  # 111: Binder's environment built and every notebook run in it
    "test_course_for.py",  # 110: the course executed for another card
    "test_grade_every_assignment.py",  # 90: every assignment graded in the box
    "test_hub.py",  # 80: a JupyterHub with a class of real accounts
    "test_site.py",  # 131 (2026-12, load average 6): the website built (28) and axe on 19 pages
    "test_browser.py",  # 80: JupyterLab and Chromium, every explorer moved (252 at load 6-8)
    "test_journey.py",  # 79: a student's first hour in the browser
    "test_nbgrader_flow.py",  # 71: a term of 01_floor_plan
    "test_notebooks.py",  # 69: releases regenerated and run
    "test_grade_parallel.py",  # 68: a deadline, a killed worker, a killed command
    "test_capstone.py",  # 65: the capstone's grid searches
    "test_selfchecks.py",  # 36: wrong answers against every self-check
]


def is_system(path: Path) -> bool:
    return path.is_relative_to(SYSTEM) or path.is_relative_to(SOLUTIONS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_system(Path(item.path)):
            item.add_marker(pytest.mark.system)
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
