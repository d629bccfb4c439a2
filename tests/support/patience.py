"""How long a test waits: one hang guard for the whole suite, and time limits scaled by the load.

A limit in seconds of wall time fails a test when the machine is slow, not when the code is
wrong: a CI run on a shared machine lost 17 tests to a 300 s guard around a run that takes
35 s quiet. So the suite has two kinds of wait, both here:

* `HANG` (`HANG_MS` for a browser): how long a test waits for a process, a page or a server
  before it calls it hung. Thirty minutes, far past what anything here takes on a machine
  loaded many times over; `KVLESSON_TEST_PATIENCE` (seconds) changes it. Only a real hang
  reaches it.
* `scaled(seconds)`: a limit that is part of what a test checks (a course's cell timeout,
  which interrupts a stuck cell and must spare an honest one), stretched by the machine's
  load at the time it is set: on two busy cores with eight processes waiting, 4 times as long.
"""

from __future__ import annotations

import math
import os

HANG = float(os.environ.get("KVLESSON_TEST_PATIENCE", 30 * 60))
HANG_MS = int(HANG * 1000)
# One step in a browser (a page to load, a button to appear, a click) on a free machine, far
# past what any takes here; Playwright's own default (30 s, for every step) was a wall-clock
# limit. Stretched by the load (browser_step_ms), and bounded, so that a page that never
# shows what a test waits for fails in minutes, not in HANG.
BROWSER_STEP = 120


def load_factor() -> float:
    """How many times slower than a free machine this one is likely to run now: the processes
    waiting to run (the last minute's load average) per core, at least 1."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def scaled(seconds: float) -> int:
    """`seconds` of a free machine, stretched by the load: a whole number of seconds."""
    return math.ceil(seconds * load_factor())


def browser_step_ms() -> int:
    """How long a browser step may take now, in ms (Playwright's unit)."""
    return min(scaled(BROWSER_STEP), math.ceil(HANG)) * 1000
