"""A learning platform's file names sorted into students' submissions (`PlatformFileNames`).

`nbgrader zip_collect` takes each file's student and notebook from its name, with the
pattern the instructor gives (`named_regexp`: docs/instructors.md). What nbgrader then does
lets one odd name cost the whole class, or a student: two files for one student's notebook
with no time in their names stop the collection of everyone ("Duplicate submission file. No
timestamps for comparison"), a student id is whatever the name holds (markup for the
formgrader's header), and a platform's mark that a file came late (Canvas's `late_`) is
dropped. `PlatformFileNames` plans the class once, before nbgrader copies anything:

* a student id must be one the course takes (`kvlesson.grading.course.ids`), and a
  notebook's name plain parts of a path: a file whose are not is left out, and said;
* of two or more files for one student's notebook, the newest is taken, by the platform's
  number (the pattern's `order` group: Canvas numbers each upload, a later one higher) or
  the pattern's `timestamp`; the others are left out. When nothing in their names says
  which is newer, none is taken and the student's submission holds a note saying why;
* a file the pattern's `late` group matched came late by the platform's word: the
  student's submission holds collect's note saying so, which the grading command flags and
  penalizes by the course's policy (`kvlesson.grading.grade.lateness`);
* the notes reach each student's submission as collect's own list (`kvlesson-refused.json`),
  a file nbgrader copies beside the notebooks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from nbgrader.plugins import FileNameCollectorPlugin
from nbgrader.utils import parse_utc

from kvlesson.grading.course import ids
from kvlesson.grading.course.seal import REFUSALS, collect_notes
from kvlesson.grading.exchange.inbound import shown
from kvlesson.grading.exchange.unpack import safe_parts

NOTES_FOLDER = "kvlesson-notes"  # in extracted/: the plan's notes, one file per student


@dataclass(frozen=True)
class Named:
    """One file of the download, as its name reads: whose, which notebook, how new, late."""

    path: str
    student: str
    notebook: str
    order: int | None
    timestamp: object  # a datetime, or None
    late: bool

    def info(self) -> dict:
        """What nbgrader's zip_collect takes from a collector for this file."""
        found = {"student_id": self.student, "file_id": self.notebook}
        if self.timestamp is not None:
            found["timestamp"] = self.timestamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        return found


class PlatformFileNames(FileNameCollectorPlugin):
    """nbgrader's collector of a download's file names, planning the class first (see the
    module): ids checked, one file per student's notebook, lateness and notes kept."""

    def plan(self, extracted: str) -> None:
        """Read every notebook's name in `extracted`, choose each student's files, and write
        each student's notes into `extracted`'s notes folder."""
        chosen: dict[tuple[str, str], list[Named]] = {}
        notes: dict[str, list[str]] = {}
        late: set[str] = set()
        for path in _notebooks(extracted):
            named = self._named(path)
            if named is not None:
                chosen.setdefault((named.student, named.notebook), []).append(named)
        self._chosen: dict[str, dict] = {}
        for (student, notebook), files in sorted(chosen.items()):
            taken, said = _newest(files)
            notes.setdefault(student, []).extend(said)
            for note in said:
                self.log.warning("%s: %s", student, note)
            if taken is not None:
                self._chosen[taken.path] = taken.info()
                if taken.late:  # the grading command flags it, with what it costs
                    late.add(student)
                    self.log.warning("%s: late, says its file name", shown(taken.path))
        self._notes = _write_notes(extracted, notes, late)

    def _named(self, path: str) -> Named | None:
        """A file's name as the pattern reads it; None (said) if it names no student's
        notebook the course can take."""
        found = self._match(path)
        if not found:
            return None
        student, notebook = str(found.get("student_id") or ""), str(found.get("file_id") or "")
        why = ids.id_problem(student) or (
            "" if not isinstance(safe_parts(notebook), str) else "its notebook is no plain name"
        )
        if why:
            self.log.warning("Not collected: %s: its student id %s", shown(path), why)
            return None
        order = found.get("order")
        try:
            timestamp = parse_utc(found["timestamp"]) if found.get("timestamp") else None
        except (ValueError, OverflowError):
            timestamp = None
        return Named(
            path,
            student,
            notebook,
            int(order) if order and order.isdigit() else None,
            timestamp,
            bool(found.get("late")),
        )

    def collect(self, submitted_file: str) -> dict | None:
        """nbgrader's question for each file: whose and which notebook (None: leave it)."""
        if not hasattr(self, "_chosen"):  # not planned by the course's extractor
            self.plan(self.parent._format_collect_path(self.parent.extracted_directory))
        if submitted_file in self._notes:
            return {"student_id": self._notes[submitted_file], "file_id": REFUSALS}
        return self._chosen.get(submitted_file)


def _notebooks(extracted: str) -> list[str]:
    """Every notebook in the unpacked download, but the plan's own notes, sorted."""
    found = []
    for top, folders, files in os.walk(extracted):
        folders[:] = sorted(f for f in folders if f != NOTES_FOLDER)
        found += [os.path.join(top, name) for name in sorted(files) if name.endswith(".ipynb")]
    return found


def _newest(files: list[Named]) -> tuple[Named | None, list[str]]:
    """The file to take of one student's files for one notebook, and what to say."""
    if len(files) == 1:
        return files[0], []
    for key, how in ((lambda f: f.order, "the platform's number"), (lambda f: f.timestamp, "time")):
        values = [key(f) for f in files]
        if None not in values and len(set(values)) == len(values):
            taken = max(files, key=key)
            return taken, [
                f"not collected: {Path(f.path).name}: an older copy of {f.notebook} "
                f"(by {how}, {Path(taken.path).name} is newer)"
                for f in files
                if f is not taken
            ]
    names = ", ".join(Path(f.path).name for f in files)
    return None, [
        f"not collected: {files[0].notebook}: {len(files)} files ({names}) and nothing in their "
        "names says which is newer: put the one to grade in submitted/ by hand"
    ]


def _write_notes(extracted: str, notes: dict[str, list[str]], late: set[str]) -> dict[str, str]:
    """Each student's notes as collect's list in the download's notes folder; which file
    belongs to which student."""
    folder = Path(extracted) / NOTES_FOLDER
    written = {}
    for student, said in notes.items():
        if said or student in late:
            folder.mkdir(exist_ok=True)
            path = folder / f"{student}.json"  # a checked id: a plain name
            path.write_text(collect_notes(said, late=student in late))
            written[str(path)] = student
    return written
