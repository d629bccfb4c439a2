"""nbgrader's exchange, made safe between accounts (nbgrader_config.py selects these).

nbgrader's own exchange trusts every account that can write to it. Its `collect` copies
each submission with `shutil.copytree`, following symbolic links as the instructor (a link
planted in the exchange to the instructor's notebook, `keys/` or the gradebook would come
back as the student's work); it takes a submission's student from the folder's name, so a
student can hand in work under a classmate's name; a folder name or `timestamp.txt` it
cannot read stops the collection of the whole class. Its `submit` leaves every
submission folder writable by every account. Here:

- `SafeCollect` seals each submission (`kvlesson.grading.course.seal`: plain files only), skips a
  folder named after one student but made by another, puts back the submission time the
  folder's name holds, and notes a file changed in the exchange after that time; what it
  left out or noticed is written beside the submission (`REFUSALS`), for the grading
  command to flag.
- `SafeSubmit` closes each submission folder to its owner and the inbound folder's group
  (the instructors), and refuses to submit when that group holds the student too.
- `SafeReleaseFeedback` releases feedback only from plain files, never through a link.
"""

from __future__ import annotations

import datetime
import glob
import grp
import json
import os
import pwd
from pathlib import Path

from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import parse_utc

from kvlesson.grading.course.seal import REFUSALS, SealLimits, kind_of, seal

SLACK = datetime.timedelta(minutes=2)  # submit writes its files within seconds of its time
SUBMISSION_MODE = 0o770  # the student who submitted, and the instructors (inbound's group)


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, with each submission checked and sealed instead of copied.
    Where every account is the same Unix user (Zero to JupyterHub's pods) the owner says
    nothing: `ExchangeCollect.check_owner = False` turns that check off, as for nbgrader."""

    def _path_to_record(self, path):
        """nbgrader's record of a submission folder, with what collect must know about who
        made it; a name nbgrader cannot read (it would stop the whole collection) sorts last
        and is refused when copied."""
        name = os.path.basename(path)
        try:
            record = super()._path_to_record(path)
            problem = ""
        except (ExchangeError, ValueError, OverflowError):
            record = {"username": name.split("+", 1)[0], "filename": name,
                      "timestamp": datetime.datetime.min}
            problem = "its name holds no submission time"
        owner = owner_of(path)
        if self.check_owner and not problem and owner not in (record["username"], _me()):
            problem = f"it is named after {record['username']} but was made by {owner}"
        return {**record, "problem": problem}

    def _sort_by_timestamp(self, records):
        """Each student's submissions, newest first: those the student made before any that
        another account made in their name."""
        for record in records:
            if record["problem"]:
                self.log.warning("Not collecting %s: %s", record["filename"], record["problem"])
        return sorted(records, key=lambda r: (not r["problem"], r["timestamp"]), reverse=True)

    def do_copy(self, src, dest, log=None):
        record = self._path_to_record(src)
        notes = [f"{record['filename']} was not collected: {record['problem']}"] \
            if record["problem"] else []
        if notes:
            os.makedirs(dest)
        else:
            limits = SealLimits(file_bytes=int(self.coursedir.max_file_size * 1000))
            notes += [f"not collected: {refusal}" for refusal in
                      seal(Path(src), Path(dest), limits, tuple(self.coursedir.ignore))]
            notes += changed_after(Path(src), record["timestamp"])
            notes += put_back_time(Path(dest), record["timestamp"])
        for note in notes:
            self.log.warning("%s: %s", src, note)
        if notes:
            (Path(dest) / REFUSALS).write_text(json.dumps(notes, indent=1))


class SafeSubmit(ExchangeSubmit):
    """nbgrader's submit, with the submission folder closed to other students.

    nbgrader opens each submission folder to every account (0777, "so the instructor can
    delete it later"): a student who learns a classmate's folder name can write into it
    and rename what is in it. Here the folder is left to the student and to the inbound
    folder's group, which it takes because inbound is set-group-id: the instructors
    (docs/jupyterhub.md). A group that holds the student would hold other students too,
    so then nothing is submitted and the student is told to ask for the exchange's set-up
    to be fixed."""

    def init_dest(self):
        super().init_dest()
        problem = group_problem(Path(self.inbound_path))
        if problem:
            self.fail(problem)

    def copy_files(self):
        super().copy_files()
        os.chmod(os.path.join(self.inbound_path, self.assignment_filename), SUBMISSION_MODE)


def owner_of(path: str) -> str:
    """The account that owns `path` (the link itself, never what it points to)."""
    uid = os.lstat(path).st_uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user id {uid}"


def _me() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


def group_problem(inbound: Path) -> str:
    """Why a submission in `inbound` would not be private, or "": its group (which every
    submission takes) must not hold the student who submits, unless that account owns
    inbound itself (an instructor trying the exchange)."""
    info = inbound.stat()
    if info.st_uid == os.getuid() or info.st_gid not in os.getgroups() + [os.getgid()]:
        return ""
    group = grp.getgrgid(info.st_gid).gr_name
    return (f"Not submitted: the course's inbound folder {inbound} belongs to the group "
            f"{group}, which you are in, so other students in it could read and change your "
            f"submission. Ask whoever runs the course to give inbound the instructors' group "
            f"(docs/jupyterhub.md, the exchange).")


def changed_after(folder: Path, submitted: datetime.datetime) -> list[str]:
    """The files of a submission folder whose status changed well after its submission
    time (UTC), in words: nbgrader's submit writes them within seconds, so such a file was
    edited, replaced or backdated in the exchange afterwards. A file's change time (ctime)
    cannot be set by its owner."""
    late = []
    for top, dirs, files in os.walk(folder):
        for name in [*dirs, *files, "."]:
            path = Path(top) / name
            changed = datetime.datetime.fromtimestamp(os.lstat(path).st_ctime,
                                                      datetime.timezone.utc).replace(tzinfo=None)
            if changed > submitted + SLACK:
                where = path.relative_to(folder).as_posix() if name != "." else "the folder"
                late.append(f"{where} was changed in the exchange {_span(changed - submitted)} "
                            f"after the submission's time ({submitted:%Y-%m-%d %H:%M} UTC)")
    return sorted(set(late))


def put_back_time(dest: Path, submitted: datetime.datetime) -> list[str]:
    """Write the submission time the folder's name holds into the collected copy's
    timestamp.txt, which nbgrader reads later (for lateness, and to decide what to update;
    a time it cannot read stops a whole `collect --update`); what differed, in words."""
    path = dest / "timestamp.txt"
    written = path.read_text(errors="replace").strip() if path.is_file() else ""
    mine = submitted.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    path.write_text(mine)
    try:
        if written and parse_utc(written) == submitted:
            return []
    except (ValueError, OverflowError):
        pass
    return [f"timestamp.txt said {written[:40]!r}, not the submission's time: it is "
            f"{mine} again"] if written else []


def _span(delta: datetime.timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h"


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
