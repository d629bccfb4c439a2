"""A term on a real JupyterHub, run from docs/jupyterhub.md's own commands.

Section 4 of the guide is this test's script (tests/support/hub_guide.py reads it): the
set-up blocks run as root exactly as written, with no sudo (hub/setup.sh, passwords.txt, the
accounts with useradd, the exchange where the guide puts it, the hub started with the
guide's command, bound to 127.0.0.1:8000, each account's server on its own name under
hub.localhost), with the test's account names; the instructor's blocks are typed into a new
terminal of the instructor's own server, so each starts in the home folder; the students log
in through the hub's login page in Debian's chromium and fetch, submit and fetch feedback
with the Assignment List's buttons, one also hands in from her shell under a folder named an
hour early, and an account outside the course tries to. Then the guide's table of who may
do what is tried line by line, as each account, a page a student serves tries to act for the
instructor and for a classmate, and the hub is stopped with the guide's command.

It needs root, useradd and a machine without a hub of its own (no /srv/nbgrader, no hub
database in /srv/jupyterhub, ports 8000, 8001 and 8081 free): it skips without root and
fails, saying why, on a machine it could harm. Screenshots go to artifacts/hub-*.png, what
each account could do to artifacts/hub-access.json, the hub's log to
artifacts/hub-jupyterhub.log. Every account, process and folder it made is removed at the
end, also when it fails.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import notebook_hash

from support import hub_attack, hub_guide as guide
from support.handing_in import answers_to_tests, handed_in, points, signed
from support.hub_session import (
    BIND,
    HUB_PORTS,
    HUB_URL,
    STATE,
    Class,
    Hub,
    HubError,
    User,
    account_pids,
    answer_at,
    as_account,
    hub_module,
    listening,
    make_certificate,
    opener,
    origin_of,
    run,
)
from support.paths import ROOT
from support.patience import HANG, HANG_MS

ARTIFACTS = ROOT / "artifacts"
COURSE_ID = "kvlesson"  # hub/nbgrader_config.py
EXCHANGE = Path("/srv/nbgrader/exchange")  # the guide's
ASSIGNMENT, NOTEBOOK = "02_ceiling", "ceiling"  # the guide's blocks release it; a written answer
WRITTEN = "q2_answer"  # its manually graded cell
INSTRUCTOR = "kvhteach"
RIGHT, PARTLY, BLANK = "kvhalice", "kvhbob", "kvhcarol"  # how each student answers
OUTSIDER = "kvhmallory"  # an account of the machine outside the course
NAMES = {
    guide.GUIDE_INSTRUCTOR: INSTRUCTOR,
    guide.GUIDE_OUTSIDER: OUTSIDER,
    **dict(zip(guide.GUIDE_STUDENTS, (RIGHT, PARTLY, BLANK))),
}
VENV_BIN = Path("/opt/kvlesson-hub/venv/bin")  # hub/setup.sh's environment
hub_ports = hub_module("ports")  # who holds a port (hub/ports.py, as the hub reads it)
MARK = ".kvlesson-hub-test"  # left in what the test makes, so a killed run's leftovers are known


def why_not() -> str | None:
    """The reason this machine cannot run the hub at all, or None."""
    if os.geteuid() != 0:
        return "the hub test makes Unix accounts and starts JupyterHub as root: run it as root"
    for tool in ("useradd", "userdel", "groupadd", "chpasswd", "runuser", "git"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on this machine: the hub test runs the guide's commands"
    return None


pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


def refuse_to_harm() -> None:
    """Fail, saying why, if the guide's folders or ports hold something the test did not
    make: a real hub's exchange or database must never be touched."""
    exchange_root = EXCHANGE.parent
    if exchange_root.exists() and not (exchange_root / MARK).exists():
        pytest.fail(
            f"{exchange_root} exists and is not the hub test's: the test would use "
            "the guide's exchange there. Run it on a machine without a hub."
        )
    if (STATE / "jupyterhub.sqlite").exists() and not (STATE / MARK).exists():
        pytest.fail(
            f"{STATE} holds a hub's database: the test would start the guide's hub "
            "on it. Run it on a machine without a hub."
        )
    taken = {port: listening(port) for port in HUB_PORTS if listening(port)}
    if taken:
        pytest.fail(f"the guide's hub listens on ports {HUB_PORTS}, and these are taken: {taken}")


def remove_what_the_test_made() -> None:
    shutil.rmtree(EXCHANGE.parent, ignore_errors=True)
    for entry in STATE.glob("*") if STATE.exists() else []:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


# ---------------------------------------------------------------------------
# The course's repository, as the instructor clones it


def course_repository(dest: Path) -> Path:
    """A git repository of this checkout's files (as they are now, changes included) that
    the instructor can clone in place of the guide's GitHub address."""
    listed = (
        subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git = ["git", "-C", str(dest), "-c", "user.name=kvlesson", "-c", "user.email=hub@test"]
    run(*git, "init", "-q")
    run(*git, "add", "-A")
    run(*git, "commit", "-q", "-m", "the course")
    return dest


# ---------------------------------------------------------------------------
# The hub, set up and started by the guide's commands


@dataclass
class Term:
    hub: Hub
    klass: Class
    users: dict[str, User]
    blocks: dict[str, str]
    work: Path  # root's folder for the admin's files (passwords.txt) and the course's source
    setup_output: str  # what the guide's install block printed


def as_root(*blocks: str, cwd: Path) -> str:
    """Run the guide's blocks as root in one shell (later blocks use names earlier ones set),
    stopping at the first command that fails; what they printed. Fails with it if one did."""
    done = subprocess.run(
        ["bash", "-c", "\n".join(["set -euo pipefail", *blocks])],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"the guide's set-up failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def term() -> Iterator[Term]:
    """The hub set up and started with the guide's commands, every account of the course
    logged in and its server running, and an account outside the course; everything removed
    afterwards."""
    refuse_to_harm()
    ARTIFACTS.mkdir(exist_ok=True)
    blocks = guide.blocks()
    klass = Class(INSTRUCTOR, [RIGHT, PARTLY, BLANK], outsiders=[OUTSIDER])
    work = Path(tempfile.mkdtemp(prefix="kvlesson-hub-"))
    hub = Hub(ARTIFACTS / "hub-jupyterhub.log")
    try:
        remove_what_the_test_made()
        lines = klass.prepare()
        EXCHANGE.parent.mkdir(parents=True)
        (EXCHANGE.parent / MARK).touch()
        installed = as_root(blocks["install"], f"touch {STATE / MARK}", cwd=ROOT)
        as_root(blocks["passwords"], cwd=work)
        passwords = (work / "passwords.txt").stat()
        assert (passwords.st_uid, stat.S_IMODE(passwords.st_mode)) == (0, 0o600), (
            "the guide's passwords.txt is not root's alone"
        )
        with (work / "passwords.txt").open("a") as file:  # what the admin types into it
            file.write(lines)
        as_root(
            guide.with_accounts(blocks["accounts"], INSTRUCTOR, [RIGHT, PARTLY, BLANK]),
            blocks["exchange"],
            cwd=work,
        )
        assert not (work / "passwords.txt").exists(), (
            "the guide's accounts block keeps passwords.txt"
        )
        klass.make_outsiders()
        chain, key = make_certificate(work)
        certificate = guide.replaced(blocks["certificate"], guide.CHAIN, str(chain))
        as_root(guide.replaced(certificate, guide.KEY, str(key)), cwd=work)
        hub.start(start_command(blocks), cwd=work)
        users = {name: User(hub, name, klass.passwords[name]) for name in klass.names}
        for user in users.values():
            user.log_in()
            user.spawn()
        for user in users.values():
            user.wait_ready()
        yield Term(hub, klass, users, blocks, work, installed)
    finally:
        hub.stop(klass.names)
        klass.remove()
        remove_what_the_test_made()
        shutil.rmtree(work, ignore_errors=True)


def start_command(blocks: dict[str, str]) -> str:
    """The guide's start block, with the test's address for the hub's."""
    return guide.replaced(blocks["start"], guide.ADDRESS, HUB_URL)


def context_of(browser):
    """A new browser context that takes the test's certificate as it is (Chromium does not
    know the test's authority)."""
    return browser.new_context(viewport={"width": 1400, "height": 900}, ignore_https_errors=True)


def lab_page(browser, user: User):
    """A browser page of `user`'s JupyterLab, after logging in on the hub's login form (in a
    new context of `browser`, or in `browser` itself when it is a context)."""
    context = (
        browser
        if hasattr(browser, "new_page") and not hasattr(browser, "new_context")
        else context_of(browser)
    )
    page = context.new_page()  # waits a browser step (support.browser.patient)
    page.goto(f"{user.hub.url}/hub/login")
    page.fill("#username_input", user.name)
    page.fill("#password_input", user.password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user.name}/lab**")
    page.wait_for_selector(".jp-LabShell")
    page.wait_for_selector(".jp-Launcher, .jp-DirListing-item")
    return page


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"hub-{name}.png"))


def typed(user: User, block: str, **substitutions: str) -> str:
    """Type a guide's block into a new terminal of `user`'s server, one command after the
    other (stopping at the first that fails); what it printed. Fails with the output if a
    command failed."""
    for old, new in substitutions.items():
        block = guide.replaced(block, old, new)
    status, output = user.shell(" && ".join(guide.commands(block)))
    assert status == 0, f"{user.name} typed the guide's block and it failed:\n{block}\n{output}"
    return output


def ok(answer: dict) -> dict:
    """An nbgrader answer that must report success."""
    assert answer.get("success", True), answer
    return answer


# ---------------------------------------------------------------------------
# The students' Assignment List


def assignment_list(page):
    """Open Nbgrader → Assignment List."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Assignment List", exact=True).click()
    page.locator("#released_assignments_list").wait_for()


def click_in_list(page, listing: str, button: str) -> None:
    """Click `button` in the row of the assignment in the Assignment List's `listing`, and
    wait until the list has reloaded with the row gone from there or the button done."""
    row = page.locator(f"#{listing} .list_item", has_text=ASSIGNMENT).first
    row.get_by_role("button", name=button, exact=True).click()


# ---------------------------------------------------------------------------
# The tests, in the order of a term


def test_the_hub_listens_on_the_loopback_address_only(term):
    found = {port: listening(port) for port in HUB_PORTS}
    assert all(found.values()), f"the hub, its API and its proxy's API should listen: {found}"
    assert all(
        address in ("127.0.0.1", "::ffff:127.0.0.1")
        for addresses in found.values()
        for address in addresses
    ), found
    assert (term.hub.url, BIND) == ("https://hub.localhost", ("127.0.0.1", 443))
    for port in HUB_PORTS:  # below the ports any account may bind: root's only
        assert port < hub_ports.unprivileged_start(), (port, hub_ports.unprivileged_start())


def test_each_server_answers_on_its_own_name_only(term):
    """Each account's server at NAME.hub.localhost, never on the hub's name or another
    account's: what one account serves is then another origin than every other's."""
    alice, teacher = term.users[RIGHT], term.users[INSTRUCTOR]
    path = f"/user/{RIGHT}/api/status"
    status, _, body = answer_at(alice.origin + path, alice.token)
    assert status == 200 and b'"started"' in body, (status, body[:200])
    for elsewhere in (term.hub.url, teacher.origin):  # the hub's redirects at most
        status, location, body = answer_at(elsewhere + path, alice.token)
        assert status != 200 and b'"started"' not in body, (elsewhere, status, body[:200])
        assert location.startswith((term.hub.url + "/", alice.origin + "/")), location


def test_each_server_runs_as_its_own_account(term):
    for name, user in term.users.items():
        status, output = user.shell("id -un")
        assert status == 0 and output.strip().splitlines()[-1] == name, output


# Who may do what, as the guide's table says: each place's path for the test's accounts.


def place_path(place: str, klass: Class) -> Path:
    """The file or folder a place of the guide's table names, on this hub."""
    homes = {f"~{guide_name}": str(klass.home(name)) for guide_name, name in NAMES.items()}
    path = place
    for guide_home, home in homes.items():
        if path == guide_home or path.startswith(guide_home + "/"):
            path = home + path[len(guide_home) :]
    if path.endswith(f"/inbound/alice+{ASSIGNMENT}+…"):
        return submission_of(RIGHT)
    if path.endswith("/feedback/….html"):
        return feedback_page_of(RIGHT)
    assert "…" not in path and "~" not in path, f"the test does not know the place {place}"
    return Path(path)


def submission_of(student: str) -> Path:
    found = sorted((EXCHANGE / COURSE_ID / "inbound").glob(f"{student}+{ASSIGNMENT}+*"))
    assert found, f"{student} has no submission in the exchange"
    return found[-1]


def feedback_page_of(student: str) -> Path:
    """The student's released feedback page: its name is a hash of the submission's secret."""
    secret = (submission_of(student) / "submission_secret.txt").read_text()
    page = notebook_hash(secret=secret, notebook_id=NOTEBOOK)
    return EXCHANGE / COURSE_ID / "feedback" / f"{page}.html"


def try_operation(account: str, path: Path, operation: str) -> tuple[bool, str]:
    """Whether `account` can do `operation` (the guide's words) with the file or folder
    `path`, and what it printed. A rename is tried on something the folder's owner put
    there; whatever a probe leaves is removed."""
    quoted = shlex.quote(str(path))
    if operation == "read":
        command = f"ls -A {quoted} >/dev/null" if path.is_dir() else f"head -c1 {quoted} >/dev/null"
        return _ok(as_account(account, command))
    if operation == "write":
        return _ok(as_account(account, f": >> {quoted}"))
    probe = path / f".kvlesson-probe-{account}"
    if operation == "create":
        try:
            return _ok(as_account(account, f"touch {shlex.quote(str(probe))}"))
        finally:
            probe.unlink(missing_ok=True)
    sentinel, moved = path / ".kvlesson-sentinel", path / ".kvlesson-sentinel-moved"
    sentinel.touch()
    owner = path.stat()
    os.chown(sentinel, owner.st_uid, owner.st_gid)
    try:
        return _ok(
            as_account(account, f"mv {shlex.quote(str(sentinel))} {shlex.quote(str(moved))}")
        )
    finally:
        sentinel.unlink(missing_ok=True)
        moved.unlink(missing_ok=True)


def _ok(done: tuple[int, str]) -> tuple[bool, str]:
    return done[0] == 0, done[1][-200:]


def check_table(klass: Class, lines: list[guide.Line], record: str) -> None:
    """Try every operation of the table's `lines` on its place as each account; fail on
    any answer that differs from the table, listing them all."""
    seen, wrong = [], []
    for line in lines:
        path = place_path(line.place, klass)
        assert path.exists(), f"{line.place} ({path}) does not exist"
        possible = guide.ON_FOLDERS if path.is_dir() else guide.ON_FILES
        for guide_account, allowed in line.allowed.items():
            assert allowed <= possible, (
                f"{line.place}: {set(allowed - possible)} is not done to a "
                f"{'folder' if path.is_dir() else 'file'}"
            )
            for operation in sorted(possible):
                could, printed = try_operation(NAMES[guide_account], path, operation)
                seen.append(
                    {
                        "place": line.place,
                        "account": guide_account,
                        "operation": operation,
                        "may": operation in allowed,
                        "could": could,
                        "printed": printed,
                    }
                )
                if could != (operation in allowed):
                    wrong.append(
                        f"{guide_account} {'can' if could else 'cannot'} {operation} "
                        f"{line.place} ({path}): {printed}"
                    )
    (ARTIFACTS / f"hub-access-{record}.json").write_text(json.dumps(seen, indent=1))
    assert not wrong, "the guide's table of who may do what is not what happens:\n" + "\n".join(
        wrong
    )


def test_the_exchange_is_the_instructors_before_anything_is_released(term):
    """Set up as the guide says, the course's folders in the exchange are there and the
    instructor's before any release: no student can take them first (it would block
    every release of the course)."""
    exchange = [
        line
        for line in guide.table()
        if line.place.startswith(str(EXCHANGE)) and "…" not in line.place
    ]
    assert len(exchange) == 5, [line.place for line in exchange]
    check_table(term.klass, exchange, "before-release")


def hand_in(page, student: User, solution: nbformat.NotebookNode, answered: set[str]) -> dict:
    """What a student does in their JupyterLab: fetch the assignment in the Assignment List,
    answer the cells `answered` (none: the release as fetched), validate, and submit in the
    Assignment List; the validation's answer."""
    assignment_list(page)
    click_in_list(page, "released_assignments_list", "Fetch")
    page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT).first.wait_for()
    path = f"{ASSIGNMENT}/{NOTEBOOK}.ipynb"
    release = nbformat.from_dict(student.server("GET", f"api/contents/{path}")["content"])
    work = signed(handed_in(release, solution, answered), student.name) if answered else release
    student.server(
        "PUT", f"api/contents/{path}", body={"type": "notebook", "format": "json", "content": work}
    )
    checked = ok(student.server("POST", "assignments/validate", form={"path": path}))
    click_in_list(page, "fetched_assignments_list", "Submit")
    page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT).first.wait_for()
    return checked


def own_feedback(page, student: User) -> str:
    """The feedback page a student fetches with the Assignment List (there must be one)."""
    page.reload()
    page.wait_for_selector(".jp-LabShell")
    assignment_list(page)
    click_in_list(page, "submitted_assignments_list", "Fetch Feedback")
    folder = f"{ASSIGNMENT}/feedback"
    for _ in range(60):
        try:
            folders = student.server("GET", f"api/contents/{folder}")["content"]
        except AssertionError:
            folders = []
        if folders:
            break
        page.wait_for_timeout(500)
    assert len(folders) == 1, folders
    name = urllib.parse.quote(f"{folders[0]['path']}/{NOTEBOOK}.html")
    return student.server("GET", f"api/contents/{name}?type=file&format=text")["content"]


def test_a_term_as_the_guide_tells_it(term, browser):
    users, blocks = term.users, term.blocks
    teacher = users[INSTRUCTOR]
    source = course_repository(term.work / "kvlesson-source")
    run("chown", "-R", f"{INSTRUCTOR}:", str(source))  # a repository the instructor may clone,
    term.work.chmod(0o711)  # in root's folder (passwords.txt is gone)

    # The instructor's course, then the release: typed into new terminals, from the home folder.
    typed(teacher, blocks["course"], **{guide.REPOSITORY: str(source)})
    clone = term.klass.home(INSTRUCTOR) / "kvlesson"
    roster = "id,first_name,last_name,email\n" + "".join(
        f"{name},{name},Student,\n" for name in (RIGHT, PARTLY, BLANK)
    )
    teacher.server(
        "PUT", "api/contents/roster.csv", body={"type": "file", "format": "text", "content": roster}
    )  # an upload
    typed(teacher, blocks["release"])

    solution = nbformat.read(clone / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    answers = answers_to_tests(solution)
    worth = points(solution)
    answered = {RIGHT: set(answers) | {WRITTEN}, PARTLY: set(list(answers)[:-1]), BLANK: set()}
    expected = {
        name: sum(worth[t] for a in mine if a in answers for t in answers[a])
        for name, mine in answered.items()
    }
    assert 0 < expected[PARTLY] < expected[RIGHT] and expected[BLANK] == 0

    # Each student, in their JupyterLab: fetch, answer, validate, submit.
    pages = {name: lab_page(browser, users[name]) for name in answered}
    for name, mine in answered.items():
        checked = hand_in(pages[name], users[name], solution, mine)
        assert ("failed" in checked["value"]) == (name != RIGHT), (name, checked["value"])

    # From her shell, the blank student hands in again, naming her folder an hour early; an
    # account outside the course tries to hand in; root plants an entry in its name.
    backdated = hand_in_backdated(BLANK)
    refused = outsider_submits()
    assert (
        refused[0] != 0 and f"Not submitted: the account {OUTSIDER} may not hand in" in refused[1]
    ), refused
    plant_in_inbound(OUTSIDER)

    # The instructor collects and grades, in a new terminal.
    output = typed(teacher, blocks["grade"])
    (ARTIFACTS / "hub-grade.txt").write_text(output)
    for name in answered:
        assert f"{COURSE_ID} {name} {ASSIGNMENT} " in output, f"list --inbound shows no {name}"
    assert "SAWarning" not in output, output
    scores = {
        s["student"]: s["score"]
        for s in teacher.server("GET", f"formgrader/api/submissions/{ASSIGNMENT}")
    }
    assert scores == expected  # nobody outside the roster
    assert f"{OUTSIDER} is not on the course's roster" in output, output
    assert re.search(
        rf"{BLANK} .*its folder's name says it was handed in at "
        rf"{backdated:%Y-%m-%d %H:%M:%S} UTC, but",
        output,
    ), output
    collected = (clone / "submitted" / BLANK / ASSIGNMENT / "timestamp.txt").read_text()
    counted = datetime.datetime.strptime(collected, "%Y-%m-%d %H:%M:%S.%f UTC")
    assert counted - backdated > datetime.timedelta(minutes=50), collected  # when it arrived
    report = clone / "reports" / f"{ASSIGNMENT}.html"
    assert report.is_file() and f"the class report of {ASSIGNMENT}: {report}" in output, output

    # The formgrader, in JupyterLab in a browser, through the hub: the written answer graded
    # by hand in the panel (the right student's submission, its score box, Tab to save).
    page = lab_page(browser, teacher)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Formgrader", exact=True).click()
    frame = page.frame_locator("iframe").first
    frame.get_by_text("Manage Assignments").first.wait_for()
    frame.get_by_text(ASSIGNMENT).first.wait_for()
    shot(page, "1-instructor-formgrader")
    notebooks = teacher.server("GET", f"formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NOTEBOOK}")
    submission = next(n for n in notebooks if n["student"] == RIGHT)
    assert submission["needs_manual_grade"]
    panel = next(f for f in page.frames if "/formgrader" in f.url)
    panel.goto(f"{teacher.origin}/user/{INSTRUCTOR}/formgrader/submissions/{submission['id']}/")
    # The page fills its score boxes once its grades and comments have loaded; a score typed
    # before that is overwritten.
    panel.wait_for_function(
        "typeof formgrader !== 'undefined' && formgrader.grades.loaded "
        "&& formgrader.comments.loaded",
    )
    panel.fill(f"input.score#{WRITTEN}", f"{worth[WRITTEN]:g}")
    panel.press(f"input.score#{WRITTEN}", "Tab")
    written = saved_grade(teacher, submission["id"], WRITTEN)
    shot(page, "2-instructor-manual-grade")
    assert written["manual_score"] == worth[WRITTEN] and not written["needs_manual_grade"]
    expected[RIGHT] += worth[WRITTEN]
    page.close()

    # Feedback and the grades file, typed; each student fetches their own feedback.
    typed(teacher, blocks["feedback"])
    total = sum(worth.values())
    for name in answered:
        html = own_feedback(pages[name], users[name])
        mine = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", html)
        assert (float(mine[1]), float(mine[2])) == (expected[name], total), name
        assert not any(f"work of {other}" in html for other in answered if other != name), name
        assert (f"work of {name}" in html) == bool(answered[name] - {WRITTEN}), name
    shot(pages[RIGHT], "3-student-assignment-list")
    for page in pages.values():
        page.close()
    with (term.klass.home(INSTRUCTOR) / "grades.csv").open() as grades:
        exported = {row["student_id"]: float(row["score"]) for row in csv.DictReader(grades)}
    assert exported == expected


def hand_in_backdated(student: str) -> datetime.datetime:
    """The student hands in again from her shell: a copy of the submission her nbgrader cache
    keeps (its notebook and secret), under a folder named an hour early and with that time in
    its timestamp.txt, as if submitted then; the time the name holds."""
    early = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - datetime.timedelta(
        hours=1
    )
    stamp = f"{early:%Y-%m-%d %H:%M:%S.%f} UTC"
    earlier = shlex.quote(
        str(EXCHANGE / COURSE_ID / "inbound" / f"{student}+{ASSIGNMENT}+{stamp}+early")
    )
    status, output = as_account(
        student,
        f"latest=$(ls -d ~/.local/share/jupyter/nbgrader_cache/{COURSE_ID}/"
        f'{student}+{ASSIGNMENT}+* | tail -n 1) && cp -r "$latest" {earlier} && '
        f"printf %s {shlex.quote(stamp)} > {earlier}/timestamp.txt",
    )
    assert status == 0, output
    return early


def outsider_submits() -> tuple[int, str]:
    """The account outside the course fetches the release and submits it from its shell, with
    the hub's environment; the submit's exit status and output."""
    nbgrader = VENV_BIN / "nbgrader"
    return as_account(
        OUTSIDER,
        f"cd ~ && {nbgrader} fetch_assignment {ASSIGNMENT} && {nbgrader} submit {ASSIGNMENT}",
    )


def plant_in_inbound(account: str) -> None:
    """A submission folder in `account`'s name and owned by it, which only root could put
    there now (a student dropped from the course after handing in, say)."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = EXCHANGE / COURSE_ID / "inbound" / f"{account}+{ASSIGNMENT}+{stamp}+planted"
    folder.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), folder / f"{NOTEBOOK}.ipynb")
    run("chown", "-R", f"{account}:", str(folder))


def saved_grade(teacher: User, submission: str, grade_id: str) -> dict:
    """The gradebook's grade of `grade_id` once the formgrader page has saved a manual score
    (it saves in the background after the score box loses focus); the last one seen if
    none arrives within a hang guard of 30 s."""
    for _ in range(60):
        grades = teacher.server("GET", f"formgrader/api/grades?submission_id={submission}")
        grade = next(g for g in grades if g["name"] == grade_id)
        if grade["manual_score"] is not None:
            return grade
        time.sleep(0.5)
    return grade


def test_who_may_do_what_is_as_the_guide_says(term):
    """Every line of the guide's table, tried as each account, once the term has run."""
    check_table(term.klass, guide.table(), "after-the-term")


def test_another_accounts_token_opens_nothing_on_a_students_server(term):
    bob = term.users[PARTLY]
    status, _, _ = bob.call(
        "GET", f"/user/{RIGHT}/api/contents/{ASSIGNMENT}", raw=True, origin=term.users[RIGHT].origin
    )
    assert status == 403, status


def test_an_account_outside_the_course_cannot_log_in(term):
    """With its own right password: the hub lets in the course's two groups only."""
    with pytest.raises(HubError, match="could not log in: 403"):
        User(term.hub, OUTSIDER, term.klass.passwords[OUTSIDER]).log_in()
    assert re.search(rf"{OUTSIDER}.* not (in allowed groups|allowed)", term.hub.log(), re.I), (
        term.hub.log()[-2000:]
    )


def page_config(user: User) -> dict:
    """The page configuration JupyterLab hands `user`'s browser, and the response headers."""
    status, headers, html = user.server("GET", "lab", raw=True)
    assert status == 200, (user.name, status)
    data = re.search(
        rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S
    )
    return {"config": json.loads(data[1]), "headers": headers}


def test_students_get_the_student_interface(term, browser):
    users = term.users
    teacher, alice = users[INSTRUCTOR], users[RIGHT]
    instructor_tools = {
        "@jupyter/nbgrader:formgrader",
        "@jupyter/nbgrader:create-assignment",
        "@jupyter/nbgrader:course-list",
    }
    student_lab, teacher_lab = page_config(alice), page_config(teacher)
    assert instructor_tools <= set(student_lab["config"]["disabledExtensions"])
    assert "@jupyter/nbgrader:assignment-list" not in student_lab["config"]["disabledExtensions"]
    assert not instructor_tools & set(teacher_lab["config"]["disabledExtensions"])
    assert alice.server("GET", "formgrader", raw=True)[0] == 404
    assert teacher.server("GET", "formgrader", raw=True)[0] == 200
    # Only the instructor's server may be framed (the formgrader panel), by itself.
    csp = {
        name: lab["headers"].get("Content-Security-Policy", "")
        for name, lab in ((RIGHT, student_lab), (INSTRUCTOR, teacher_lab))
    }
    assert "frame-ancestors 'none'" in csp[RIGHT], csp
    assert "frame-ancestors 'self'" in csp[INSTRUCTOR], csp

    page = lab_page(browser, alice)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    shot(page, "4-student-menu")
    assert "Assignment List" in items and not any("Formgrader" in i for i in items), items
    assert page.get_by_text("Create Assignment").count() == 0  # the instructor's sidebar tab
    assert page.get_by_text("official Jupyter news").count() == 0
    page.close()


def serve_a_page(student: User, pages: dict[str, str] | None = None) -> str:
    """The student puts hub_attack's pages (or `pages`: name, text) where her server serves
    them without a login (as the December 2026 walk did); the address of the first, or of
    the folder when `pages` are given."""
    folder = "~/.local/share/jupyter/labextensions/kvprobe/static"
    pages = pages or {"question.html": hub_attack.PAGE, "other.html": hub_attack.OTHER}
    with tempfile.TemporaryDirectory() as scratch:
        for name, text in pages.items():
            (Path(scratch) / name).write_text(text)
        Path(scratch).chmod(0o755)
        status, output = as_account(
            student.name, f"mkdir -p {folder} && cp {scratch}/*.html {folder}/"
        )
    assert status == 0, output
    base = f"{student.origin}/user/{student.name}/lab/extensions/kvprobe/static/"
    return base + "question.html" if "question.html" in pages else base


def what_the_page_did(page, url: str, victim: User, marker: Path, mode: str) -> dict:
    """Open the student's page in `victim`'s browser, logged in to the hub, in `mode` (frame:
    nothing clicked; popup: the legend, then the chart); what each of its attempts got, once
    it is done."""
    query = urllib.parse.urlencode(
        {"victim": victim.name, "hub": victim.hub.url, "marker": str(marker), "mode": mode}
    )
    page.goto(f"{url}?{query}")
    if mode == "popup":
        page.click("#legend")
        page.wait_for_function(
            "document.getElementById('out').textContent.includes('control-popup')"
        )
        page.click("#show")
    page.wait_for_function("document.title === 'done'")
    return json.loads(page.locator("#out").inner_text())


def traces(user: User) -> tuple[set[str], set[str]]:
    """What an attempt to act as `user` would leave: its terminals and its hub tokens."""
    terminals = {t["name"] for t in user.server("GET", "api/terminals")}
    tokens = {t["id"] for t in user.call("GET", f"/hub/api/users/{user.name}/tokens")["api_tokens"]}
    return terminals, tokens


def test_a_students_page_cannot_act_for_another_account(term, browser):
    """The walk's route, as a student: a page of hers, served by her server without a login,
    opened by the instructor (no click) and by a classmate (one click). On a hub with one
    origin it typed into their terminals; with one name per account every attempt is
    refused, while the same script reads its own origin (so it runs), and nothing it tried
    happened."""
    alice, bob, teacher = term.users[RIGHT], term.users[PARTLY], term.users[INSTRUCTOR]
    url = serve_a_page(alice)
    status, _, body = alice.call(
        "GET", urllib.parse.urlsplit(url).path, raw=True, origin=alice.origin, auth=False
    )
    assert status == 200 and b"Show my chart" in body  # served, to anyone
    marker = Path(tempfile.gettempdir()) / f"kvlesson-acted-{secrets.token_hex(4)}"
    seen = {}
    for victim, mode in ((teacher, "frame"), (bob, "popup")):
        victim.server("POST", "api/terminals", body={})  # one the page may try to type into
        context = context_of(browser)
        try:
            page = lab_page(context, victim)  # logged in to the hub (a token for the Lab)
            before = traces(victim)
            seen[victim.name] = what_the_page_did(page, url, victim, marker, mode)
        finally:
            context.close()
        (ARTIFACTS / "hub-attack.json").write_text(json.dumps(seen, indent=1))
        did = seen[victim.name]
        assert did["control-fetch"].startswith("got 200 <!doctype html><title>legend"), did
        if mode == "popup":
            assert did["control-popup"].startswith("got cookie"), did
        tried = [key for key in did if not key.startswith("control")]
        assert len(tried) == {"frame": 9, "popup": 8}[mode], did
        for key in tried:
            if key.startswith(("new-terminal", "hub-token")):
                continue  # a request the browser may send without showing the answer: below
            assert did[key].startswith("refused"), (victim.name, key, did[key])
        assert traces(victim) == before, f"the page acted as {victim.name}: {did}"
        assert not marker.exists(), f"the page typed into a terminal of {victim.name}"
        # The victim's server saw the page's websocket, with the victim's cookies, and
        # refused it for its origin.
        host = urllib.parse.urlsplit(victim.origin).netloc
        assert (
            f"Blocking Cross Origin WebSocket Attempt.  Origin: {alice.origin}, Host: {host}"
            in term.hub.log_path.read_text(errors="replace")
        ), victim.name
    for victim in (teacher, bob):  # the terminals the test opened
        for name in traces(victim)[0]:
            victim.server("DELETE", f"api/terminals/{name}")


# ---------------------------------------------------------------------------
# The walk of 7 December 2026, as a student: the hub's pages on her name, cookies for the
# hub's whole name, processes that outlive her server and take the hub's ports.


def test_the_hubs_pages_answer_on_the_hubs_name_only(term):
    """On a user's name only /user/NAME/ is served: the hub's login page, its API, the
    walk's token request and another user's path asked for on alice's name (or on a name that
    is no user's) are sent to the hub's own name, never answered there."""
    alice, teacher = term.users[RIGHT], term.users[INSTRUCTOR]
    form = b'id="username_input"'
    status, _, body = answer_at(f"{term.hub.url}/hub/login")
    assert status == 200 and form in body  # the real login page, on the hub's name
    for origin in (alice.origin, teacher.origin, origin_of(HUB_URL, "nobody-here")):
        for path in (
            "/hub/login",
            "/hub/home",
            f"/hub/api/users/{INSTRUCTOR}",
            "/",
            f"/user/{PARTLY}/lab",
        ):
            status, location, body = answer_at(origin + path, alice.token)
            assert (status, location) == (302, term.hub.url + path), (
                origin,
                path,
                status,
                location,
            )
            assert form not in body and b"api_tokens" not in body, (origin, path)
        status, _, _ = alice.call(
            "POST", f"/hub/api/users/{RIGHT}/tokens", body={"note": "x"}, raw=True, origin=origin
        )
        assert status == 404, (origin, status)  # the walk's A3: 201 on ana's name
    status, _, body = answer_at(f"{alice.origin}/user/{RIGHT}/api/status", alice.token)
    assert status == 200 and b'"started"' in body  # her own server, on her own name


def test_a_students_popup_of_the_hubs_login_page_reads_nothing_and_mints_no_token(term, browser):
    """The walk's A3: her page opens the hub's login page in a popup on her own origin, where
    its script could read what the instructor types; it is the hub's own name now, which her
    script cannot read, and the hub's API on her name gives no token."""
    alice, teacher = term.users[RIGHT], term.users[INSTRUCTOR]
    url = serve_a_page(alice, {"login.html": hub_attack.LOGIN_PAGE})
    context = context_of(browser)
    try:
        page = lab_page(context, teacher)  # logged in to the hub, as in the walk
        before = traces(teacher)
        page.goto(f"{url}login.html?{urllib.parse.urlencode({'victim': INSTRUCTOR})}")
        page.click("#show")
        page.wait_for_function("document.title === 'done'", timeout=HANG_MS)
        did = json.loads(page.locator("#out").inner_text())
        (ARTIFACTS / "hub-attack-login.json").write_text(json.dumps(did, indent=1))
        assert did["popup-login"].startswith("refused"), did  # another origin: unreadable
        for key in ("whoami", "token"):
            assert did[key].startswith("refused") or " form:" not in did[key], did
            assert INSTRUCTOR not in did[key] and '"token"' not in did[key], did
        popup = context.pages[-1]  # sent to the hub's own name (then, logged in, his Lab)
        assert popup.url.startswith((f"{term.hub.url}/", teacher.origin)), popup.url
        assert traces(teacher) == before, "the page made the instructor a token"
    finally:
        context.close()


def files_of(user: User) -> set[str]:
    """The names in the account's home folder, as its server lists them."""
    return {item["name"] for item in user.server("GET", "api/contents")["content"]}


def hub_login_cookie(context) -> str:
    """The hub's login cookie of a browser context logged in to the hub (its value)."""
    found = [c["value"] for c in context.cookies() if c["name"].endswith("jupyterhub-hub-login")]
    assert found, context.cookies()
    return found[0]


def test_cookies_a_students_page_sets_for_the_hubs_name_lock_nobody_out_or_in(term, browser):
    """The walk's A4 and A5: her page, opened once, sets thirty large cookies for the hub's
    whole name (every later request of the visitor answered 431, before), login cookies of
    her own under the hub's names (the instructor logged in as her, before) and _xsrf cookies,
    forged or her own, on the login page's and the victim's server's paths. The instructor and
    a classmate who opened it still log in, reach the hub and their own servers as themselves,
    and their JupyterLab still saves."""
    alice, bob, teacher = term.users[RIGHT], term.users[PARTLY], term.users[INSTRUCTOR]
    url = serve_a_page(alice, {"cookies.html": hub_attack.COOKIE_PAGE})
    mine = context_of(browser)
    try:
        lab_page(mine, alice)
        her_login = hub_login_cookie(mine)
        her_xsrf = next(c["value"] for c in mine.cookies() if c["name"] == "_xsrf")
    finally:
        mine.close()
    for victim in (teacher, bob):
        context = context_of(browser)
        try:
            page = lab_page(context, victim)
            query = {"hub": term.hub.url, "login": her_login, "victim": victim.name}
            if victim is bob:  # her own _xsrf, valid (signed by the hub), on his paths
                query["xsrf"] = her_xsrf
            page.goto(f"{url}cookies.html?{urllib.parse.urlencode(query)}")
            page.wait_for_function("document.title.startsWith('done')")
            sent = sum(len(c["name"]) + len(c["value"]) for c in context.cookies())
            assert sent > 100_000, sent  # the bomb is in the browser
            answer = page.goto(f"{term.hub.url}/hub/home")
            assert answer.status == 200, answer.status  # 431 before
            home = page.content()  # the hub's home page: whose it is, and nobody else's
            assert f'<span class="me-1">{victim.name}</span>' in home, home[-2000:]
            assert RIGHT not in home, home[-2000:]
            page.goto(f"{victim.origin}/user/{victim.name}/lab")
            page.wait_for_selector(".jp-LabShell")  # their own server, still theirs
            # ... and their JupyterLab still saves: a new file, with the _xsrf the page set on
            # their server's paths among the cookies JupyterLab reads
            before = files_of(victim)
            page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
            page.locator(".lm-Menu-itemLabel").get_by_text("New", exact=True).hover()
            page.locator(".lm-Menu-itemLabel").get_by_text("Text File", exact=True).click()
            deadline = time.monotonic() + HANG  # a hang guard only
            while files_of(victim) == before and time.monotonic() < deadline:
                time.sleep(0.5)
            assert files_of(victim) - before == {"untitled.txt"}, files_of(victim) - before
            victim.server("DELETE", "api/contents/untitled.txt")
            shot(page, f"5-after-cookies-{victim.name}")
        finally:
            context.close()
    # Before anyone logs in: the page first, then the hub's login form, its forged _xsrf
    # (on the login page's own path, sent first) passed over by the hub.
    context = context_of(browser)
    try:
        page = context.new_page()
        query = {"hub": term.hub.url, "login": her_login, "victim": teacher.name}
        page.goto(f"{url}cookies.html?{urllib.parse.urlencode(query)}")
        page.wait_for_function("document.title.startsWith('done')")
        page.close()
        lab_page(context, teacher)  # logs in, through the hub's form, as himself
    finally:
        context.close()
    bomb = "; ".join(f"b{i}={'x' * 3800}" for i in range(30))
    for origin in (term.hub.url, bob.origin):
        request = urllib.request.Request(f"{origin}/hub/login", headers={"Cookie": bomb})
        try:
            status = opener().open(request, timeout=HANG).status
        except urllib.error.HTTPError as error:
            status = error.code
        assert status in (200, 302), (origin, status)  # never 431


SQUATTER = r"""
import os, socket, sys, time
log = open(os.path.expanduser("~/squat.log"), "a", buffering=1)
held, said = {}, set()
for _ in range(1200):  # ten minutes of tries, a hang guard: the test ends it long before
    for port in map(int, sys.argv[1:]):
        if port in held:
            continue
        probe = socket.socket()
        try:
            probe.bind(("127.0.0.1", port))
            probe.listen()
            held[port] = probe
            log.write(f"took {port}\n")
        except OSError as error:
            probe.close()
            if port not in said:
                said.add(port)
                log.write(f"{port}: {error.strerror}\n")
    time.sleep(0.5)
"""


def squat_from_her_terminal(student: User) -> None:
    """From her JupyterLab terminal, as in the walk: a process left running with `setsid
    nohup`, which keeps trying to bind every port the hub has (and JupyterHub's defaults),
    and a double fork of its own session."""
    home = term_home(student)
    (home / ".sq.py").write_text(SQUATTER)
    run("chown", f"{student.name}:", str(home / ".sq.py"))
    ports = " ".join(map(str, (*HUB_PORTS, 8000, 8001, 8081)))
    status, output = student.shell(
        f"setsid nohup python3 ~/.sq.py {ports} >/dev/null 2>&1 & "
        "(setsid sh -c 'sleep 100000 & exec sleep 100001' >/dev/null 2>&1 &); echo left"
    )
    assert status == 0 and "left" in output, output
    deadline = time.monotonic() + HANG  # a hang guard only
    while time.monotonic() < deadline:
        if squatting(student.name):
            return
        time.sleep(0.1)
    raise AssertionError(f"{student.name}'s squatter never ran")


def term_home(student: User) -> Path:
    return Path(pwd.getpwnam(student.name).pw_dir)


def squatting(name: str) -> list[int]:
    """The processes of `name` the squat left (the squatter and its sleeps)."""
    found = []
    for pid in account_pids({name}):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b".sq.py" in command or b"sleep\x00100000" in command:
            found.append(pid)
    return found


def gone(name: str, seconds: float = HANG) -> bool:
    """Whether every process the squat left for `name` ends (within `seconds`, a hang guard)."""
    deadline = time.monotonic() + seconds
    while squatting(name) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not squatting(name)


def test_a_students_processes_end_with_her_server(term):
    """The walk's A2, first half: what she leaves running from her terminal ends when her
    server stops; it could never bind the hub's ports (below 1024: root's)."""
    alice = term.users[RIGHT]
    squat_from_her_terminal(alice)
    status, _, _ = alice.call("DELETE", f"/hub/api/users/{RIGHT}/server", raw=True)
    assert status in (202, 204), status
    assert gone(RIGHT), f"{RIGHT}'s processes outlived her server: {squatting(RIGHT)}"
    said = (term_home(alice) / "squat.log").read_text()
    for port in HUB_PORTS:
        assert f"{port}: Permission denied" in said and f"took {port}" not in said, said
    alice.spawn()
    alice.wait_ready()


def stop_as_the_guide_says(term) -> str:
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + term.blocks["stop"]], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def wait_free(seconds: float = HANG) -> dict[int, list[str]]:
    """The hub's ports still listened on after `seconds` at most (a hang guard: none, once
    all is ended)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(listening(port) for port in HUB_PORTS):
        time.sleep(0.2)
    return {port: listening(port) for port in HUB_PORTS if listening(port)}


def proxies_left() -> list[int]:
    """The configurable-http-proxy processes still running once those ending have ended (a
    hang guard only)."""
    deadline = time.monotonic() + HANG
    while proxies() and time.monotonic() < deadline:
        time.sleep(0.2)
    return proxies()


def proxies() -> list[int]:
    """Every configurable-http-proxy process that runs."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and b"configurable-http-proxy" in (entry / "cmdline").read_bytes()
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_the_guides_stop_ends_the_hub_its_proxy_and_every_students_process(term):
    """The walk's A2, second half: step 5 with a squatter running, then step 4."""
    alice = term.users[RIGHT]
    squat_from_her_terminal(alice)
    said = stop_as_the_guide_says(term)
    assert term.hub.wait_stopped(HANG), "the hub still runs after the guide's stop command"
    assert "ended every process of the students' accounts" in said, said
    assert gone(RIGHT), f"{RIGHT}'s processes outlived the hub: {squatting(RIGHT)}"
    assert not wait_free(), f"still listening after the stop: {wait_free(0)}"
    assert not proxies_left(), proxies()
    term.hub.start(start_command(term.blocks), cwd=term.work)
    held = {port: hub_ports.holders(port) for port in HUB_PORTS}
    assert all(held.values()) and {h.account for who in held.values() for h in who} == {"root"}, (
        held
    )
    alice.log_in()  # the hub works again, for the same accounts
    alice.spawn()
    alice.wait_ready()


def test_the_start_names_what_holds_its_port_and_leaves_no_proxy(term):
    """The walk's A2 and W2: a port of the hub's held by another process: the guide's start
    names it and stops before anything else (no proxy left holding the public port)."""
    stop_as_the_guide_says(term)
    assert term.hub.wait_stopped(HANG) and not wait_free() and not proxies_left()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            # SO_REUSEADDR, as servers set it: the stop just above leaves the proxy's closed
            # connections in TIME_WAIT on the port for a minute
            "import socket,time\ns=socket.socket()\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('127.0.0.1', 801))\n"
            "s.listen()\nprint('held', flush=True)\ntime.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(HubError, match="exited"):
            term.hub.start(start_command(term.blocks), cwd=term.work)
        log = term.hub.log()
        assert (
            f"The hub does not start: the hub's ports are taken: proxy's API port (801) is held "
            f"by process {holder.pid} of root" in log
        ), log
        assert not proxies() and not listening(443), (proxies(), listening(443))
    finally:
        holder.kill()
        holder.wait()


def test_a_hub_killed_outright_leaves_no_proxy_behind(term):
    """The walk's W2: a hub that ends without stopping its proxy (killed, or a start that
    fails after the proxy started) took the proxy with it, so nothing holds the public port."""
    term.hub.start(start_command(term.blocks), cwd=term.work)
    hub = int((STATE / "jupyterhub.pid").read_text())
    os.kill(hub, 9)
    assert term.hub.wait_stopped(HANG)
    assert not wait_free(), f"the killed hub's proxy still listens: {wait_free(0)}"
    assert not proxies_left(), proxies()
    stop_as_the_guide_says(term)  # and the guide's stop still ends what is left
    assert not wait_free() and not squatting(RIGHT)
