"""nbgrader's release of feedback as the course configures it (`SafeReleaseFeedback`).

A real `nbgrader release_feedback`: a student whose submission nbgrader's submit did not
make must not stop the release of the whole class.
"""

from __future__ import annotations

import stat

import pytest
from nbgrader.utils import notebook_hash

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
    outbound = tmp_path / "exchange" / "kvlesson" / "feedback"
    released = [p.read_text() for p in outbound.iterdir()]
    assert released == ["<p>feedback of daemon</p>"]
    [page] = outbound.iterdir()  # named by the secret's hash only, readable by its student
    assert page.name == f"{notebook_hash(secret='daemons secret', notebook_id='ceiling')}.html"
    assert stat.S_IMODE(page.stat().st_mode) == 0o644
    # the log names the page where the student finds it, never a temporary name (K4)
    assert f"Released the feedback of daemon on kvlesson/{ASSIGNMENT}/ceiling to {page}" in (
        done.stdout + done.stderr
    )
    assert "-tmp.html" not in done.stdout + done.stderr
    assert (
        "No feedback released for bin: their submission holds no submission_secret.txt"
        in done.stdout + done.stderr
    )
