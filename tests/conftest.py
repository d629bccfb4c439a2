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

# The browser fixtures (`browser`, `page`: Debian's Chromium) and the course's website
# (`built`, `served`) for every test that asks for them.
pytest_plugins = ["support.browser", "support.site"]

SYSTEM = Path(__file__).resolve().parent / "system"
SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"

# Test files of half a minute or more, slowest first, so that neither worker is left alone
# with a long one at the end. The seconds are each file's longest tests from
# `pytest --durations=30` in a full run of 2026-12-02 on this 2-core machine, nothing else
# running (20 min 48 s for the suite). Files not named follow in their usual order.
SLOWEST_FIRST = [
    "test_cheats.py",  # 307 + 125: a class of 50 cheats graded, then the timing ones again, busy
    "test_hub.py",  # 157 + 63: a JupyterHub term with a class of real accounts, the attack
    "test_grade_every_assignment.py",  # 151: every assignment graded in the box
    "test_course_for.py",  # 144 + 21: the course executed for another card
    "test_nbgrader_flow.py",  # 129: a term of 01_floor_plan
    "test_grade_parallel.py",  # 99 + 58 + 26: a deadline, a killed worker, a killed command
    "test_class_report.py",  # 117: a class graded and reported
    "test_binder.py",  # 104: Binder's environment installed from the lock
    "test_site.py",  # 68 + 30: the website built, axe and 320 px on every page
    "test_browser.py",  # 150: JupyterLab and Chromium, every explorer moved
    "test_notebooks.py",  # releases regenerated and run
    "test_ta_grading.py",  # 44: a TA grades a download on a laptop
    "test_journey.py",  # 38: a student's first hour in the browser
    "test_capstone.py",  # the capstone's grid searches
    "test_selfchecks.py",  # wrong answers against every self-check
]


def is_system(path: Path) -> bool:
    return path.is_relative_to(SYSTEM) or path.is_relative_to(SOLUTIONS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_system(Path(item.path)):
            item.add_marker(pytest.mark.system)
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
