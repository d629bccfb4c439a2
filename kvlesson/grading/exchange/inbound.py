"""An entry of the exchange's inbound as collect reads it: its name, and its time.

An entry that is a file, a link, a folder collect cannot list, or whose name holds no time
or names no student (not UTF-8, a line break, markup: kvlesson.grading.course.ids) is not
collected, and is said so in words. A
submission's time is when its files were last changed in the exchange (their change time,
which no account can set back), not the time its folder's name holds; a name that says
otherwise is flagged, and the collected copy's timestamp.txt is written with the time the
submission counts at.
"""

from __future__ import annotations

import datetime
import os
import stat
from pathlib import Path

from nbgrader.utils import parse_utc

from kvlesson.grading.course import ids, opened
from kvlesson.grading.course.seal import kind_of

SLACK = datetime.timedelta(minutes=2)  # a folder's name and its files' last change, unflagged
MOST_ENTRIES = 2000  # the entries of one submission looked at for its time (seal keeps 200)
NO_TIME = opened.NO_TIME  # the time of an entry that is not collected


def shown(name: str) -> str:
    """An entry's name as a log line or a note may show it: a name that is not UTF-8 with
    its odd bytes escaped, a line break as \\n."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def id_problem(username: str) -> str:
    """Why an entry's name names no student ("" when it names one): its student id, the part
    before the first `+`, must be one the course takes (`kvlesson.grading.course.ids`)."""
    why = ids.id_problem(username)
    return f"its name {why}, so it names no student" if why else ""


def look_at(path: str) -> tuple[str, os.stat_result | None]:
    """Why an entry of inbound is not a submission that can be collected ("" if it is), and
    what it was when it was looked at (its own status: its identity and owner), which the
    collected copy must then be (`kvlesson.grading.course.opened`)."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"it cannot be looked at ({error.strerror})", None
    if not stat.S_ISDIR(info.st_mode):
        return f"it is {kind_of(info.st_mode) or 'a file'}, not a submission folder", None
    try:
        with opened.folder(path, opened.Identity.of(info)) as fd:
            opened.listing(fd)
    except OSError as error:
        return f"its folder cannot be listed ({error.strerror or error})", None
    return "", info


def last_change(
    folder: str | Path, expected: opened.Identity | None = None
) -> tuple[datetime.datetime, str]:
    """When anything in the submission folder was last changed (UTC), and what: the latest
    change time (ctime) of the folder and everything in it, which no account can set back,
    read through the folder's descriptor (it must be the folder `expected`, if given; a
    folder swapped since gives no time). It is when the submission was last written."""
    try:
        with opened.folder(folder, expected) as fd:
            latest, what = opened.latest_change(fd, MOST_ENTRIES)
    except OSError:
        return NO_TIME, ""
    return latest, "the folder" if what == "." else shown(what)


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
