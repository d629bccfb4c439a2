"""A student's first hour, in a real browser: open the course the README's way and work in it.

The course is started THROUGH scripts/open.sh, the command the README names, in a copy of
the repository (the Validate button saves the notebook, and the release must stay as it
is). The test passes only what a test needs on top: `--no-browser` and a free `--port`
(open.sh hands any argument to `jupyter lab`) and KVLESSON_PYTHON, the Python that already
has the course, so that no venv is made and pip does not run. Then, in Debian's Chromium:

1. the URL the script prints opens notebook 0 (not the Launcher);
2. the link in notebook 0 to notebook 1 opens notebook 1;
3. Run > Run All Cells runs it (up to the first exercise, whose stub raises);
4. a wrong answer typed into Exercise 1.1's answer cell (found by "YOUR CODE HERE"):
   the self-check below it answers "Not yet: ...";
5. the right answer (the instructor's, from solutions/): "Self-check passed";
6. nbgrader's Validate button shows the Validation Results dialog;

and the interface is the student's: no Nbgrader menu, no Create Assignment panel, no news
question, formgrader not served. The same checks read the other way on
`open.sh --instructor`, which shows they can fail. A screenshot of each stage goes to
artifacts/journey-<n>-<stage>.png. Every server is stopped by its process group (and the
kernels below it), also when a test fails. The browser and its pages are test_browser.py's
fixtures: without /usr/bin/chromium they fail, saying how to install it; CI installs it
(scripts/test.sh). About two minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import nbformat
import pytest
from playwright.sync_api import Locator, Page

from kvlesson import cli
from kvlesson.authoring import command
from kvlesson.delivery import lab
from support.browser import STDERR, descendants, free_port, run_all, wait_for_kernel
from support.paths import ROOT
from support.patience import HANG, HANG_MS

ARTIFACTS = ROOT / "artifacts"
NOTEBOOK_0 = "00_start_here/start_here.ipynb"
NOTEBOOK_1 = "01_floor_plan/floor_plan.ipynb"
EXERCISE = "def pool_bytes("  # Exercise 1.1: the answer cell is found by this and "YOUR CODE HERE"
WRONG_ANSWER = (
    "def pool_bytes(share):\n"
    '    """The whole allowed share, forgetting the weights and the reserve."""\n'
    "    return share / 100 * gpu.memory_bytes\n"
)
NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".kvlesson",
    "artifacts",
    "*.egg-info",
    "__pycache__",
    ".ipynb_checkpoints",
    ".hypothesis",
)
URL = re.compile(r"http://127\.0\.0\.1:\d+/\S*\?token=\w+")
NEWS_QUESTION = (
    "official Jupyter news"  # JupyterLab's question: "Would you like to get notified about ..."
)


# --- the course, started through scripts/open.sh -----------------------------------------


@dataclass(frozen=True)
class Course:
    """A running open.sh: the URL it printed, its copy of the repository, and its log."""

    url: str
    repo: Path
    log: Path

    @property
    def base(self) -> str:
        return self.url.split("/lab", 1)[0]

    @property
    def token(self) -> str:
        return self.url.rsplit("token=", 1)[1]

    def status(self, path: str) -> int:
        """The HTTP status of GET `path` on the server, with the token (OSError if nothing
        listens)."""
        request = urllib.request.Request(
            f"{self.base}{path}", headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code


def stop_group(process: subprocess.Popen) -> None:
    """Stop open.sh's server: SIGTERM to its process group (JupyterLab then shuts its
    kernels down), SIGKILL to the group and to every process below it if anything stays."""
    below = descendants(process.pid)
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass
    for pid in below:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def printed_url(process: subprocess.Popen, log: Path) -> str:
    """The 127.0.0.1 URL open.sh prints, once the server there answers."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"open.sh exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        found = URL.search(log.read_text())
        try:
            if found and Course(found.group(0), Path(), log).status("/api/status") == 200:
                return found.group(0)
        except OSError:
            pass  # printed, but not listening yet
        time.sleep(0.3)
    pytest.fail(
        f"open.sh printed no URL that answers within {HANG:.0f} s:\n{log.read_text()[-3000:]}"
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """A copy of the repository, as a student's fresh clone (no venv, no .kvlesson yet)."""
    copy = tmp_path_factory.mktemp("clone") / "kvlesson"
    shutil.copytree(ROOT, copy, ignore=NOT_COPIED)
    return copy


def start(repo: Path, home: Path, *flags: str) -> Iterator[Course]:
    """Run `bash scripts/open.sh [flags] --no-browser --port P` in `repo`; yield the Course
    once it serves, stop it afterwards. Jupyter's runtime and data folders and the user
    config (used by --instructor) are in `home`."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER", "VIRTUAL_ENV", "CONDA_PREFIX"))
    }
    # JUPYTER_PREFER_ENV_PATH=1: the environment's config before the user's, as Jupyter does in
    # a virtual environment (the .venv open.sh makes), where the student's hidden tools must
    # stay hidden although the environment's nbgrader config enables them.
    env.update(
        KVLESSON_PYTHON=sys.executable,
        JUPYTER_PREFER_ENV_PATH="1",
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    log = home / "open.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [
                "bash",
                str(repo / "scripts" / "open.sh"),
                *flags,
                "--no-browser",
                "--port",
                str(free_port()),
                "--ServerApp.port_retries=0",
            ],
            cwd=home,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield Course(printed_url(process, log), repo, log)
    finally:
        stop_group(process)


@pytest.fixture(scope="module")
def student_course(repo, tmp_path_factory) -> Iterator[Course]:
    """The course as `bash scripts/open.sh` opens it for a student."""
    yield from start(repo, tmp_path_factory.mktemp("student"))


@pytest.fixture(scope="module")
def instructor_course(repo, tmp_path_factory) -> Iterator[Course]:
    """The course as `bash scripts/open.sh --instructor` opens it."""
    yield from start(repo, tmp_path_factory.mktemp("instructor"), "--instructor")


# --- the browser -------------------------------------------------------------------------


def shot(page: Page, stage: int, name: str) -> None:
    """Keep a screenshot of a stage of the journey: artifacts/journey-<n>-<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"journey-{stage}-{name}.png"))


def notebook_tab(page: Page, name: str) -> Locator:
    """The notebook panel of the current main-area tab, once that tab is `name` and its
    kernel is running and idle."""
    page.locator(".jp-mod-current .lm-TabBar-tabLabel", has_text=name).first.wait_for(
        timeout=HANG_MS
    )
    panel = page.locator(".jp-NotebookPanel:visible").first
    wait_for_kernel(panel, HANG_MS)
    return panel


def code_cell_with(panel: Locator, *texts: str) -> tuple[Locator, Locator]:
    """The one code cell whose editor holds every text in `texts`, and the code cell right
    after it (an answer cell's self-check)."""
    cells = panel.locator(".jp-CodeCell")
    # Cell by cell, so that a folded cell (no editor shown: the set-up cells) keeps its place.
    sources = cells.evaluate_all(
        "cells => cells.map(c => c.querySelector('.jp-Editor')?.innerText ?? '')"
    )
    found = [i for i, source in enumerate(sources) if all(text in source for text in texts)]
    assert len(found) == 1, f"expected one code cell holding {texts}, found {len(found)}"
    return cells.nth(found[0]), cells.nth(found[0] + 1)


def prompt(cell: Locator) -> str:
    """A code cell's prompt: "[ ]:" never run, "[*]:" running, "[7]:" run seventh."""
    return cell.locator(".jp-InputPrompt").inner_text().strip()


def answer_and_check(answer: Locator, check: Locator, code: str) -> str:
    """Replace the answer cell's text with `code`, run it and the self-check below it
    (Shift+Enter twice, as a student does), and return the self-check's verdict: its
    printed text or, if it raised, the error's message without the exception's name."""
    before = prompt(check)
    editor = answer.locator(".cm-content")
    editor.click()
    answer.page.keyboard.press("Control+a")
    answer.page.keyboard.insert_text(code)
    answer.page.keyboard.press("Shift+Enter")  # runs the answer, selects the self-check
    answer.page.keyboard.press("Shift+Enter")  # runs the self-check
    answer.page.wait_for_function(
        """([cell, before]) => {
            const p = cell.querySelector('.jp-InputPrompt').textContent.trim();
            return /^\\[\\d+\\]:$/.test(p) && p !== before;
        }""",
        arg=[check.element_handle(), before],
        timeout=HANG_MS,
    )
    errors = check.locator(STDERR).all_inner_texts()
    if not errors:
        return "\n".join(check.locator(".jp-OutputArea-output").all_inner_texts()).strip()
    text = errors[-1].strip()
    # IPython's traceback opens "NotYet   Traceback (most recent call last)" and ends with
    # "NotYet: Not yet: ...": keep what follows the last "NotYet: ".
    header = re.search(r"^(\S+)\s+Traceback \(most recent call last\)", text, re.M)
    if header and f"{header.group(1)}: " in text:
        text = text.rsplit(f"{header.group(1)}: ", 1)[1]
    return text.strip()


def right_answer(repo: Path) -> str:
    """Exercise 1.1 answered as the instructor's notebook answers it (markers removed)."""
    release = nbformat.read(repo / "notebooks" / NOTEBOOK_1, as_version=4)
    solution = nbformat.read(repo / "solutions" / NOTEBOOK_1, as_version=4)
    filled = command.answered(release, solution)
    (code,) = [
        new.source
        for old, new in zip(release.cells, filled.cells, strict=True)
        if "YOUR CODE HERE" in old.source and EXERCISE in old.source
    ]
    return code


def tool_counts(page: Page) -> dict[str, int]:
    """How many of each instructor tool (and news question) the page shows."""
    return {
        "Nbgrader menu": page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").count(),
        "Create Assignment panel": page.locator(
            '[data-id="nbgrader-create_assignemnt"], #nbgrader-create_assignemnt'
        ).count(),
        "news question": page.get_by_text(NEWS_QUESTION).count(),
    }


# --- the tests -----------------------------------------------------------------------------


def test_links_between_notebooks_open_from_the_served_root():
    """open.sh serves notebooks/: every relative link in a student notebook (the course
    table, the "Next:" links) names a notebook inside that root."""
    served = (ROOT / "notebooks").resolve()
    links = 0
    for path in sorted(served.glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for target in re.findall(r"\]\(([^)\s]+)", cell.source):
                if re.match(r"^[a-z]+:|^#", target):
                    continue  # a web address or a heading in the same notebook
                resolved = (path.parent / target.split("#", 1)[0]).resolve()
                assert resolved.is_relative_to(served) and resolved.is_file(), (
                    f"{path.relative_to(ROOT)} links to {target}, not a file under notebooks/"
                )
                links += 1
    assert links >= 4, f"notebook 0's course table alone links to 4 notebooks; found {links} links"


def test_student_settings_merge_into_existing_ones(tmp_path):
    """A shared hub's own overrides stay: the news settings are merged, not written over."""
    overrides = tmp_path / "overrides.json"
    overrides.write_text(
        json.dumps(
            {
                "@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
                lab.NEWS_PLUGIN: {"fetchNews": "true", "doNotDisturbMode": True},
            }
        )
    )
    lab.merge_json(overrides, {lab.NEWS_PLUGIN: lab.NEWS_OFF})
    assert json.loads(overrides.read_text()) == {
        "@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
        lab.NEWS_PLUGIN: {"doNotDisturbMode": True, **lab.NEWS_OFF},
    }
    overrides.write_text("[1, 2]")
    with pytest.raises(ValueError, match="should hold a JSON object"):
        lab.merge_json(overrides, {})


@pytest.mark.parametrize("exchange", [False, True], ids=["student", "with-exchange"])
def test_student_setup_in_its_own_config_folder(tmp_path, monkeypatch, exchange):
    """`kvlesson student --user [--exchange]` into a folder of its own, read back as
    JupyterLab and Jupyter Server read it when open.sh puts that folder first (even where the
    environment's config comes first, as in a venv): the hidden plugins disabled and locked,
    their server extensions off, the news off; with --exchange the assignment list stays."""
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager
    from jupyterlab_server.config import get_static_page_config

    folder = tmp_path / "student"
    for name, value in {
        "JUPYTER_CONFIG_DIR": folder,
        "JUPYTER_CONFIG_PATH": folder,
        "JUPYTERLAB_SETTINGS_DIR": folder / "lab" / "user-settings",
        "JUPYTER_PREFER_ENV_PATH": "1",
    }.items():
        monkeypatch.setenv(name, str(value))
    cli.main(["student", "--user", *(["--exchange"] if exchange else [])])

    page_config = get_static_page_config(level="all")
    servers = ExtensionConfigManager(
        read_config_path=jupyter_config_path()
    ).get_jpserver_extensions()
    kept = set(lab.EXCHANGE_TOOLS) if exchange else set()
    for plugin in lab.HIDDEN_LAB_PLUGINS:
        hidden = plugin not in kept
        assert page_config.get("disabledExtensions", {}).get(plugin, False) is hidden, plugin
        assert page_config.get("lockedExtensions", {}).get(plugin, False) is hidden, plugin
    for extension in lab.HIDDEN_SERVER_EXTENSIONS:
        assert servers.get(extension) is (False if extension not in kept else True), extension
    assert servers.get("nbgrader.server_extensions.validate_assignment") is True
    news = folder / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings = json.loads((news / "notification.jupyterlab-settings").read_text())
    assert settings == lab.NEWS_OFF


def test_a_students_first_hour(student_course, page):
    """Open, follow the link to notebook 1, run it, answer wrong then right, Validate."""
    assert student_course.url.split("?")[0].endswith(f"/lab/tree/{NOTEBOOK_0}"), student_course.url
    page.goto(student_course.url)
    notebook_tab(page, Path(NOTEBOOK_0).name)
    assert page.locator(".jp-Launcher:visible").count() == 0, "the printed URL shows the Launcher"
    shot(page, 1, "notebook-0")

    link = page.locator(f'.jp-RenderedMarkdown a[href*="/{NOTEBOOK_1}"]').first
    link.scroll_into_view_if_needed()
    link.click()
    panel = notebook_tab(page, Path(NOTEBOOK_1).name)
    shot(page, 2, "notebook-1")

    run_all(page, panel)
    answer, check = code_cell_with(panel, "YOUR CODE HERE", EXERCISE)
    assert "NotImplementedError" in answer.inner_text(), (
        "after Run All, the unanswered Exercise 1.1 should raise its stub's NotImplementedError"
    )
    answer.scroll_into_view_if_needed()
    shot(page, 3, "run-all")

    verdict = answer_and_check(answer, check, WRONG_ANSWER)
    shot(page, 4, "wrong-answer")
    assert verdict.startswith("Not yet:"), f"a wrong pool_bytes got this self-check:\n{verdict}"

    verdict = answer_and_check(answer, check, right_answer(student_course.repo))
    shot(page, 5, "right-answer")
    assert "Self-check passed" in verdict, f"the right pool_bytes got this self-check:\n{verdict}"

    panel.locator(".jp-Toolbar-item", has_text="Validate").locator(
        "jp-button, button"
    ).first.click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator(".jp-Dialog-header", has_text="Validation Results").wait_for(timeout=HANG_MS)
    shot(page, 6, "validate")
    assert dialog.locator(".jp-Dialog-body").inner_text().strip(), "an empty validation result"
    dialog.get_by_role("button", name="Ok").click()

    shown = {tool: n for tool, n in tool_counts(page).items() if n}
    assert not shown, f"a student sees instructor tools or the news question: {shown}"
    assert student_course.status("/formgrader") == 404, "formgrader is served to students"


def test_instructor_gets_every_tool(instructor_course, page):
    """`open.sh --instructor`: the repository root, the Nbgrader menu, the Create Assignment
    panel, formgrader served and the news question asked (the instructor's own config, left
    as it is) - the same checks that find nothing on the student's page."""
    page.goto(instructor_course.url)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=HANG_MS)
    page.get_by_text(NEWS_QUESTION).first.wait_for(timeout=HANG_MS)
    shot(page, 7, "instructor")
    missing = [tool for tool, n in tool_counts(page).items() if not n]
    assert not missing, f"the instructor's JupyterLab lacks {missing}"
    assert instructor_course.status("/formgrader") == 200
    assert instructor_course.status("/api/contents/solutions") == 200, (
        "the instructor's server should serve the repository root"
    )
