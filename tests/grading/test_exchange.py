"""nbgrader's exchange as the course configures it, between Unix accounts.

Real `nbgrader collect` and `nbgrader submit` commands on an exchange laid out as
docs/jupyterhub.md lays it out, with submission folders owned by other system accounts
(`daemon`, `bin`, `nobody`: root can hand a folder to any of them). What a student must
not be able to do through the exchange: hand in work under a classmate's name, stop the
collection of the whole class with any entry of inbound, lose a classmate (or themselves)
the copy collected before, hand in late work named with an earlier time, be collected from
outside the course's roster, supply the notes collect writes beside a submission, or leave
a submission writable by classmates.
"""

from __future__ import annotations

import datetime
import grp
import os
import pwd
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from kvlesson.grading.course import seal
from kvlesson.grading.exchange.submit import SUBMISSION_MODE
from support.paths import ROOT

ASSIGNMENT = "02_ceiling"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="the exchange test hands folders to other accounts: run as root"
)


def nbgrader(command: list[str], cwd: Path, home: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {
        **os.environ,
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def uid(name: str) -> int:
    return pwd.getpwnam(name).pw_uid


def now_stamp(minutes_ago: float = 0) -> str:
    """A submission time as nbgrader writes it, `minutes_ago` before now (UTC)."""
    seconds = time.time() - minutes_ago * 60
    return time.strftime("%Y-%m-%d %H:%M:%S.000000 UTC", time.gmtime(seconds))


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


@pytest.fixture
def course(tmp_path) -> Path:
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    return course


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


def test_feedback_of_a_submission_nbgrader_did_not_make_costs_only_its_student(tmp_path, course):
    """A submission made by hand (no submission_secret.txt, whose hash names the page): plain
    nbgrader stops releasing the feedback of the whole class there."""
    (tmp_path / "exchange" / "kvlesson").mkdir(parents=True)
    for student, secret in (("daemon", "daemons secret"), ("bin", None)):
        folder = course / "feedback" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "ceiling.html").write_text(f"<p>feedback of {student}</p>")
        (folder / "timestamp.txt").write_text(now_stamp())
        if secret:
            (folder / "submission_secret.txt").write_text(secret)
    done = nbgrader(
        ["release_feedback", ASSIGNMENT, f"--Exchange.root={tmp_path / 'exchange'}"],
        course,
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    released = [p.read_text() for p in (tmp_path / "exchange" / "kvlesson" / "feedback").iterdir()]
    assert released == ["<p>feedback of daemon</p>"]
    assert (
        "No feedback released for bin: their submission holds no submission_secret.txt"
        in done.stdout + done.stderr
    )


def exchange_as_the_guide_makes_it(root: Path, group: str, owner: str = "root") -> Path:
    """The course's folders in the exchange, as docs/jupyterhub.md has the admin make them:
    owned by the instructor, with the instructors' group; inbound set-group-id and sticky."""
    course = root / "kvlesson"
    for folder, mode in (
        (root, 0o1777),
        (course, 0o755),
        (course / "outbound", 0o755),
        (course / "inbound", 0o3733),
        (course / "feedback", 0o711),
    ):
        folder.mkdir(exist_ok=True)
        os.chown(
            folder,
            uid(owner) if folder != root else 0,
            0 if folder == root else grp.getgrnam(group).gr_gid,
        )
        folder.chmod(mode)
    release = course / "outbound" / ASSIGNMENT
    release.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), release / "ceiling.ipynb")
    return course


def submit(tmp_path: Path, exchange: Path) -> subprocess.CompletedProcess:
    """A student's `nbgrader submit`, with the configuration the hub gives every account."""
    student = tmp_path / "student"
    (student / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), student / ASSIGNMENT / "ceiling.ipynb")
    config = tmp_path / "everyone"
    config.mkdir()
    shutil.copy(ROOT / "hub" / "nbgrader_config.py", config)
    return nbgrader(
        ["submit", ASSIGNMENT],
        student,
        student,
        JUPYTER_CONFIG_PATH=str(config),
        KVLESSON_EXCHANGE=str(exchange),
    )


def test_a_submission_is_left_to_its_student_and_the_instructors(tmp_path):
    course = exchange_as_the_guide_makes_it(tmp_path / "exchange", group="daemon")
    done = submit(tmp_path, tmp_path / "exchange")
    assert done.returncode == 0, done.stdout + done.stderr
    [folder] = (course / "inbound").iterdir()
    info = folder.stat()
    assert oct(info.st_mode & 0o7777) == oct(SUBMISSION_MODE)
    assert info.st_gid == grp.getgrnam("daemon").gr_gid  # the instructors'


def test_no_submission_into_an_inbound_folder_whose_group_holds_students(tmp_path):
    # inbound owned by another account, with a group the submitting account is in: its
    # classmates would be in it too.
    course = exchange_as_the_guide_makes_it(tmp_path / "exchange", group="root", owner="daemon")
    done = submit(tmp_path, tmp_path / "exchange")
    assert done.returncode != 0
    assert "Not submitted: the course's inbound folder" in done.stdout + done.stderr
    assert "belongs to the group root, which you are in" in done.stdout + done.stderr
    assert list((course / "inbound").iterdir()) == []


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
