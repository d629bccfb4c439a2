"""Late work by the course's policy: flagged, and penalized as nbgrader_config.py says.

A submission is late when its time (timestamp.txt: when its files reached the exchange,
`kvlesson.grading.exchange.inbound`) is past the assignment's due date in the gradebook (and
the student's extension, if any) by more than the grace, or when a learning platform's
download says it is late and gives no time (Canvas's `late_` in a file name, kept by the zip
path as collect's note). nbgrader asks its late-submission plugin for a penalty while it
autogrades, with its own score of the notebook, before the course's marks replace it; so the
grading command asks the same plugin again once the marks are in, writes the penalty into
the gradebook (the score nbgrader exports is the raw score less it) and flags the
submission with how late it was and what it cost.

The policy is `LatePolicy`, which nbgrader_config.py selects for nbgrader too (so the
formgrader's own Autograde button uses it) and configures:

    c.AssignLatePenalties.plugin_class = "kvlesson.grading.grade.lateness.LatePolicy"
    c.LatePolicy.grace_minutes = 0          # later than the due date by less: on time
    c.LatePolicy.percent_per_day = 10       # of the notebook's score, per started day late
    c.LatePolicy.platform_late_days = 1     # "late" with no time: late by this many days

Another plugin class (nbgrader's own `LateSubmissionPlugin` with `penalty_method = "zero"`)
is asked the same way; a configuration that names none gets nbgrader's default (late work
flagged, not penalized), and `LatePolicy` without a share per day flags only. The penalty is the share of the score when it is graded: points a
written answer gets later in the formgrader are not penalized (nbgrader's rule too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float, Integer
from traitlets.utils.importstring import import_item

from kvlesson.grading.course import seal
from kvlesson.grading.course.results import Flag

DAY = 86_400  # seconds


class LatePolicy(LateSubmissionPlugin):
    """The course's late policy: a share of the notebook's score per started day late,
    after a grace; at most the whole score."""

    grace_minutes = Float(0, min=0, help="Late by less than this: on time").tag(config=True)
    percent_per_day = Float(
        0, min=0, max=100, help="Share of the notebook's score taken per started day late"
    ).tag(config=True)
    platform_late_days = Integer(
        1, min=0, help="Days late of a submission a learning platform calls late, with no time"
    ).tag(config=True)

    def days_late(self, seconds: float) -> int:
        """Started days late after the grace (0: on time)."""
        over = seconds - self.grace_minutes * 60
        return math.ceil(over / DAY) if over > 0 else 0

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float):
        """nbgrader's question: the points `score` loses for being this late (None: none)."""
        days = self.days_late(total_seconds_late)
        return min(score, score * self.percent_per_day / 100 * days) if days else None

    def words(self) -> str:
        """The policy, in words."""
        grace = f" after {self.grace_minutes:g} minutes' grace" if self.grace_minutes else ""
        return f"the course's policy takes {self.percent_per_day:g}% of the score per started day late{grace}"


@dataclass(frozen=True)
class Late:
    """How late one submission is: seconds past its due date (0 if none or on time), the
    due date, and whether a learning platform called it late without a time."""

    seconds: float
    due: object  # the due date (a datetime) or None
    by_platform: bool
    plugin: LateSubmissionPlugin

    @classmethod
    def of(cls, course, submission, folder: Path) -> Late:
        """The lateness of nbgrader's `submission` (its time against its due date, with an
        extension) and of its collected `folder`, under the course's policy."""
        # nbgrader's own when the configuration names none: late work flagged, not penalized
        name = course.config.AssignLatePenalties.get("plugin_class", LateSubmissionPlugin)
        plugin_class = import_item(name) if isinstance(name, str) else name
        return cls(
            float(submission.total_seconds_late or 0),
            submission.duedate,
            seal.late_by_platform(folder),
            plugin_class(config=course.config),
        )

    def penalty(self, student: str, score: float) -> tuple[float | None, str]:
        """What a notebook with `score` points loses, and the flag's words ("" when the
        submission is on time by the policy)."""
        seconds, said = self.seconds, ""
        if isinstance(self.plugin, LatePolicy):
            if not self.plugin.days_late(seconds):
                seconds = self.plugin.platform_late_days * DAY if self.by_platform else 0
            policy = self.plugin.words()
        else:
            seconds = seconds or (DAY if self.by_platform else 0)
            policy = f"the course's late plugin ({type(self.plugin).__name__})"
        if not seconds:
            return None, ""
        lost = self.plugin.late_submission_penalty(student, score, seconds)
        lost = None if lost is None else max(0.0, min(float(lost), score))
        if self.seconds and self.due is not None:
            said = f"handed in {_duration(self.seconds)} after the due date ({self.due:%Y-%m-%d %H:%M} UTC)"
        else:
            said = "handed in late, says the learning platform's file name (no time given)"
        cost = f"{lost:g} of its {score:g} points" if lost else "no points"
        return lost, f"late: {said}; {policy}: it loses {cost}"

    def flag(self, student: str, notebook, result) -> float | None:
        """The penalty of nbgrader's submitted `notebook` (its score as the marks just set it),
        with a flag on `result` for that notebook when it is late; None when on time."""
        score = sum(
            (g.manual_score if g.manual_score is not None else g.auto_score) or 0.0
            for g in notebook.grades
        )
        lost, words = self.penalty(student, score)
        if words:
            result.flags.append(Flag(words, notebook=notebook.name))
        return lost


def _duration(seconds: float) -> str:
    """A lateness in words: "2 days 3 h 5 min", or "21 s" under a minute."""
    days, rest = divmod(int(seconds), DAY)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "days" if days != 1 else "day"), (hours, "h"), (minutes, "min")]
    said = " ".join(f"{n} {unit}" for n, unit in parts if n)
    return said or f"{secs} s"
