"""nbgrader's exchange, made safe between accounts (nbgrader_config.py selects these).

nbgrader's own exchange trusts every account that can write to it. Its `collect` copies
each submission with `shutil.copytree`, following symbolic links as the instructor (a link
planted in the exchange to the instructor's notebook, `keys/` or the gradebook would come
back as the student's work); it takes a submission's student from the folder's name, so a
student can hand in work under a classmate's name, and its time from the name too, so late
work can be named with an earlier time; any entry of inbound it cannot read (a file, a link,
a name without a time) stops the collection of the whole class, and under `--update` it
deletes a student's earlier copy before it knows whether the new one can be copied. Its
`submit` leaves every submission folder writable by every account. Here:

- `SafeCollect` looks at every entry of inbound on its own: a file, a link, a folder it
  cannot list, a name without a time or that names no student (not UTF-8, a line break) is
  not collected and is flagged, and costs that entry only. Of the rest it takes each
  student's newest, made by that student (a folder named after one student but made by
  another is left out), and only the course's students when the gradebook holds a roster.
  A submission's time is when its files were last changed in the exchange (their change
  time, which no account can set back), not the time its folder's name holds; a name that
  says otherwise is flagged. Each submission is sealed (`kvlesson.grading.course.seal`:
  plain files only) into a new folder that replaces the collected copy only once it is
  whole, with collect's notes beside it (`REFUSALS`, always collect's own: a student's file
  of that name is left out, and said so).
- `SafeSubmit` closes each submission folder to its owner and the inbound folder's group
  (the instructors), refuses to submit when that group holds the student too, and tells an
  account that may not add to inbound (not one of the course's students) so in words.
- `SafeReleaseFeedback` releases feedback only from plain files, never through a link, and
  a submission nbgrader's submit did not make (no secret to name its page by) costs its
  student's feedback only, said in the log.
"""

from __future__ import annotations

import datetime
import glob
import grp
import os
import pwd
import shutil
import stat
from pathlib import Path
from typing import Any

from nbgrader.api import Gradebook
from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import parse_utc

from kvlesson.grading.course.seal import SealLimits, kind_of, seal, write_refusals

SLACK = datetime.timedelta(minutes=2)  # a folder's name and its files' last change, unflagged
SUBMISSION_MODE = 0o770  # the student who submitted, and the instructors (inbound's group)
MOST_ENTRIES = 2000  # the entries of one submission looked at for its time (seal keeps 200)
NO_TIME = datetime.datetime.min  # the time of an entry that is not collected


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, with every entry of inbound checked on its own and each submission
    sealed instead of copied. Where every account is the same Unix user (Zero to JupyterHub's
    pods) the owner says nothing: `ExchangeCollect.check_owner = False` turns that check off,
    as for nbgrader."""

    roster: set[str] | None = None  # the gradebook's students; None: no roster, collect all

    def init_src(self):
        """The roster first (the course's students, from the gradebook), then nbgrader's
        choice of each student's newest submission among the records below."""
        self.roster = course_roster(self.coursedir.db_url, self.coursedir.course_id)
        if self.roster is None:
            self.log.warning(
                "The gradebook holds no roster: every account that handed in is "
                "collected. Import the class list first (nbgrader db student "
                "import roster.csv) to collect the course's students only."
            )
        super().init_src()

    def _path_to_record(self, path: str) -> dict[str, Any]:
        """nbgrader's record of an entry of inbound, never raising: its student, its time
        (when its files were last changed in the exchange), the time its name holds, and why
        it is not collected ("" if it is) or why its student is not one of the course's."""
        name = os.path.basename(path)
        try:
            parsed = super()._path_to_record(path)
            username, named, problem = parsed["username"], parsed["timestamp"], ""
        except (ExchangeError, ValueError, OverflowError):
            username, named = name.split("+", 1)[0], None
            problem = "its name holds no submission time"
        outsider = id_problem(username)
        if not outsider and self.roster is not None and username not in self.roster:
            outsider = (
                f"{username} is not on the course's roster (nbgrader db student list); "
                f"if they belong to the course, add them (nbgrader db student add "
                f"{username}) and collect again"
            )
        changed, last = NO_TIME, ""
        if not problem:
            problem = entry_problem(path)
        if not problem:
            changed, last = last_change(path)
        owner = owner_of(path)
        if self.check_owner and not problem and owner not in (username, _me()):
            problem = f"it is named after {username} but was made by {owner}"
        return {
            "username": username,
            "filename": name,
            "timestamp": changed,
            "named": named,
            "last": last,
            "problem": problem,
            "outsider": outsider,
        }

    def _sort_by_timestamp(self, records):
        """Each student's entries, what is not collected said in the log: those that can be
        collected first, newest first."""
        for record in records:
            why = record["outsider"] or record["problem"]
            if why:
                self.log.warning("Not collecting %s: %s", shown(record["filename"]), why)
        return sorted(records, key=lambda r: (not r["problem"], r["timestamp"]), reverse=True)

    def copy_files(self):
        """Collect each student's chosen entry; whatever goes wrong with one costs that one
        only, and never the copy collected before."""
        if not self.src_records:
            self.log.warning(
                "No submissions of '%s' for course '%s' to collect",
                self.coursedir.assignment_id,
                self.coursedir.course_id,
            )
        for record in self.src_records:
            try:
                self._collect(record)
            except Exception as error:  # one entry, never the class
                self.log.error(
                    "Not collecting %s: %s: %s (the others are collected)",
                    shown(record["filename"]),
                    type(error).__name__,
                    error,
                )

    def _collect(self, record: dict[str, Any]) -> None:
        if record["outsider"]:
            return  # said when sorted
        student, assignment = record["username"], self.coursedir.assignment_id
        dest = Path(
            self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment)
        )
        if dest.is_dir():
            before = self._collected_time(dest)
            if record["problem"]:
                self.log.warning(
                    "Keeping the copy of %s's %s collected before: the newest "
                    "entry in inbound is not collected",
                    student,
                    assignment,
                )
                return
            newer = before is None or record["timestamp"] > before
            if not (self.update and newer or self.before_duedate and before != record["timestamp"]):
                self.log.info(
                    "%s: %s %s",
                    "No newer submission to collect"
                    if self.update
                    else "Submission already exists, use --update to update",
                    student,
                    assignment,
                )
                return
            self.log.info("Updating submission: %s %s", student, assignment)
        else:
            self.log.info("Collecting submission: %s %s", student, assignment)
        src = os.path.join(self.inbound_path, record["filename"])
        fresh = dest.parent / f".{dest.name}.kvlesson-collecting"
        shutil.rmtree(fresh, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._seal(record, src, fresh)
        except BaseException:
            shutil.rmtree(fresh, ignore_errors=True)
            raise
        replace(fresh, dest)

    def _collected_time(self, dest: Path) -> datetime.datetime | None:
        try:
            return self.coursedir.get_existing_timestamp(str(dest))
        except (ExchangeError, ValueError, OverflowError, OSError):
            return None  # unreadable: any entry that can be collected replaces it

    def do_copy(self, src, dest, log=None):
        """nbgrader's copy of one submission: here, sealed into the new folder `dest`."""
        self._seal(self._path_to_record(src), src, Path(dest))

    def _seal(self, record: dict[str, Any], src: str, dest: Path) -> None:
        """Seal the entry `src` into the new folder `dest`, with its time in timestamp.txt
        and collect's notes beside it; an entry that is not collected becomes a folder with
        the note only, so that the grading command flags it."""
        if record["problem"]:
            dest.mkdir()
            notes = [f"{shown(record['filename'])} was not collected: {record['problem']}"]
        else:
            limits = SealLimits(file_bytes=int(self.coursedir.max_file_size * 1000))
            notes = [
                f"not collected: {refusal}"
                for refusal in seal(Path(src), dest, limits, tuple(self.coursedir.ignore))
            ]
            # Changed while it was copied: the later time counts.
            changed, last = max((record["timestamp"], record["last"]), last_change(src))
            notes += time_notes(record["named"], changed, last)
            notes += put_back_time(dest, changed, record["named"])
        for note in notes:
            self.log.warning("%s: %s", shown(os.path.basename(src)), note)
        write_refusals(dest, notes)


def replace(fresh: Path, dest: Path) -> None:
    """Put the folder `fresh` at `dest`, the folder there before removed only once the new
    one is in place."""
    if not dest.exists():
        os.rename(fresh, dest)
        return
    old = dest.parent / f".{dest.name}.kvlesson-replaced"
    shutil.rmtree(old, ignore_errors=True)
    os.rename(dest, old)
    os.rename(fresh, dest)
    shutil.rmtree(old, ignore_errors=True)


def course_roster(db_url: str, course_id: str) -> set[str] | None:
    """The ids of the course's students in the gradebook; None when it holds none (no
    roster imported)."""
    with Gradebook(db_url, course_id) as gradebook:
        ids = {student.id for student in gradebook.students}
    return ids or None


def shown(name: str) -> str:
    """An entry's name as a log line or a note may show it: a name that is not UTF-8 with
    its odd bytes escaped, a line break as \\n."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def id_problem(username: str) -> str:
    """Why an entry's name names no student ("" when it names one)."""
    try:
        username.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8 text, so it names no student"
    if not username.isprintable():
        return "its name holds a line break or another control character, so it names no student"
    if username in ("", ".", "..") or "/" in username:
        return "its name names no student"
    return ""


def entry_problem(path: str) -> str:
    """Why an entry of inbound is not a submission that can be collected ("" if it is)."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"it cannot be looked at ({error.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return f"it is {kind_of(info.st_mode) or 'a file'}, not a submission folder"
    try:
        os.listdir(path)
    except OSError as error:
        return f"its folder cannot be listed ({error.strerror})"
    return ""


def last_change(folder: str | Path) -> tuple[datetime.datetime, str]:
    """When anything in the submission folder was last changed (UTC), and what: the latest
    change time (ctime) of the folder and everything in it, links not followed. No account
    can set a change time back: it is when the submission was last written."""
    latest, what, seen = NO_TIME, "", 0
    for top, dirs, files in os.walk(folder):  # links not followed
        for name in (".", *dirs, *files):
            path = os.path.join(top, name)
            try:
                changed = os.lstat(path).st_ctime
            except OSError:
                continue
            moment = datetime.datetime.fromtimestamp(changed, datetime.timezone.utc)
            moment = moment.replace(tzinfo=None)
            if moment > latest:
                where = os.path.relpath(path, folder)
                latest, what = moment, "the folder" if where == "." else shown(where)
            seen += 1
            if seen >= MOST_ENTRIES:
                return latest, what
    return latest, what


def time_notes(named: datetime.datetime | None, changed: datetime.datetime, last: str) -> list[str]:
    """In words, when the time a submission's folder name holds is not when its files were
    last changed: the later is the time it counts at."""
    if named is None or abs(changed - named) <= SLACK:
        return []
    when = f"{changed:%Y-%m-%d %H:%M:%S} UTC"
    if changed > named:
        return [
            f"its folder's name says it was handed in at {named:%Y-%m-%d %H:%M:%S} UTC, "
            f"but {last} was last changed in the exchange at {when} (named with an "
            f"earlier time, or edited after it was handed in): it counts as handed in "
            f"at {when}"
        ]
    return [
        f"its folder's name holds a time after its files were last changed "
        f"({named:%Y-%m-%d %H:%M:%S} UTC): it counts as handed in at {when}"
    ]


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
    return (
        f"Not submitted: the course's inbound folder {inbound} belongs to the group "
        f"{group}, which you are in, so other students in it could read and change your "
        f"submission. Ask whoever runs the course to give inbound the instructors' group "
        f"(docs/jupyterhub.md, the exchange)."
    )


def put_back_time(
    dest: Path, counted: datetime.datetime, named: datetime.datetime | None
) -> list[str]:
    """Write the time the submission counts at into the collected copy's timestamp.txt,
    which nbgrader reads later (for lateness, and to decide what to update; a time it cannot
    read stops a whole `collect --update`); in words, a timestamp.txt that did not say the
    time its folder's name holds, as nbgrader's submit writes both."""
    path = dest / "timestamp.txt"
    written = path.read_text(errors="replace").strip() if path.is_file() else ""
    mine = counted.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    path.write_text(mine)
    try:
        if not written or named is None or parse_utc(written) == named:
            return []
    except (ValueError, OverflowError):
        pass
    return [
        f"timestamp.txt said {shown(written[:40])!r}, not the time its folder's name holds: "
        f"it is {mine}, the time the submission counts at"
    ]


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
