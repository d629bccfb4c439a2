"""The suite's tiers, the quick tier's guard, hypothesis's profiles, and the slowest files first.

Tiers, by marker (README, "Run the tests"):

* `system`: every test under tests/system/ (a class graded, the hub, the browser, Binder's
  environment, the course for a card) and every nbval cell of solutions/, marked here;
* `process`: a test elsewhere that starts a process (a kernel, a command, nbgrader, git,
  bubblewrap, Chromium), marked by hand where it is written;
* `heavy`: a test that starts no process but takes seconds of a core (a grid search over a
  day's settings, an explorer drawn at every share), marked by hand where it is written;
* `quick`: every other test, marked here: no process at all, each a fraction of a second.
  `bash scripts/test.sh --quick` runs only these (`-m quick`); `bash scripts/test.sh` runs
  every tier, every time.

The guard: a quick or heavy test that starts a process, in its body or in a fixture it sets
up, fails, naming the marker it lacks, so the quick tier stays what its name says without
anyone keeping a list.

Hypothesis draws as many examples as each test asks for (`support.examples.examples`) under the
`ci` profile, the default; `HYPOTHESIS_PROFILE=quick` (the quick tier) draws a twentieth.

The README's test command spreads whole test files over two pytest-xdist workers
(`--dist loadfile --no-loadscope-reorder`): each worker takes the next file in collection order
when it is nearly done with its own. The longest files first keep both busy to the end.
"""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, settings

from support.examples import PROFILE

SYSTEM = Path(__file__).resolve().parent / "system"
SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
SLOW_TIERS = ("system", "process", "heavy")
STARTS_PROCESSES = ("system", "process")  # the tiers that may start a process
STARTS = ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system")  # os's ways to start one

settings.register_profile("ci", deadline=None)
settings.register_profile(
    "quick", deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
settings.load_profile(PROFILE)

# Test files of half a minute or more, slowest first, so that neither worker is left alone
# with a long one at the end (each file's time in a quiet full run: README, "Speed"). The two
# files that make what others read for the run (support.shared: the website, test_site.py;
# the graded course, test_class_report.py) come early among them.
SLOWEST_FIRST = [
    "test_hub.py",
    "test_cheats.py",
    "test_site.py",
    "test_class_report.py",
    "test_grade_parallel.py",
    "test_browser.py",
    "test_cheats_round4.py",
    "test_nbgrader_flow.py",
    "test_course_for.py",
    "test_first_exercise.py",
    "test_binder.py",
    "test_selfchecks.py",
    "test_notebooks.py",
    "test_journey.py",
    "test_capstone.py",
]
# Files that read what those two made: right after the slow files, so that the makers have
# long finished (a reader that comes first makes it itself, under the same lock), and before
# the thousands of short tests, which even out the two workers' ends.
READ_AFTER_THE_SLOW = [
    "test_site_access.py",
    "test_site_explorers.py",
    "test_grade_every_assignment.py",
]
# Files not named follow in their usual order.
RANK = {name: place for place, name in enumerate(SLOWEST_FIRST + READ_AFTER_THE_SLOW)}


def is_system(path: Path) -> bool:
    return path.is_relative_to(SYSTEM) or path.is_relative_to(SOLUTIONS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_system(Path(item.path)):
            item.add_marker(pytest.mark.system)
        if not any(item.get_closest_marker(tier) for tier in SLOW_TIERS):
            item.add_marker(pytest.mark.quick)
    items.sort(key=lambda item: RANK.get(item.path.name, len(RANK)))


@contextmanager
def no_process(item: pytest.Item) -> Iterator[None]:
    """For a quick or heavy test, starting a process (in the test or any fixture it sets up)
    fails with the marker it lacks; other tests run as they are."""
    if any(item.get_closest_marker(tier) for tier in STARTS_PROCESSES):
        yield
        return

    def refuse(*args, **kwargs):
        raise AssertionError(
            f"{item.nodeid} starts a process, so it is neither quick nor heavy: mark it "
            "@pytest.mark.process (tests/conftest.py)"
        )

    names = [name for name in STARTS if hasattr(os, name)]
    saved = subprocess.Popen._execute_child, [getattr(os, name) for name in names]
    subprocess.Popen._execute_child = refuse
    for name in names:
        setattr(os, name, refuse)
    try:
        yield
    finally:
        subprocess.Popen._execute_child = saved[0]
        for name, kept in zip(names, saved[1]):
            setattr(os, name, kept)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with no_process(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with no_process(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    with no_process(item):
        yield
