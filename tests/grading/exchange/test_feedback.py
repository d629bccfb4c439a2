"""nbgrader's release of feedback as the course configures it (`SafeReleaseFeedback`).

A real `nbgrader release_feedback`: a student whose submission nbgrader's submit did not
make must not stop the release of the whole class.
"""

from __future__ import annotations

import pytest

from support.exchange import AS_ROOT, ASSIGNMENT, nbgrader, now_stamp

pytestmark = AS_ROOT


@pytest.mark.process
def test_feedback_of_a_submission_nbgrader_did_not_make_costs_only_its_student(tmp_path, course):
    """A submission made by hand (no submission_secret.txt, whose hash names the page): plain
    nbgrader stops releasing the feedback of the whole class there."""
    (tmp_path / "exchange" / "kvlesson").mkdir(parents=True)
    for student, secret in (("daemon", "daemons secret"), ("bin", None)):
        folder = course / "feedback" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "ceiling.html").write_text(f"<p>feedback of {student}</p>")
        (folder / "timestamp.txt").write_text(now_stamp())
        if secret:
            (folder / "submission_secret.txt").write_text(secret)
    done = nbgrader(
        ["release_feedback", ASSIGNMENT, f"--Exchange.root={tmp_path / 'exchange'}"],
        course,
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    released = [p.read_text() for p in (tmp_path / "exchange" / "kvlesson" / "feedback").iterdir()]
    assert released == ["<p>feedback of daemon</p>"]
    assert (
        "No feedback released for bin: their submission holds no submission_secret.txt"
        in done.stdout + done.stderr
    )
