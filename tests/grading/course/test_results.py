"""A submission's result has one shape from the box to the report (kvlesson.grading.course.results).

Whatever crosses a process boundary (the worker's answer, the marker beside a graded
submission) comes back as it went: the same flags with their kind and place, the same
marks, the same nbgrader grades. A marker written by an earlier release (flags as
[notebook, cell, reason]) still reads; a broken one reads as none.
"""

from __future__ import annotations

import json

import pytest

from kvlesson.grading.course.results import (
    FAILED,
    FORBIDDEN,
    PASSED,
    ExerciseMark,
    Flag,
    Marker,
    NotebookResult,
    SubmissionResult,
    result_from_json,
    result_to_json,
)


def a_result() -> SubmissionResult:
    marks = [
        ExerciseMark("q1_pool_tests", 1.0, 1.0, (), PASSED),
        ExerciseMark(
            "ex1_1_tests", 2.0, 0.0, ("scored 0: calls memory_parts",), FAILED, "gib", "that is GiB"
        ),
    ]
    notebook = NotebookResult(
        marks,
        False,
        {"q2_answer": {"auto_score": None, "needs_manual_grade": True}},
        {"q1_answer": ""},
    )
    flags = [
        Flag("left out: helper.py"),
        Flag(
            "cell 7 ran memory_parts (from pool_bytes)",
            FORBIDDEN,
            "floor_plan",
            "ex1_1_answer",
            7,
            "kvlesson.memory.floor.memory_parts",
        ),
    ]
    return SubmissionResult(
        "01_floor_plan",
        "ada",
        "2026-12-02 10:00:00.000000 UTC",
        True,
        {"floor_plan": notebook},
        flags,
        "",
        "/tmp/x",
        "log",
    )


def test_a_result_comes_back_from_the_worker_as_it_went():
    result = a_result()
    assert result_from_json(result_to_json(result)) == result


def test_a_marker_keeps_the_flags_and_the_marks(tmp_path):
    result = a_result()
    Marker.of(result).write(tmp_path / "marker.json")
    marker = Marker.read(tmp_path / "marker.json")
    assert marker.flags == tuple(result.flags)
    assert marker.marks == {"floor_plan": tuple(result.notebooks["floor_plan"].marks)}
    assert (marker.timestamp, marker.graded, marker.failure) == (result.timestamp, True, "")


def test_an_earlier_releases_marker_still_reads(tmp_path):
    path = tmp_path / "marker.json"
    path.write_text(
        json.dumps(
            {
                "timestamp": "t",
                "graded": True,
                "failure": "",
                "flags": [["floor_plan", "ex1_1_tests", "scored 0"], ["", "", "left out: a.py"]],
                "marks": {
                    "floor_plan": [
                        {
                            "grade_id": "ex1_1_tests",
                            "points": 2.0,
                            "score": 0.0,
                            "flags": ["scored 0"],
                        }
                    ]
                },
            }
        )
    )
    marker = Marker.read(path)
    assert marker.flags == (
        Flag("scored 0", notebook="floor_plan", cell="ex1_1_tests"),
        Flag("left out: a.py"),
    )
    assert marker.marks["floor_plan"][0].outcome == ""  # marked before outcomes: by its score


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"flags": [["too", "short"]]}'])
def test_a_broken_marker_reads_as_none(tmp_path, text):
    (tmp_path / "marker.json").write_text(text)
    assert Marker.read(tmp_path / "marker.json") is None


def test_a_link_is_no_marker(tmp_path):
    (tmp_path / "real.json").write_text(json.dumps({"graded": True}))
    (tmp_path / "marker.json").symlink_to(tmp_path / "real.json")
    assert Marker.read(tmp_path / "marker.json") is None


def test_a_flag_of_no_known_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind of flag 'odd'"):
        Flag("x", "odd")
