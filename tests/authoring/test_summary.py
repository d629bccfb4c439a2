"""The self-check, the feedback and the class report name the same mistake, or the build stops.

An instructor's Exercise 2.3 (`chats_that_fit`, the walk of December 2026) showed how they
parted: floor for ceiling raises ZeroDivisionError on a hidden input of 1 token, the build
left that mistake out of the key, and the feedback and the report called the answer "no known
mistake" while the self-check named it. Now the key keeps such a mistake ("raises" where it
raises), the marking names it whatever the student's error says, and the build stops on any
mistake its self-check names that the key cannot; it also stops where the instructor's
answers are not the exercise's authority's.
"""

from __future__ import annotations

import pytest

from kvlesson.authoring.key_mistakes import RAISES, key_mistakes
from kvlesson.authoring.summary import Summary
from kvlesson.grading.marking import diagnosis

RIGHT = [
    {"label": f"chats_that_fit(70, {n})", "kind": "count", "normal": normal}
    for n, normal in ((1, "int:25720"), (17, "int:12860"), (5_000, "int:82"))
]
FLOOR = {
    "mistake": "ceil",
    "hint": "round up, not down",
    "same": "a",
    "values": [],
    "answers": [
        ["error:ZeroDivisionError: integer division or modulo by zero", "int:25720", "int:82"]
    ],
}


def test_a_mistake_that_raises_on_one_input_stays_in_the_key():
    [kept] = key_mistakes([FLOOR], 0, RIGHT, {})
    assert kept["mistake"] == "ceil" and kept["answers"] == [RAISES, "int:25720", "int:82"]


def test_the_marking_names_it_whatever_the_students_error_says():
    exercise = {"probes": RIGHT, "mistakes": key_mistakes([FLOOR], 0, RIGHT, {})}
    theirs = ["error:ZeroDivisionError: division by zero", "int:25720", "int:82"]
    assert diagnosis.diagnose(exercise, theirs).mistake == "ceil"
    assert diagnosis.diagnose(exercise, ["int:1", "int:25720", "int:82"]).mistake == ""


def test_a_mistake_that_raises_everywhere_names_nothing():
    """An answer that raises on every input (a stub left as released) is no one mistake."""
    everywhere = {**FLOOR, "answers": [["error:ValueError: x"] * 3]}
    assert key_mistakes([everywhere], 0, RIGHT, {}) == []


ENTRIES = [
    {"role": "verify", "probes": [{"normal": "int:82"}]},
    {"role": "record", "probes": [{"normal": normal["normal"]} for normal in RIGHT]},
]


def test_the_build_stops_on_a_hint_the_key_cannot_name():
    summary = Summary("02_ceiling/ex2_3_tests", hinted=["round up, not down"], key=[])
    with pytest.raises(ValueError, match="names mistakes the key cannot name .*round up"):
        summary.check(ENTRIES)
    named = Summary(
        "02_ceiling/ex2_3_tests",
        hinted=["round up, not down"],
        key=[{"mistake": "ceil", "words": "round up, not down", "answers": []}],
    )
    named.check(ENTRIES)


def test_the_build_stops_where_the_key_is_not_the_authoritys():
    authority = [
        ["verify", [["chats_that_fit(70, 5_000)", "int:82"]]],
        [
            "record",
            [[p["label"], p["normal"]] for p in RIGHT[:2]]
            + [["chats_that_fit(70, 5_000)", "int:81"]],
        ],
    ]
    summary = Summary("02_ceiling/ex2_3_tests", authority=authority)
    with pytest.raises(
        ValueError,
        match=r"chats_that_fit\(70, 5_000\) \(hidden\): the solution "
        r"gives int:82, the authority int:81",
    ):
        summary.check(ENTRIES)


def test_the_summary_says_what_was_added_and_what_was_dropped():
    class Choice:
        added = {"verify": [{"function": "f", "args": ["8_017"]}], "record": []}

    summary = Summary(
        "02_ceiling/ex2_1_tests",
        choice=Choice(),
        known=["ceil", "float"],
        dropped=[("float", "its code does not run")],
        hinted=["round up"],
        key=[{"mistake": "ceil", "words": "round up", "answers": []}],
        authority=[["verify", [["f(1)", "int:82"]]]],
    )
    text = summary.text(ENTRIES, [])
    assert "added 1 self-check probe(s) f(8_017) and 0 hidden" in text
    assert "hint: round up" in text
    assert "dropped (its code does not run): a float for an int" in text
    assert "1 probes held against the authority, 0 disagree" in text


def test_a_course_for_other_hardware_leaves_such_a_hint_out_instead():
    """`kvlesson for` adds no probe (it keeps the course's own): a hint the key cannot name
    there is left out of the stamp, so the self-check still names only what the key names."""
    import json

    from kvlesson.authoring import stamps

    summary = Summary("02_ceiling/ex2_3_tests", hinted=["round up, not down"], key=[])
    summary.check(ENTRIES, strict=False)
    assert "(left out: the key cannot name it)" in summary.text(ENTRIES, [])
    entry = {
        "setting": {},
        "hints": {},
        "probes": [{"label": "f(1)", "kind": "count", "normal": "int:5"}],
    }
    wrong = [{"mistake": "ceil", "hint": "round up, not down", "values": [["int:4"]]}]
    assert json.loads(stamps.make_stamp(entry, wrong, 0, "here"))["hints"]
    assert not json.loads(stamps.make_stamp(entry, wrong, 0, "here", named=set()))["hints"]
