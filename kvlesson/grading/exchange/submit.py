"""Submit: each submission folder closed to other students (`SafeSubmit`).

nbgrader's own `submit` leaves every submission folder writable by every account. `SafeSubmit`
closes each submission folder to its owner and the inbound folder's group (the instructors),
refuses to submit when that group holds the student too, and tells an account that may not
add to inbound (not one of the course's students) so in words.
"""

from __future__ import annotations

import grp
import os
from pathlib import Path

from nbgrader.exchange.default.submit import ExchangeSubmit

from kvlesson.grading.exchange.accounts import _me

SUBMISSION_MODE = 0o770  # the student who submitted, and the instructors (inbound's group)


class SafeSubmit(ExchangeSubmit):
    """nbgrader's submit, with the submission folder closed to other students.

    nbgrader opens each submission folder to every account (0777, "so the instructor can
    delete it later"): a student who learns a classmate's folder name can write into it
    and rename what is in it. Here the folder is left to the student and to the inbound
    folder's group, which it takes because inbound is set-group-id: the instructors
    (docs/jupyterhub.md). A group that holds the student would hold other students too,
    so then nothing is submitted and the student is told to ask for the exchange's set-up
    to be fixed. Only the course's students may add to inbound (docs/jupyterhub.md gives it
    to their group alone): any other account is told so, in words, before anything is
    copied."""

    def init_dest(self):
        inbound = os.path.join(self.root, self.coursedir.course_id, "inbound")
        if os.path.isdir(inbound) and not os.access(inbound, os.W_OK | os.X_OK):
            self.fail(
                f"Not submitted: the account {_me()} may not hand in to {inbound}; only "
                f"the course's students may. If you are one, ask whoever runs the "
                f"course to add your account to its students."
            )
        super().init_dest()
        problem = group_problem(Path(self.inbound_path))
        if problem:
            self.fail(problem)

    def copy_files(self):
        super().copy_files()
        os.chmod(os.path.join(self.inbound_path, self.assignment_filename), SUBMISSION_MODE)


def group_problem(inbound: Path) -> str:
    """Why a submission in `inbound` would not be private, or "": its group (which every
    submission takes) must not hold the student who submits, unless that account owns
    inbound itself (an instructor trying the exchange)."""
    info = inbound.stat()
    if info.st_uid == os.getuid() or info.st_gid not in os.getgroups() + [os.getgid()]:
        return ""
    group = grp.getgrgid(info.st_gid).gr_name
    return (
        f"Not submitted: the course's inbound folder {inbound} belongs to the group "
        f"{group}, which you are in, so other students in it could read and change your "
        f"submission. Ask whoever runs the course to give inbound the instructors' group "
        f"(docs/jupyterhub.md, the exchange)."
    )
