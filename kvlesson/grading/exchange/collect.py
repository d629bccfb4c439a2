"""Collect: each student's own newest submission, sealed (`SafeCollect`).

nbgrader's own `collect` copies each submission with `shutil.copytree`, following symbolic
links as the instructor (a link planted in the exchange to the instructor's notebook, `keys/`
or the gradebook would come back as the student's work); it takes a submission's student
from the folder's name, so a student can hand in work under a classmate's name, and its time
from the name too, so late work can be named with an earlier time; any entry of inbound it
cannot read (a file, a link, a name without a time) stops the collection of the whole class,
and under `--update` it deletes a student's earlier copy before it knows whether the new one
can be copied.

`SafeCollect` looks at every entry of inbound on its own: a file, a link, a folder it cannot
list, a name without a time or that names no student (not UTF-8, a line break) is not
collected and is flagged, and costs that entry only. Of the rest it takes each student's
newest, made by that student (a folder named after one student but made by another is left
out), and only the course's students when the gradebook holds a roster. A submission's time
is when its files were last changed in the exchange, not the time its folder's name holds
(kvlesson.grading.exchange.inbound reads both). Each submission is sealed
(`kvlesson.grading.course.seal`: plain files only) into a new folder that replaces the
collected copy only once it is whole, with collect's notes beside it (`REFUSALS`, always
collect's own: a student's file of that name is left out, and said so).
"""

from __future__ import annotations

import datetime
import os
import shutil
from pathlib import Path
from typing import Any

from nbgrader.api import Gradebook
from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect

from kvlesson.grading.course import opened
from kvlesson.grading.course.seal import SealLimits, seal, write_refusals
from kvlesson.grading.exchange.accounts import _me, account_name
from kvlesson.grading.exchange.inbound import (
    NO_TIME,
    id_problem,
    last_change,
    look_at,
    put_back_time,
    shown,
    time_notes,
)


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
        changed, last, looked, info = NO_TIME, "", None, None
        if not problem:
            problem, info = look_at(path)
        if info is not None:
            looked = opened.Identity.of(info)
            changed, last = last_change(path, looked)
            owner = account_name(info.st_uid)
            if self.check_owner and owner not in (username, _me()):
                problem = f"it is named after {username} but was made by {owner}"
        return {
            "username": username,
            "filename": name,
            "timestamp": changed,
            "named": named,
            "last": last,
            "problem": problem,
            "outsider": outsider,
            "identity": looked,  # the folder looked at: the one sealed, or nothing
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
            looked = record["identity"]
            notes = [
                f"not collected: {refusal}"
                for refusal in seal(Path(src), dest, limits, tuple(self.coursedir.ignore), looked)
            ]
            # Changed while it was copied: the later time counts.
            changed, last = max((record["timestamp"], record["last"]), last_change(src, looked))
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
