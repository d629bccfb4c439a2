"""The release of feedback: from plain files only, student by student (`SafeReleaseFeedback`).

`SafeReleaseFeedback` releases feedback only from plain files, never through a link, and a
submission nbgrader's submit did not make (no secret to name its page by) costs its
student's feedback only, said in the log.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback

from kvlesson.grading.course.seal import kind_of


class SafeReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release of feedback, refusing a feedback folder that holds anything but
    plain files and folders (the grader writes only those), and leaving out, in words, a
    student whose submission was not made by nbgrader's submit (no `submission_secret.txt`,
    whose hash names the page: plain nbgrader stops the release for the whole class there)."""

    def copy_files(self):
        student = self.coursedir.student_id or "*"
        root = self.coursedir.format_path(
            self.coursedir.feedback_directory, student, self.coursedir.assignment_id
        )
        bad, unnamed = [], []
        for folder in sorted(glob.glob(root)):
            paths = [folder] + [
                os.path.join(top, name)
                for top, dirs, files in os.walk(folder)  # links not followed
                for name in dirs + files
            ]
            bad += [
                f"{path} is {kind}"
                for path in paths
                if (kind := kind_of(os.lstat(path).st_mode)) is not None
            ]
            if not all(
                os.path.isfile(os.path.join(folder, name))
                for name in ("submission_secret.txt", "timestamp.txt")
            ):
                unnamed.append(Path(folder).parent.name)
        if bad:
            self.fail(
                "Feedback is not released: " + "; ".join(bad) + ". The grader writes "
                "plain files only: remove these and generate the feedback again."
            )
        for name in unnamed:
            self.log.warning(
                "No feedback released for %s: their submission holds no "
                "submission_secret.txt (it was not made by nbgrader's submit), "
                "so no page name only they know exists; give them %s yourself",
                name,
                self.coursedir.format_path(
                    self.coursedir.feedback_directory, name, self.coursedir.assignment_id
                ),
            )
        if unnamed:
            excluded = (
                [self.coursedir.student_id_exclude] if self.coursedir.student_id_exclude else []
            )
            self.coursedir.student_id_exclude = ",".join(excluded + unnamed)
        super().copy_files()
