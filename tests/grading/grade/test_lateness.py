"""Late work by the course's policy (kvlesson.grading.grade.lateness): how late, what it costs,
and the words of the flag; the grading command's run with a late student is in
tests/system/test_cheats_round4.py."""

from __future__ import annotations

import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from nbgrader.plugins import LateSubmissionPlugin
from traitlets.config import Config

from kvlesson.grading.course import seal
from kvlesson.grading.course.results import SubmissionResult
from kvlesson.grading.grade.lateness import DAY, Late, LatePolicy

DUE = datetime.datetime(2027, 6, 30, 17, 0)


def policy(**settings) -> LatePolicy:
    config = Config()
    for name, value in settings.items():
        setattr(config.LatePolicy, name, value)
    return LatePolicy(config=config)


def test_each_started_day_late_takes_its_share_of_the_score():
    course = policy(percent_per_day=10)
    assert course.late_submission_penalty("ann", 6.0, 0) is None
    assert course.late_submission_penalty("ann", 6.0, 21) == pytest.approx(0.6)  # 21 s: a day
    assert course.late_submission_penalty("ann", 6.0, DAY + 1) == pytest.approx(1.2)
    assert course.late_submission_penalty("ann", 6.0, 30 * DAY) == 6.0  # never below 0


def test_a_grace_keeps_a_submission_a_moment_late_on_time():
    course = policy(grace_minutes=5, percent_per_day=10)
    assert course.days_late(4 * 60) == 0 and course.days_late(6 * 60) == 1
    assert "after 5 minutes' grace" in course.words()


def late(seconds: float, by_platform: bool = False, plugin=None) -> Late:
    return Late(
        seconds, DUE if seconds else None, by_platform, plugin or policy(percent_per_day=10)
    )


def test_the_flag_says_how_late_by_which_policy_and_what_it_cost():
    lost, words = late(2 * DAY + 3 * 3600 + 5 * 60).penalty("ann", 5.0)
    assert lost == pytest.approx(1.5)
    assert words == (
        "late: handed in 2 days 3 h 5 min after the due date (2027-06-30 17:00 UTC); the "
        "course's policy takes 10% of the score per started day late: it loses 1.5 of its 5 points"
    )
    lost, words = late(21).penalty("ann", 0.0)  # late, with nothing to lose: still flagged
    assert lost == 0.0 and "21 s after the due date" in words and "loses no points" in words
    assert late(0).penalty("ann", 5.0) == (None, "")


def test_late_by_a_platforms_word_counts_as_the_days_the_policy_gives():
    lost, words = late(0, by_platform=True).penalty("ann", 4.0)
    assert lost == pytest.approx(0.4) and "says the learning platform's file name" in words
    assert (
        late(0, True, policy(percent_per_day=10, platform_late_days=0)).penalty("ann", 4.0)[0]
        is None
    )


def test_another_plugin_is_asked_the_same_way():
    config = Config()
    config.LateSubmissionPlugin.penalty_method = "zero"
    zero = LateSubmissionPlugin(config=config)
    lost, words = late(60, plugin=zero).penalty("ann", 4.0)
    assert lost == 4.0 and "LateSubmissionPlugin" in words


def test_a_late_notebook_is_flagged_on_its_result(tmp_path):
    """As the grading command's store calls it: the score from the notebook's grades (a
    manual score wins), the flag on that notebook."""
    notebook = SimpleNamespace(
        name="floor_plan",
        grades=[
            SimpleNamespace(auto_score=2.0, manual_score=None),
            SimpleNamespace(auto_score=0.0, manual_score=1.0),
            SimpleNamespace(auto_score=None, manual_score=None),
        ],
    )
    result = SubmissionResult("01_floor_plan", "ann", None, True)
    assert late(DAY).flag("ann", notebook, result) == pytest.approx(0.3)
    assert [(f.notebook, f.reason[:5]) for f in result.flags] == [("floor_plan", "late:")]


def test_collects_note_of_a_platforms_late_is_read_only_from_collects_own_file(tmp_path):
    (tmp_path / seal.REFUSALS).write_text(seal.collect_notes(["a note"], late=True))
    assert seal.late_by_platform(tmp_path) and seal.read_refusals(tmp_path) == ["a note"]
    (tmp_path / seal.REFUSALS).write_text('{"late": true, "notes": []}')  # not collect's
    assert not seal.late_by_platform(tmp_path)


def test_without_a_policy_late_work_is_flagged_and_not_penalized():
    """A course whose configuration names no plugin (an nbgrader_config.py of its own) gets
    nbgrader's default; LatePolicy without a share per day flags only."""
    course = SimpleNamespace(config=Config())
    submission = SimpleNamespace(total_seconds_late=3 * DAY, duedate=DUE)
    unset = Late.of(course, submission, Path("/nonexistent"))
    assert type(unset.plugin) is LateSubmissionPlugin
    lost, words = unset.penalty("ann", 6.0)
    assert lost is None and words.startswith("late: handed in 3 days after the due date")
    lost, words = late(DAY, plugin=policy()).penalty("ann", 6.0)
    assert lost == 0.0 and "loses no points" in words
