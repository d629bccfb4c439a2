"""nbgrader's collect as the course configures it (`SafeCollect`), between Unix accounts.

Real `nbgrader collect` commands on an exchange's inbound holding submission folders owned
by other system accounts. What a student must not be able to do through the exchange: hand
in work under a classmate's name, stop the collection of the whole class with any entry of
inbound, lose a classmate (or themselves) the copy collected before, hand in late work named
with an earlier time, be collected from outside the course's roster, or supply the notes
collect writes beside a submission.
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from kvlesson.grading.course import seal
from support.exchange import AS_ROOT, ASSIGNMENT, nbgrader, now_stamp, uid

pytestmark = AS_ROOT


def hand_in(inbound: Path, name: str, owner: str, work: str, timestamp: str) -> Path:
    """A submission folder as `owner` would leave it in inbound, named `name`."""
    folder = inbound / name
    folder.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"# {work}")])
    nbformat.write(nb, folder / "ceiling.ipynb")
    (folder / "timestamp.txt").write_text(timestamp)
    for path in [folder, *folder.iterdir()]:
        os.chown(path, uid(owner), -1)
    return folder


def collect(course: Path, tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    """The instructor's `nbgrader collect` of the assignment, which must not fail."""
    done = nbgrader(
        ["collect", ASSIGNMENT, f"--Exchange.root={tmp_path / 'exchange'}", *options],
        course,
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def handed_in_at(stamp: str) -> datetime.datetime:
    """A collected timestamp.txt as a time (UTC, naive as nbgrader keeps it)."""
    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f UTC")


def collected(course: Path, student: str) -> tuple[str, list[str], str]:
    """What collect put in submitted/ for `student`: the notebook's text, the notes beside
    it, and its timestamp.txt ("" for a file that is not there)."""
    folder = course / "submitted" / student / ASSIGNMENT
    notebook, stamp = folder / "ceiling.ipynb", folder / "timestamp.txt"
    return (
        notebook.read_text() if notebook.exists() else "",
        seal.read_refusals(folder),
        stamp.read_text() if stamp.exists() else "",
    )


@pytest.mark.process
def test_collect_takes_each_students_own_work_and_the_class_is_not_stopped(tmp_path, course):
    inbound = tmp_path / "exchange" / "kvlesson" / "inbound"
    inbound.mkdir(parents=True)
    on_time = now_stamp()
    # daemon's own submission; then bin hands in a later one in daemon's name.
    hand_in(inbound, f"daemon+{ASSIGNMENT}+{on_time}+a1", "daemon", "daemon's work", on_time)
    later = now_stamp(-1)
    hand_in(inbound, f"daemon+{ASSIGNMENT}+{later}+b2", "bin", "bin's forgery", later)
    # bin's own folder has a name nbgrader cannot read: plain nbgrader stops the class here.
    hand_in(inbound, f"bin+{ASSIGNMENT}+yesterday+c3", "bin", "bin's work", on_time)
    # sys: only a forgery in its name, made by nobody.
    hand_in(inbound, f"sys+{ASSIGNMENT}+{on_time}+d4", "nobody", "nobody's forgery", on_time)
    # nobody backdates a folder by a week, and its timestamp.txt by a year.
    week_ago = now_stamp(7 * 24 * 60)
    hand_in(
        inbound,
        f"nobody+{ASSIGNMENT}+{week_ago}+e5",
        "nobody",
        "nobody's late work",
        "2025-01-01 00:00:00.000000 UTC",
    )

    done = collect(course, tmp_path)

    work, notes, _ = collected(course, "daemon")
    assert "daemon's work" in work and notes == []
    assert "named after daemon but was made by bin" in done.stderr
    work, notes, _ = collected(course, "sys")
    assert work == "" and notes == [
        f"sys+{ASSIGNMENT}+{on_time}+d4 was not collected: "
        "it is named after sys but was made by nobody"
    ]
    work, notes, _ = collected(course, "bin")
    assert work == "" and notes == [
        f"bin+{ASSIGNMENT}+yesterday+c3 was not collected: its name holds no submission time"
    ]
    work, notes, stamp = collected(course, "nobody")
    assert "nobody's late work" in work
    # Its time is when its files reached the exchange (now), not the week-old name.
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert abs(handed_in_at(stamp) - now) < datetime.timedelta(minutes=5), stamp
    assert any(
        note.startswith(f"its folder's name says it was handed in at {week_ago[:19]} UTC, but")
        and "counts as handed in at" in note
        for note in notes
    ), notes
    assert any(note.startswith("timestamp.txt said '2025-01-01") for note in notes), notes


@pytest.mark.process
def test_every_odd_entry_of_inbound_costs_that_entry_only(tmp_path, course):
    """Issue 26's entries: a plain file, a link, a name with a time far in the future or a
    date of 9999, a name that is not UTF-8 or holds a line break. None stops the collect,
    none deletes a copy collected before (under --update), each is said in the log. And a
    file named as collect's notes, handed in, is never read as collect's notes (it would
    flag what the student likes, or hide what collect found)."""
    inbound = tmp_path / "exchange" / "kvlesson" / "inbound"
    inbound.mkdir(parents=True)
    stamp = now_stamp()
    daemon = hand_in(inbound, f"daemon+{ASSIGNMENT}+{stamp}+a1", "daemon", "daemon's work", stamp)
    (daemon / seal.REFUSALS).write_text('{"written_by": "kvlesson collect", "notes": ["bin"]}')
    os.chown(daemon / seal.REFUSALS, uid("daemon"), -1)
    sys_first = hand_in(inbound, f"sys+{ASSIGNMENT}+{stamp}+b1", "sys", "sys's work", stamp)
    collect(course, tmp_path)
    assert "sys's work" in collected(course, "sys")[0]
    assert collected(course, "daemon")[1] == [
        f"not collected: {seal.REFUSALS}: the name of the list the course's collect writes "
        "beside a submission: a file of the student's own under this name is never taken for it"
    ]

    future = "2030-01-01 00:00:00.000000 UTC"
    (inbound / f"daemon+{ASSIGNMENT}+{future}+file").write_text("x")
    os.chown(inbound / f"daemon+{ASSIGNMENT}+{future}+file", uid("daemon"), -1)
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "ceiling.ipynb").write_text("the instructor's answers")
    # sys takes its submission back and leaves a link to the instructor's solutions instead.
    shutil.rmtree(sys_first)
    link = inbound / f"sys+{ASSIGNMENT}+{now_stamp(-1)}+link"
    link.symlink_to(solutions)
    os.lchown(link, uid("sys"), -1)
    hand_in(inbound, f"bin+{ASSIGNMENT}+{future}+x", "bin", "bin's work", future)
    doomsday = "9999-12-31 23:59:59.999999 UTC"
    hand_in(inbound, f"nobody+{ASSIGNMENT}+{doomsday}+y", "nobody", "nobody's work", doomsday)
    odd = (
        os.fsencode(str(inbound))
        + b"/\xff\xfe+"
        + ASSIGNMENT.encode()
        + b"+"
        + stamp.encode()
        + b"+z"
    )
    os.mkdir(odd)
    os.chown(odd, uid("nobody"), -1)
    hand_in(inbound, f"mail\nroot+{ASSIGNMENT}+{stamp}+w", "mail", "a line break", stamp)

    done = collect(course, tmp_path, "--update")
    log = done.stdout + done.stderr
    assert "Traceback" not in log, log
    assert "daemon's work" in collected(course, "daemon")[0]
    assert "it is a file, not a submission folder" in log, log
    work, notes, _ = collected(course, "sys")
    assert "sys's work" in work and "the instructor's answers" not in work  # kept, not followed
    assert "it is a symbolic link, not a submission folder" in log, log
    for student in ("bin", "nobody"):
        work, notes, stamp_txt = collected(course, student)
        assert f"{student}'s work" in work
        assert handed_in_at(stamp_txt).year < 2030, stamp_txt  # the time its files arrived
        assert any(
            "its folder's name holds a time after its files were last changed" in n for n in notes
        ), notes
    assert "its name is not UTF-8 text, so it names no student" in log, log
    assert "its name holds a line break or another control character" in log, log
    assert sorted(p.name for p in (course / "submitted").iterdir()) == [
        "bin",
        "daemon",
        "nobody",
        "sys",
    ]


@pytest.mark.process
def test_only_the_students_on_the_roster_are_collected(tmp_path, course):
    inbound = tmp_path / "exchange" / "kvlesson" / "inbound"
    inbound.mkdir(parents=True)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id="kvlesson") as gradebook:
        for student in ("daemon", "bin"):
            gradebook.add_student(student)  # the roster
    stamp = now_stamp()
    for account in ("daemon", "bin", "nobody"):
        hand_in(inbound, f"{account}+{ASSIGNMENT}+{stamp}+r", account, f"{account}'s work", stamp)
    done = collect(course, tmp_path)
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["bin", "daemon"]
    assert "nobody is not on the course's roster" in done.stdout + done.stderr


@pytest.mark.process
def test_where_every_account_is_one_user_the_owner_check_can_be_turned_off(tmp_path, course):
    """On Zero to JupyterHub every pod runs as jovyan: with ExchangeCollect.check_owner off,
    a folder is collected whoever owns it."""
    inbound = tmp_path / "exchange" / "kvlesson" / "inbound"
    inbound.mkdir(parents=True)
    stamp = now_stamp()
    hand_in(inbound, f"daemon+{ASSIGNMENT}+{stamp}+a1", "nobody", "daemon's work", stamp)
    done = nbgrader(
        [
            "collect",
            ASSIGNMENT,
            f"--Exchange.root={tmp_path / 'exchange'}",
            "--ExchangeCollect.check_owner=False",
        ],
        course,
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    work, notes, _ = collected(course, "daemon")
    assert "daemon's work" in work and notes == []
