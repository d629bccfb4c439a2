"""nbgrader's exchange, copying plain files only (nbgrader_config.py selects these).

nbgrader's `collect` copies each submission out of the exchange with `shutil.copytree`,
which follows symbolic links as the instructor: a link planted in the exchange to the
instructor's notebook, to `keys/` or to the gradebook would be copied in as the student's
work. `SafeCollect` copies through `kvlesson.grading.seal` instead: plain files only, and
what it left out is written beside the submission (`REFUSALS`) for the grading command to
flag. `SafeReleaseFeedback` releases feedback only from plain files, never through a link.
"""

from __future__ import annotations

import glob
import json
import os
import stat
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback

from kvlesson.grading.seal import Limits, kind_of, seal

REFUSALS = "kvlesson-refused.json"  # beside a collected submission: what collect left out


def read_refusals(folder: Path) -> list[str]:
    """What collect left out of the submission in `folder`, in words (none if nothing)."""
    path = Path(folder) / REFUSALS
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return []
    if not stat.S_ISREG(info.st_mode) or info.st_size > 1 << 20:
        return [f"{REFUSALS} is not the grader's own list: the submission was tampered with"]
    try:
        refused = json.loads(path.read_text())
    except (OSError, ValueError):
        return [f"{REFUSALS} cannot be read: the submission was tampered with"]
    return [str(item) for item in refused] if isinstance(refused, list) else []


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, with each submission sealed instead of copied with copytree."""

    def do_copy(self, src, dest, log=None):
        limits = Limits(file_bytes=int(self.coursedir.max_file_size * 1000))
        refused = seal(Path(src), Path(dest), limits, tuple(self.coursedir.ignore))
        if refused:
            for refusal in refused:
                self.log.warning("Not collected from %s: %s", src, refusal)
            (Path(dest) / REFUSALS).write_text(json.dumps([str(r) for r in refused], indent=1))


class SafeReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release of feedback, refusing a feedback folder that holds anything but
    plain files and folders (the grader writes only those)."""

    def copy_files(self):
        student = self.coursedir.student_id or "*"
        root = self.coursedir.format_path(self.coursedir.feedback_directory, student,
                                          self.coursedir.assignment_id)
        bad = []
        for folder in sorted(glob.glob(root)):
            paths = [folder] + [os.path.join(top, name)
                                for top, dirs, files in os.walk(folder)  # links not followed
                                for name in dirs + files]
            bad += [f"{path} is {kind}" for path in paths
                    if (kind := kind_of(os.lstat(path).st_mode)) is not None]
        if bad:
            self.fail("Feedback is not released: " + "; ".join(bad) + ". The grader writes "
                      "plain files only: remove these and generate the feedback again.")
        super().copy_files()
