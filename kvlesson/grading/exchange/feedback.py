"""The release of feedback: from plain files only, student by student (`SafeReleaseFeedback`).

`SafeReleaseFeedback` releases feedback only from plain files, each opened through its
folder's descriptor and never through a link (`kvlesson.grading.course.opened`), and a
submission nbgrader's submit did not make (no secret to name its page by) costs its
student's feedback only, said in the log.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

from kvlesson.grading.course import opened
from kvlesson.grading.course.seal import kind_of
from kvlesson.grading.course.text import printable

NAMING = ("submission_secret.txt", "timestamp.txt")  # what names a student's page
PAGE_MODE = 0o644  # the student reads it by its name; nobody may list the folder (711)


class SafeReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release of feedback, refusing a feedback folder that holds anything but
    plain files and folders (the grader writes only those), reading every file through its
    folder's descriptor, and leaving out, in words, a student whose submission was not made
    by nbgrader's submit (no `submission_secret.txt`, whose hash names the page: plain
    nbgrader stops the release for the whole class there)."""

    def copy_files(self):
        student = self.coursedir.student_id or "*"
        excluded = set(filter(None, self.coursedir.student_id_exclude.split(",")))
        pattern = self.coursedir.format_path(
            self.coursedir.feedback_directory, student, self.coursedir.assignment_id
        )
        folders = [f for f in sorted(glob.glob(pattern)) if Path(f).parent.name not in excluded]
        bad = [problem for folder in folders for problem in _not_plain(folder)]
        if bad:
            self.fail(
                "Feedback is not released: " + "; ".join(bad) + ". The grader writes "
                "plain files only: remove these and generate the feedback again."
            )
        for folder in folders:
            self._release(Path(folder))

    def _release(self, folder: Path) -> None:
        """Release the pages of one student's feedback folder, or say why not."""
        name = folder.parent.name
        with opened.folder(folder) as fd:
            secret, timestamp = (opened.read_small(fd, part) for part in NAMING)
            if secret is None or timestamp is None:
                self.log.warning(
                    "No feedback released for %s: their submission holds no "
                    "submission_secret.txt (it was not made by nbgrader's submit), "
                    "so no page name only they know exists; give them %s yourself",
                    printable(name),
                    folder,
                )
                return
            for page, info in opened.listing(fd):
                if page.endswith(".html") and not isinstance(info, OSError):
                    self._copy(fd, page, info, secret.decode(errors="replace"), name)

    def _copy(self, fd: int, page: str, info: os.stat_result, secret: str, name: str) -> None:
        """One page into the exchange, under the name only its student can work out: written
        beside it first, then moved into place in one step."""
        notebook = page[: -len(".html")]
        final = Path(self.dest_path) / f"{notebook_hash(secret=secret, notebook_id=notebook)}.html"
        fresh = final.with_name(f".{final.name}.kvlesson-new")
        with opened.open_file(fd, page, info) as source, open(fresh, "wb") as out:
            out.write(source.read())
        os.chmod(fresh, PAGE_MODE)
        os.replace(fresh, final)
        self.log.info(
            "Released the feedback of %s on %s/%s/%s to %s",
            printable(name),
            self.coursedir.course_id,
            self.coursedir.assignment_id,
            printable(notebook),
            final,
        )


def _not_plain(folder: str) -> list[str]:
    """What in a feedback folder (itself included) is neither a plain file nor a folder."""
    try:
        with opened.folder(folder) as fd:
            found = [(where, info.st_mode) for where, info in opened.tree(fd)]
    except OSError as error:
        try:
            kind = kind_of(os.lstat(folder).st_mode) or "not a folder"
        except OSError:
            kind = f"unreadable ({error.strerror})"
        return [f"{folder} is {kind}"]
    return [
        f"{os.path.join(folder, where)} is {kind}"
        for where, mode in found
        if (kind := kind_of(mode)) is not None
    ]
