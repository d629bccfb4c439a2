"""The record line: how a hidden test tells the grader what the student's code gave.

`kvlesson.grading.checks.selfcheck.record` prints one line, `KVLESSON-MARK {...}` (the test's
grade id, the values, the forbidden functions that ran, the notebook's setting); the marking
and the build read it back from the cell's output. It holds no expected value.
"""

from __future__ import annotations

import json

RECORD_PREFIX = "KVLESSON-MARK "
RECORD_LIMIT = 100_000  # characters of one record line; an honest one is under 2,000


def record_line(record: dict) -> str:
    """The line a hidden test prints for `record`."""
    return RECORD_PREFIX + json.dumps(record, default=str) + "\n"


def records_of(cell) -> list[dict]:
    """The record lines a cell printed (stdout only), parsed; a broken, oversized or odd
    one as {} (it then belongs to no exercise)."""
    found = []
    for output in cell.get("outputs", []):
        if output.get("output_type") != "stream" or output.get("name") != "stdout":
            continue
        text = output.get("text", "")
        for line in (text if isinstance(text, str) else "".join(text)).splitlines():
            if not line.startswith(RECORD_PREFIX):
                continue
            try:
                record = (json.loads(line[len(RECORD_PREFIX):])
                          if len(line) <= RECORD_LIMIT else {})
            except (ValueError, RecursionError):
                record = {}
            found.append(record if isinstance(record, dict) else {})
    return found
