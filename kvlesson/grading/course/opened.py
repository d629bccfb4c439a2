"""A student's folder, opened once and walked by its descriptor, never by its path again.

A folder in the exchange's inbound belongs to the student who handed it in: she may rename
it at any moment, or swap it (`renameat2(RENAME_EXCHANGE)`) for a link to the instructor's
`solutions/`, timed with inotify to the grader's first open of a file in it. A path looked
up again later names whatever is there *then*, and `O_NOFOLLOW` guards only a path's last
part. So whatever copies or reads a student's tree (collect and its seal, the time of a
submission, the release of feedback, the zip path) opens the folder once without following
a link (`O_DIRECTORY | O_NOFOLLOW`), checks that it is the folder that was looked at (its
device and inode, `fstat`, against the record's `lstat`), and reaches everything in it
through that descriptor: `os.scandir(fd)` lists it, and each entry is opened relative to it
(`dir_fd=`), without following a link, and checked against what the listing saw.
"""

from __future__ import annotations

import datetime
import itertools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC
# O_NONBLOCK: a FIFO swapped in for a file never hangs the open; O_NOCTTY: never a terminal
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | CLOEXEC
NO_TIME = datetime.datetime.min  # the latest change of a folder with nothing in it to read


@dataclass(frozen=True)
class Identity:
    """Which file a name pointed at when it was looked at: its device and inode."""

    device: int
    inode: int

    @classmethod
    def of(cls, info: os.stat_result) -> Identity:
        return cls(info.st_dev, info.st_ino)


class Changed(OSError):
    """What was opened is not what was looked at: it was swapped or replaced in between."""


def open_folder(
    path: str | os.PathLike, expected: Identity | None = None, dir_fd: int | None = None
) -> int:
    """A descriptor of the folder `path` (relative to `dir_fd`, if given): OSError if it is
    a link (ELOOP) or not a folder (ENOTDIR), `Changed` if it is not the folder `expected`."""
    fd = os.open(path, FOLDER_FLAGS, dir_fd=dir_fd)
    if expected is not None and Identity.of(os.fstat(fd)) != expected:
        os.close(fd)
        raise Changed(f"{os.fspath(path)} is not the folder that was looked at")
    return fd


@contextmanager
def folder(
    path: str | os.PathLike, expected: Identity | None = None, dir_fd: int | None = None
) -> Iterator[int]:
    """`open_folder`, closed when the block ends."""
    fd = open_folder(path, expected, dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def listing(fd: int) -> list[tuple[str, os.stat_result | OSError]]:
    """What the folder `fd` holds, sorted by name: each entry's own status (a link's, never
    its target's), or the error that stopped it being looked at."""
    with os.scandir(fd) as entries:
        names = sorted(entry.name for entry in entries)
    found: list[tuple[str, os.stat_result | OSError]] = []
    for name in names:
        try:
            found.append((name, os.stat(name, dir_fd=fd, follow_symlinks=False)))
        except OSError as error:
            found.append((name, error))
    return found


def open_file(fd: int, name: str, seen: os.stat_result) -> BinaryIO:
    """The regular file `name` of the folder `fd`, for reading, if it is still the file the
    listing saw (`seen`): `Changed` if it was swapped, OSError if it is a link now."""
    file_fd = os.open(name, FILE_FLAGS, dir_fd=fd)
    now = os.fstat(file_fd)
    if Identity.of(now) != Identity.of(seen) or not stat.S_ISREG(now.st_mode):
        os.close(file_fd)
        raise Changed(f"{name} changed between the listing and its opening")
    os.set_blocking(file_fd, True)
    return os.fdopen(file_fd, "rb")


def read_small(fd: int, name: str, limit: int = 1 << 16) -> bytes | None:
    """The first `limit` bytes of the regular file `name` of the folder `fd`; None if there is
    no such regular file (missing, a link, a folder, a FIFO)."""
    try:
        seen = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(seen.st_mode):
            return None
        with open_file(fd, name, seen) as file:
            return file.read(limit)
    except OSError:
        return None


def tree(fd: int, prefix: str = "") -> Iterator[tuple[str, os.stat_result]]:
    """Everything in the folder `fd` and its folders, by descriptor: each entry's path in it
    and its own status (links are listed, never followed). What cannot be looked at, and a
    folder swapped between its listing and its opening, are passed over."""
    for name, info in listing(fd):
        if isinstance(info, OSError):
            continue
        yield prefix + name, info
        if stat.S_ISDIR(info.st_mode):
            try:
                with folder(name, Identity.of(info), dir_fd=fd) as inner:
                    yield from tree(inner, f"{prefix}{name}/")
            except OSError:
                continue


def latest_change(fd: int, most: int = 2000) -> tuple[datetime.datetime, str]:
    """When anything in the folder `fd` (itself included) was last changed, in UTC, and what
    (its path in the folder, "." for the folder itself): the latest change time (ctime),
    which no account can set back. At most `most` entries are looked at."""
    latest, what = NO_TIME, ""
    for seen, (where, info) in enumerate(itertools.chain([(".", os.fstat(fd))], tree(fd))):
        if seen >= most:
            break
        moment = datetime.datetime.fromtimestamp(info.st_ctime, datetime.timezone.utc)
        if moment.replace(tzinfo=None) > latest:
            latest, what = moment.replace(tzinfo=None), where
    return latest, what
