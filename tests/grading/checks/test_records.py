"""The record line the marker reads is the one the kernel printed, caught as it arrived
(kvlesson.grading.checks.records): not what is left in the cell's outputs after the student's
code cleared them, buried them past nbgrader's limit of lines, or printed a line of its own.
"""

from __future__ import annotations

import nbformat

from kvlesson.grading.checks.records import (
    CAUGHT,
    MOST_CAUGHT,
    RECORD_LIMIT,
    RecordCatcher,
    record_line,
    records_of,
)

REAL = record_line({"id": "q1_pool_tests", "values": [{"t": "float", "v": 53.9}], "calls": []})
FORGED = record_line({"id": "q1_pool_tests", "values": [{"t": "float", "v": 1.0}], "calls": []})


def caught(*chunks: str) -> list[str]:
    catcher = RecordCatcher()
    for chunk in chunks:
        catcher.take(chunk)
    return catcher.caught()


def test_a_record_split_between_chunks_and_glued_to_a_print_is_caught_whole():
    half = len(REAL) // 2
    assert caught("noise ", REAL[:5], REAL[5:half], REAL[half:]) == [REAL.rstrip("\n")]
    assert caught("no newline yet" + REAL) == [REAL.rstrip("\n")]


def test_a_line_printed_beside_the_real_one_is_caught_too_and_long_output_buries_nothing():
    lines = caught("x\n" * 5_000, REAL, "y\n" * 5_000, FORGED)
    assert lines == [REAL.rstrip("\n"), FORGED.rstrip("\n")]
    assert len(caught(*[FORGED] * 100)) == MOST_CAUGHT


def test_an_oversized_record_is_cut_and_reads_as_broken():
    huge = 'KVLESSON-MARK {"x": "' + "A" * (3 * RECORD_LIMIT)
    lines = caught(huge[:RECORD_LIMIT], huge[RECORD_LIMIT:], '"}\n')
    assert len(lines) == 1 and len(lines[0]) == RECORD_LIMIT + 1
    cell = nbformat.v4.new_code_cell("", metadata={CAUGHT: lines})
    assert records_of(cell) == [{}]


def test_the_marker_reads_what_was_caught_not_what_the_outputs_say():
    """The student's code cleared the real line and printed a forged one: the outputs hold
    the forged line only, the caught lines hold both (two records: the test scores 0)."""
    cell = nbformat.v4.new_code_cell(
        "", outputs=[nbformat.v4.new_output("stream", name="stdout", text=FORGED)]
    )
    assert [r["values"][0]["v"] for r in records_of(cell)] == [1.0]  # a build's run: outputs
    cell.metadata[CAUGHT] = caught(REAL, "\x1b[2J", FORGED)
    assert [r["values"][0]["v"] for r in records_of(cell)] == [53.9, 1.0]
    cell.metadata[CAUGHT] = []  # the grader caught nothing: the outputs count for nothing
    assert records_of(cell) == []
