"""The record line: how a hidden test tells the grader what the student's code gave.

`kvlesson.grading.checks.selfcheck.record` prints one line, `KVLESSON-MARK {...}` (the test's
grade id, the values, the forbidden functions that ran, the notebook's setting); the marking
and the build read it back. It holds no expected value.

In the grading box the grader does not read it from the cell's outputs, which the student's
code can erase (`clear_output`), bury (past nbgrader's limit of 1,000 lines, inside an
Output widget) or split: the grader catches every record line from the kernel's standard
output as it arrives (`RecordCatcher`) and keeps them in the cell's metadata (`CAUGHT`),
where no code in the kernel reaches. A line printed beside the real one is caught too, and
two record lines score 0.
"""

from __future__ import annotations

import json

RECORD_PREFIX = "KVLESSON-MARK "
RECORD_LIMIT = 100_000  # characters of one record line; an honest one is under 2,000
CAUGHT = "kvlesson_records"  # a graded cell's metadata: the record lines caught as they came
MOST_CAUGHT = 20  # record lines kept per cell (two already score 0)


def record_line(record: dict) -> str:
    """The line a hidden test prints for `record`."""
    return RECORD_PREFIX + json.dumps(record, default=str) + "\n"


class RecordCatcher:
    """The record lines of one cell's standard output, caught chunk by chunk as the kernel
    sends it: each `RECORD_PREFIX` and what follows it on its line (to the next prefix),
    wherever on a line it starts; a line cut past `RECORD_LIMIT` (it then reads as broken)."""

    def __init__(self) -> None:
        self.waiting = ""  # the end of the output, not yet ended by a newline
        self.lines: list[str] = []

    def take(self, text: str) -> None:
        """One chunk of the cell's standard output."""
        *ended, self.waiting = (self.waiting + text).split("\n")
        for line in ended:
            self._line(line)
        at = self.waiting.rfind(RECORD_PREFIX)
        if at < 0:  # keep what could be the start of a prefix cut between two chunks
            self.waiting = self.waiting[-(len(RECORD_PREFIX) - 1) :]
        else:
            start = self.waiting[:at]
            self._line(start)  # records that ended where the next one starts
            self.waiting = self.waiting[at : at + RECORD_LIMIT + 1]

    def _line(self, line: str) -> None:
        for part in line.split(RECORD_PREFIX)[1:]:
            if len(self.lines) < MOST_CAUGHT:
                self.lines.append((RECORD_PREFIX + part)[: RECORD_LIMIT + 1])

    def caught(self) -> list[str]:
        """Every record line of the cell so far, the unended last one included."""
        lines = list(self.lines)
        for part in self.waiting.split(RECORD_PREFIX)[1:]:
            lines.append((RECORD_PREFIX + part)[: RECORD_LIMIT + 1])
        return lines[:MOST_CAUGHT]


def _printed(cell) -> list[str]:
    """The record lines among a cell's stdout outputs (where no grader caught them)."""
    lines = []
    for output in cell.get("outputs", []):
        if output.get("output_type") != "stream" or output.get("name") != "stdout":
            continue
        text = output.get("text", "")
        lines += [
            line
            for line in (text if isinstance(text, str) else "".join(text)).splitlines()
            if line.startswith(RECORD_PREFIX)
        ]
    return lines


def records_of(cell) -> list[dict]:
    """The record lines of a cell, parsed: those the grader caught as they came when it
    graded the cell in the box (`CAUGHT`), else those among its stdout outputs (the build's
    own runs); a broken, oversized or odd one as {} (it then belongs to no exercise)."""
    caught = cell.get("metadata", {}).get(CAUGHT)
    lines = (
        [line for line in caught if isinstance(line, str)]
        if isinstance(caught, list)
        else _printed(cell)
    )
    found = []
    for line in lines:
        try:
            record = json.loads(line[len(RECORD_PREFIX) :]) if len(line) <= RECORD_LIMIT else {}
        except (ValueError, RecursionError):
            record = {}
        found.append(record if isinstance(record, dict) else {})
    return found
