"""Sealing a submission: a copy of plain files only, and a list of what was left out.

Everything the grader does with a student's work starts from a sealed copy: a fresh
folder, outside the course root, holding the submission's regular files and folders and
nothing else. A symbolic link (to the instructor's notebook, to `keys/`, to the gradebook),
a hard link, a device, a FIFO or a socket is never followed or opened: it is left out and
named in a refusal, as is a file past the size limit, a folder nested too deep, or
whatever comes after the file-count or total-size limit. The same copy serves nbgrader's
exchange (collect, release of feedback), so a link planted in the exchange is refused
there too. The folder is opened once and everything in it is reached through its
descriptor (`kvlesson.grading.course.opened`), never by a path looked up again: a folder or
a file swapped for a link, or for another, while it is copied is left out, never followed.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from kvlesson.grading.course import opened
from kvlesson.grading.course.text import printable

MAX_FILE_BYTES = 20 * 2**20  # a notebook of this course is about 120 KB; a plot-heavy one a few MB
MAX_TOTAL_BYTES = 50 * 2**20
MAX_FILES = 200
REFUSALS = "kvlesson-refused.json"  # beside a collected submission: what collect left out
MAX_DEPTH = 8  # folders inside the submission folder


@dataclass(frozen=True)
class Refusal:
    """One thing of a submission that was not copied: its path in the submission and why."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class SealLimits:
    """How much a sealed copy may hold."""

    file_bytes: int = MAX_FILE_BYTES
    total_bytes: int = MAX_TOTAL_BYTES
    files: int = MAX_FILES
    depth: int = MAX_DEPTH


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular file or a folder is, in words (None if it is one)."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "not a regular file"


class _Copy:
    """One sealing: the counts so far and the refusals. Everything is reached through the
    descriptor of the folder it is in (kvlesson.grading.course.opened), never by a path."""

    def __init__(self, limits: SealLimits, ignore: tuple[str, ...]):
        self.limits, self.ignore = limits, ignore
        self.files = self.bytes = 0
        self.refused: list[Refusal] = []

    def refuse(self, relative: Path, reason: str) -> None:
        self.refused.append(Refusal(printable(relative.as_posix()), reason))

    def folder(self, fd: int, dest: Path, relative: Path, depth: int) -> None:
        dest.mkdir(mode=0o755, exist_ok=True)
        try:
            found = opened.listing(fd)
        except OSError as error:
            self.refuse(relative, f"cannot be listed ({error.strerror})")
            return
        for name, info in found:
            if any(Path(name).match(pattern) for pattern in self.ignore):
                continue
            if depth == 0 and name == REFUSALS:  # only collect writes it, beside the copy
                self.refuse(
                    relative / name,
                    "the name of the list the course's collect "
                    "writes beside a submission: a file of the student's own under "
                    "this name is never taken for it",
                )
                continue
            self.entry(fd, name, info, dest / name, relative / name, depth)

    def entry(
        self,
        fd: int,
        name: str,
        info: os.stat_result | OSError,
        dest: Path,
        relative: Path,
        depth: int,
    ) -> None:
        if isinstance(info, OSError):
            self.refuse(relative, f"cannot be read ({info.strerror})")
            return
        kind = kind_of(info.st_mode)
        if kind is not None:
            self.refuse(relative, f"{kind}: only plain files are graded")
        elif stat.S_ISDIR(info.st_mode):
            if depth >= self.limits.depth:
                self.refuse(relative, f"folders nested deeper than {self.limits.depth}")
                return
            try:
                with opened.folder(name, opened.Identity.of(info), dir_fd=fd) as inner:
                    self.folder(inner, dest, relative, depth + 1)
            except OSError as error:
                self.refuse(relative, _not_opened(error))
        elif info.st_nlink > 1:
            self.refuse(relative, "a hard link to another file: only plain files are graded")
        elif info.st_size > self.limits.file_bytes:
            self.refuse(
                relative,
                f"{info.st_size:,} bytes, over the limit of "
                f"{self.limits.file_bytes:,} for one file",
            )
        elif self.files >= self.limits.files:
            self.refuse(relative, f"more than {self.limits.files} files")
        elif self.bytes + info.st_size > self.limits.total_bytes:
            self.refuse(relative, f"over the limit of {self.limits.total_bytes:,} bytes in all")
        else:
            self.file(fd, name, info, dest, relative)

    def file(self, fd: int, name: str, info: os.stat_result, dest: Path, relative: Path) -> None:
        """Copy a regular file through a descriptor opened relative to its folder's, without
        following a link, if it is still the file the listing saw (no swap in between)."""
        try:
            src = opened.open_file(fd, name, info)
        except OSError as error:
            self.refuse(relative, _not_opened(error))
            return
        with src, open(dest, "xb") as out:
            copied = _copy_at_most(src, out, self.limits.file_bytes)
        if copied is None:
            dest.unlink()
            self.refuse(
                relative,
                f"grew past the limit of {self.limits.file_bytes:,} bytes while it was copied",
            )
            return
        os.chmod(dest, 0o644)
        self.files += 1
        self.bytes += copied


def _not_opened(error: OSError) -> str:
    """Why an entry the listing saw could not be opened, in words."""
    if isinstance(error, opened.Changed) or error.errno in (errno.ELOOP, errno.ENOTDIR):
        return (
            "changed while it was copied (swapped for a link or for another file): "
            "never followed, left out"
        )
    return f"cannot be opened ({error.strerror})"


def _copy_at_most(src, out, limit: int) -> int | None:
    """Copy src to out; the bytes copied, or None if src holds more than `limit`."""
    copied = 0
    while chunk := src.read(1 << 20):
        copied += len(chunk)
        if copied > limit:
            return None
        out.write(chunk)
    return copied


def seal(
    source: Path,
    dest: Path,
    limits: SealLimits = SealLimits(),
    ignore: tuple[str, ...] = (),
    expected: opened.Identity | None = None,
) -> list[Refusal]:
    """Copy the folder `source` into the new folder `dest`, plain files and folders only;
    what was left out, with the reasons. `source` is opened once, never through a link, and
    if `expected` is given it must be that folder (the one collect looked at: a folder
    swapped or replaced since is not copied); everything in it is reached through its
    descriptor. A `source` that is not a real folder (a link to one, a file) gives an empty
    `dest` and a refusal, never an error: one entry of the exchange must not stop a
    collection. Names matching an `ignore` pattern are skipped without a word, and a
    top-level `REFUSALS` file that is not ignored is left out with a refusal (only collect
    writes one, after sealing, so the list the grader reads is never the student's)."""
    source, dest = Path(source), Path(dest)
    if dest.exists() or dest.is_symlink():
        raise ValueError(f"{dest} already exists: a sealed copy goes into a new folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = opened.open_folder(source, expected)
    except OSError as error:
        dest.mkdir(mode=0o755)
        return [Refusal(".", _not_a_folder(source, error))]
    copy = _Copy(limits, ignore)
    try:
        copy.folder(fd, dest, Path("."), 0)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        os.close(fd)
    return copy.refused


def _not_a_folder(source: Path, error: OSError) -> str:
    """Why the submission `source` could not be opened as a folder, in words."""
    if isinstance(error, opened.Changed):
        return (
            "the submission was swapped for another folder or a link while it was "
            "collected: nothing was copied"
        )
    if error.errno in (errno.ELOOP, errno.ENOTDIR):  # a link, or not a folder
        try:
            kind = kind_of(os.lstat(source).st_mode) or "a file"
        except OSError:
            kind = "gone"
        return f"the submission is {kind}, not a folder: nothing was copied"
    return f"the submission cannot be read ({error.strerror}): nothing was copied"


COLLECTED_BY = "kvlesson collect"  # the mark of collect's own list, which no student supplies


def collect_notes(notes: list[str], late: bool = False) -> str:
    """Collect's notes on a submission as the file beside it holds them: what it left out or
    noticed, and whether a learning platform called the submission late (with no time)."""
    body = {"written_by": COLLECTED_BY, "notes": [str(note) for note in notes]}
    if late:
        body["late"] = True
    return json.dumps(body, indent=1)


def write_refusals(folder: Path, notes: list[str]) -> None:
    """Write collect's notes on the submission in `folder` (what it left out or noticed),
    always, even when there are none: the file beside a collected submission is collect's own
    (collect removes a student's file of that name from the copy first, and says so)."""
    (Path(folder) / REFUSALS).write_text(collect_notes(notes))


def _notes(folder: Path) -> tuple[dict | None, str]:
    """Collect's notes beside the submission in `folder` (None if there are none), or why
    the file of that name is not collect's own."""
    path = Path(folder) / REFUSALS
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, ""
    if not stat.S_ISREG(info.st_mode) or info.st_size > 1 << 20:
        return None, f"{REFUSALS} is not the grader's own list: the submission was tampered with"
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, f"{REFUSALS} cannot be read: the submission was tampered with"
    if not (
        isinstance(body, dict)
        and body.get("written_by") == COLLECTED_BY
        and isinstance(body.get("notes"), list)
    ):
        return None, (
            f"{REFUSALS} beside this submission is not the list the course's collect "
            "writes (a file of the student's, or a collect without the course's "
            "configuration): delete this folder of submitted/ and run `nbgrader collect` again"
        )
    return body, ""


def read_refusals(folder: Path) -> list[str]:
    """What collect left out of the submission in `folder`, in words (none if nothing). A
    file of that name that collect did not write (a student's, or one an earlier release's
    collect wrote) is a flag of its own, never read as collect's notes."""
    body, wrong = _notes(folder)
    if body is None:
        return [wrong] if wrong else []
    return [printable(str(note), 2_000) for note in body["notes"]]


def late_by_platform(folder: Path) -> bool:
    """Whether collect noted that a learning platform called the submission in `folder`
    late (its file name said so, with no time)."""
    body, _ = _notes(folder)
    return body is not None and body.get("late") is True
