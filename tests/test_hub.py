"""A term on a real JupyterHub: real Unix accounts, release to feedback, through the hub.

The hub is the one docs/jupyterhub.md tells an admin to run: installed by hub/setup.sh
(JupyterHub from PyPI, configurable-http-proxy from npm, in /opt/kvlesson-hub), configured
by hub/jupyterhub_config.py and the nbgrader files of hub/, started as root on 127.0.0.1.
The test makes one instructor and three students with useradd, each with a password; the
local process spawner runs each one's server as that account. Every step goes through the
hub with the account's own token (made from its password by PAM): the instructor adds the
students, generates and releases 02_ceiling; each student fetches it, answers (one right,
one partly, one not at all), validates and submits; the instructor collects, autogrades,
opens the formgrader in JupyterLab in a real browser (the iframe must load), enters the
manual grade of the written answer, and releases feedback; each student fetches their own.
Then what each account can and cannot see: the student interface (no formgrader, no
Create Assignment), another student's work, the instructor's solutions/ and gradebook.

It needs root and useradd, and skips without them. Screenshots go to artifacts/hub-*.png,
and what each account could read to artifacts/hub-access.json. Every account, process and
folder it made is removed at the end, also when it fails.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from hub_session import Class, Hub, User, run
from test_browser import browser  # noqa: F401 (the fixture: Debian's chromium, shared)
from kvlesson.grading import course_build

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
COURSE_ID = "kvlesson"  # hub/nbgrader_config.py
ASSIGNMENT, NOTEBOOK = "02_ceiling", "ceiling"  # the assignment with a written answer
WRITTEN = "q2_answer"  # its manually graded cell
INSTRUCTOR = "kvhteach"
RIGHT, PARTLY, BLANK = "kvhalice", "kvhbob", "kvhcarol"  # how each student answers
BROWSER_WAIT = 60_000  # ms for a page of JupyterLab, a hang guard only


def why_not() -> str | None:
    """The reason this machine cannot run the hub, or None."""
    if os.geteuid() != 0:
        return "the hub test makes Unix accounts and starts JupyterHub as root: run it as root"
    for tool in ("useradd", "userdel", "groupadd", "chpasswd"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on this machine: the hub test makes real Unix accounts"
    return None


pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


# ---------------------------------------------------------------------------
# The notebooks the students hand in


def signed(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The notebook with the student's name in a comment of every code answer, so that a
    feedback page shows whose work it holds."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            cell.source = f"# work of {name}\n{cell.source}"
    return nb


def answers_to_tests(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    """Each autograded answer cell ('P_answer') and the test cells that grade it ('P_...')."""
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
    answers = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    return {a: [i for i in ids if i != a and i.startswith(a.removesuffix("answer"))]
            for a in answers}


def handed_in(release: nbformat.NotebookNode, solution: nbformat.NotebookNode,
              answered: set[str]) -> nbformat.NotebookNode:
    """The release with the instructor's answer in the cells `answered` (grade ids)."""
    right = course_build.answered(release, solution)
    nb = copy.deepcopy(release)
    for mine, model in zip(nb.cells, right.cells):
        if mine.metadata.get("nbgrader", {}).get("grade_id") in answered:
            mine.source = model.source
    return nb


def points(nb: nbformat.NotebookNode) -> dict[str, float]:
    """The points of each graded cell of the instructor's notebook."""
    return {c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"]["points"])
            for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}


# ---------------------------------------------------------------------------
# The class on the hub


@pytest.fixture(scope="module")
def term() -> Iterator[dict]:
    """The hub with the class logged in and every server running; all removed afterwards."""
    run("bash", str(ROOT / "hub/setup.sh"))  # quick when installed (scripts/test.sh did it)
    ARTIFACTS.mkdir(exist_ok=True)
    place = Path(tempfile.mkdtemp(prefix="kvlesson-hub-"))
    place.chmod(0o755)
    exchange = place / "exchange"  # as docs/jupyterhub.md says: every account writes it,
    exchange.mkdir()  # and the sticky bit keeps one from renaming another's folders
    exchange.chmod(0o1777)
    workdir = place / "hub"  # the hub's database, cookie secret and log: root only
    workdir.mkdir(mode=0o700)
    klass = Class(INSTRUCTOR, [RIGHT, PARTLY, BLANK])
    hub = Hub(ROOT / "hub/jupyterhub_config.py", workdir, {"KVLESSON_EXCHANGE": str(exchange)})
    try:
        klass.create()
        # The instructor's clone of the course: its configuration, solutions/ and keys/.
        clone = course_build.copy_course(klass.home(INSTRUCTOR) / "kvlesson", [ASSIGNMENT])
        run("chown", "-R", f"{INSTRUCTOR}:{INSTRUCTOR}", str(clone))
        hub.start()
        users = {name: User(hub, name, klass.passwords[name]) for name in klass.names}
        for user in users.values():
            user.log_in()
            user.spawn()
        for user in users.values():
            user.wait_ready()
        yield {"hub": hub, "users": users, "class": klass, "exchange": exchange,
               "clone": clone}
    finally:
        hub.stop(klass.names)
        if (workdir / "jupyterhub.log").exists():  # the hub's log, for a failure in CI
            shutil.copy(workdir / "jupyterhub.log", ARTIFACTS / "hub-jupyterhub.log")
        klass.remove()
        shutil.rmtree(place, ignore_errors=True)


def lab_page(browser, user: User):
    """A browser page of `user`'s JupyterLab, after logging in on the hub's login form."""
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.set_default_timeout(BROWSER_WAIT)
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


def ok(answer: dict) -> dict:
    """An nbgrader answer that must report success."""
    assert answer.get("success", True), answer
    return answer


def class_scores(teacher: User) -> dict[str, float]:
    """Each student's total for the assignment, as the formgrader reports it."""
    submissions = teacher.server("GET", f"formgrader/api/submissions/{ASSIGNMENT}")
    return {s["student"]: s["score"] for s in submissions}


def hand_in(student: User, solution: nbformat.NotebookNode, answered: set[str]) -> dict:
    """What a student does on their server: fetch the assignment, answer the cells
    `answered` (none: the release as fetched), validate, submit; the validation answer."""
    exchange = {"assignment_id": ASSIGNMENT, "course_id": COURSE_ID}
    listed = student.server("GET", f"assignments?course_id={COURSE_ID}")["value"]
    assert [a["assignment_id"] for a in listed if a["status"] == "released"] == [ASSIGNMENT]
    student.server("POST", "assignments/fetch", form=exchange)
    path = f"{ASSIGNMENT}/{NOTEBOOK}.ipynb"
    release = nbformat.from_dict(student.server("GET", f"api/contents/{path}")["content"])
    work = signed(handed_in(release, solution, answered), student.name) if answered else release
    student.server("PUT", f"api/contents/{path}",
                   body={"type": "notebook", "format": "json", "content": work})
    checked = ok(student.server("POST", "assignments/validate", form={"path": path}))
    ok(student.server("POST", "assignments/submit", form=exchange))
    return checked


def own_feedback(student: User) -> str:
    """The feedback page a student fetches for the assignment (there must be one)."""
    student.server("POST", "assignments/fetch_feedback",
                   form={"assignment_id": ASSIGNMENT, "course_id": COURSE_ID})
    folders = student.server("GET", f"api/contents/{ASSIGNMENT}/feedback")["content"]
    assert len(folders) == 1, folders
    page = urllib.parse.quote(f"{folders[0]['path']}/{NOTEBOOK}.html")
    return student.server("GET", f"api/contents/{page}?type=file&format=text")["content"]


# ---------------------------------------------------------------------------
# The tests


def test_each_server_runs_as_its_own_account(term):
    for name, user in term["users"].items():
        status, output = user.shell("id -un")
        assert status == 0 and output.strip().splitlines()[-1] == name, output


def test_a_term_from_release_to_feedback(term, browser):
    users, clone = term["users"], term["clone"]
    teacher = users[INSTRUCTOR]
    api = f"formgrader/api/assignment/{ASSIGNMENT}"

    # The instructor adds the students and releases the assignment, from the formgrader.
    for name in (RIGHT, PARTLY, BLANK):
        teacher.server("PUT", f"formgrader/api/student/{name}",
                       body={"first_name": name, "last_name": "Student", "email": None})
    ok(teacher.server("POST", f"{api}/assign"))
    ok(teacher.server("POST", f"{api}/release"))
    solution = nbformat.read(clone / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    answers = answers_to_tests(solution)
    worth = points(solution)
    answered = {RIGHT: set(answers) | {WRITTEN}, PARTLY: set(list(answers)[:-1]), BLANK: set()}
    expected = {name: sum(worth[t] for a in mine if a in answers for t in answers[a])
                for name, mine in answered.items()}
    assert 0 < expected[PARTLY] < expected[RIGHT] and expected[BLANK] == 0

    # Each student fetches, answers, validates and submits from their own server;
    # Validate passes for the right answers only.
    for name, mine in answered.items():
        checked = hand_in(users[name], solution, mine)
        assert ("failed" in checked["value"]) == (name != RIGHT), (name, checked["value"])

    # The instructor collects, and grades the class in the box with the course's one
    # grading command, typed in a terminal of their server.
    ok(teacher.server("POST", f"{api}/collect"))
    status, output = teacher.shell(f"cd ~/kvlesson && python -m kvlesson.grade {ASSIGNMENT}")
    (ARTIFACTS / "hub-grade.txt").write_text(output)
    assert status == 0, output
    assert class_scores(teacher) == expected

    # The formgrader, in JupyterLab in a browser, through the hub: the iframe loads.
    page = lab_page(browser, teacher)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Formgrader", exact=True).click()
    frame = page.frame_locator("iframe").first
    frame.get_by_text("Manage Assignments").first.wait_for()
    frame.get_by_text(ASSIGNMENT).first.wait_for()
    shot(page, "1-instructor-formgrader")

    # The written answer, graded by hand in the formgrader panel: the right student's
    # submission, its score box, Tab to save.
    notebooks = teacher.server("GET",
                               f"formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NOTEBOOK}")
    submission = next(n for n in notebooks if n["student"] == RIGHT)
    assert submission["needs_manual_grade"]
    panel = next(f for f in page.frames if "/formgrader" in f.url)
    panel.goto(f"{teacher.hub.url}/user/{INSTRUCTOR}/formgrader/submissions/{submission['id']}/")
    # The page fills its score boxes from the gradebook once its grades and comments have
    # loaded; a score typed before that is overwritten (how this test failed on a fresh
    # machine).
    panel.wait_for_function("typeof formgrader !== 'undefined' && formgrader.grades.loaded "
                            "&& formgrader.comments.loaded", timeout=30_000)
    panel.fill(f"input.score#{WRITTEN}", f"{worth[WRITTEN]:g}")
    panel.press(f"input.score#{WRITTEN}", "Tab")
    written = saved_grade(teacher, submission["id"], WRITTEN)
    shot(page, "2-instructor-manual-grade")
    assert written["manual_score"] == worth[WRITTEN] and not written["needs_manual_grade"]
    expected[RIGHT] += worth[WRITTEN]
    assert class_scores(teacher) == expected

    # Feedback: released by the instructor, each student fetches their own.
    ok(teacher.server("POST", f"{api}/generate_feedback"))
    ok(teacher.server("POST", f"{api}/release_feedback"))
    total = sum(worth.values())
    for name in answered:
        html = own_feedback(users[name])
        mine = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", html)
        assert (float(mine[1]), float(mine[2])) == (expected[name], total), name
        others = {other for other in answered if other != name}
        assert not any(f"work of {other}" in html for other in others), name
        assert (f"work of {name}" in html) == bool(answered[name] - {WRITTEN}), name
    page.close()


def probe(user: User, command: str) -> dict:
    """Run `command` in `user`'s terminal: whether it worked, and what it printed."""
    status, output = user.shell(command)
    return {"account": user.name, "command": command, "allowed": status == 0,
            "output": output.strip()[-300:]}


def test_each_account_sees_only_its_own(term):
    users, exchange, clone = term["users"], term["exchange"], term["clone"]
    bob, teacher = users[PARTLY], users[INSTRUCTOR]
    alice_home = term["class"].home(RIGHT)
    inbound = exchange / COURSE_ID / "inbound"
    submissions = sorted(inbound.glob(f"{RIGHT}+{ASSIGNMENT}+*"))
    assert submissions, "the term test leaves alice's submission in the exchange"
    alice_submitted = shlex.quote(str(submissions[-1] / f"{NOTEBOOK}.ipynb"))
    denied = [
        f"cat {alice_home}/{ASSIGNMENT}/{NOTEBOOK}.ipynb",  # her working copy
        f"ls {inbound}",  # the submissions of the class
        f"ls {exchange / COURSE_ID / 'feedback'}",  # the feedback of the class
        f"ls {clone}",  # the instructor's course
        f"cat {clone}/gradebook.db",
        f"ls {clone}/solutions/{ASSIGNMENT}",
        f"cat {clone}/solutions/{ASSIGNMENT}/{NOTEBOOK}.ipynb",
        f"cat {clone}/submitted/{RIGHT}/{ASSIGNMENT}/{NOTEBOOK}.ipynb",
        f"cat {clone}/autograded/{RIGHT}/{ASSIGNMENT}/{NOTEBOOK}.ipynb",
    ]
    allowed = [f"cat {term['class'].home(PARTLY)}/{ASSIGNMENT}/{NOTEBOOK}.ipynb >/dev/null"]
    seen = [probe(bob, command) for command in denied + allowed]
    # What nbgrader's exchange gives away by design: a submission's and a feedback page's
    # files are readable by every account (644) in a folder that cannot be listed, under
    # a name with a random part (a hash, for feedback); recorded, not asserted.
    feedback = sorted((exchange / COURSE_ID / "feedback").glob("*.html"))
    by_name = [probe(bob, f"cat {alice_submitted} >/dev/null"),
               probe(bob, f"cat {shlex.quote(str(feedback[0]))} >/dev/null")]
    teacher_seen = [probe(teacher, f"ls {inbound}"), probe(teacher, f"ls {clone}/solutions"),
                    probe(teacher, f"cat {alice_home}/{ASSIGNMENT}/{NOTEBOOK}.ipynb")]
    # Through the hub: another account's token opens nothing on alice's server.
    status, _, _ = bob.call("GET", f"/user/{RIGHT}/api/contents/{ASSIGNMENT}", raw=True)
    (ARTIFACTS / "hub-access.json").write_text(json.dumps(
        {"student": seen, "student_knowing_the_folder_name": by_name,
         "instructor": teacher_seen, "bob_token_on_alice_server_status": status}, indent=2))
    assert [s["command"] for s in seen if not s["allowed"]] == denied, seen
    assert all("Permission denied" in s["output"] for s in seen if not s["allowed"]), seen
    assert [s["allowed"] for s in teacher_seen] == [True, True, False], teacher_seen
    assert status in (302, 403, 404), status


def page_config(user: User) -> dict:
    """The page configuration JupyterLab hands `user`'s browser, and the response headers."""
    status, headers, html = user.server("GET", "lab", raw=True)
    assert status == 200, (user.name, status)
    data = re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                     html, re.S)
    return {"config": json.loads(data[1]), "headers": headers}


def test_students_get_the_student_interface(term, browser):
    users = term["users"]
    teacher, alice = users[INSTRUCTOR], users[RIGHT]
    instructor_tools = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                        "@jupyter/nbgrader:course-list"}
    student_lab, teacher_lab = page_config(alice), page_config(teacher)
    assert instructor_tools <= set(student_lab["config"]["disabledExtensions"])
    assert "@jupyter/nbgrader:assignment-list" not in student_lab["config"]["disabledExtensions"]
    assert not instructor_tools & set(teacher_lab["config"]["disabledExtensions"])
    assert alice.server("GET", "formgrader", raw=True)[0] == 404
    assert teacher.server("GET", "formgrader", raw=True)[0] == 200
    # Only the instructor's server may be framed (the formgrader panel), by itself.
    csp = {name: lab["headers"].get("Content-Security-Policy", "")
           for name, lab in ((RIGHT, student_lab), (INSTRUCTOR, teacher_lab))}
    assert "frame-ancestors 'none'" in csp[RIGHT], csp
    assert "frame-ancestors 'self'" in csp[INSTRUCTOR], csp

    page = lab_page(browser, alice)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    shot(page, "3-student-menu")
    assert "Assignment List" in items and not any("Formgrader" in i for i in items), items
    assert page.get_by_text("Create Assignment").count() == 0  # the instructor's sidebar tab
    assert page.get_by_text("official Jupyter news").count() == 0
    page.close()
