"""JupyterLab in headless Chromium, for the tests that drive the course as a student does.

A JupyterLab on a copy of the student notebooks with every answer filled in from solutions/
(temporary config, runtime, settings and workspace folders; no token; the news pop-up off; its
only kernel this interpreter), Debian's Chromium through Playwright (never its own download),
and the moves a student makes in it: open a notebook, Run All, read what went wrong. Every
server and browser started here is stopped by its process id, also when a test fails.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import nbformat
import pytest
from playwright.sync_api import (
    Browser,
    Locator,
    Page,
    TimeoutError as PlaywrightTimeout,
    sync_playwright,
)

from kvlesson.authoring import command
from support.paths import ROOT
from support.patience import HANG, HANG_MS, browser_step_ms, scaled

ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
RUN_START_SECONDS = 15  # for Run All to start the first cell on a free machine (scaled by the load)
RUN_ALL_CLICKS = 3  # clicks on Run All before giving up (see run_all)
VIEWPORT = {"width": 1400, "height": 1000}  # px of a page: a laptop's screen
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'


# --- the notebooks served --------------------------------------------------------------


def notebook_file(assignment: str) -> str:
    """The notebook's path inside the served folder, e.g. '01_floor_plan/floor_plan.ipynb'."""
    (path,) = (ROOT / "notebooks" / assignment).glob("*.ipynb")
    return f"{assignment}/{path.name}"


def answered_release(assignment: str) -> nbformat.NotebookNode:
    """The student notebook with every answer cell filled in from solutions/ (by grade id)."""
    name = notebook_file(assignment)
    return command.answered(
        nbformat.read(ROOT / "notebooks" / name, as_version=4),
        nbformat.read(ROOT / "solutions" / name, as_version=4),
    )


def parameters(assignment: str) -> dict:
    """The notebook's parameters cell, evaluated."""
    nb = nbformat.read(ROOT / "notebooks" / notebook_file(assignment), as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    values: dict = {}
    exec(cell.source, {}, values)
    return values


def write_kernel(folder: Path) -> None:
    """The served JupyterLab's only Python kernel: this interpreter (this virtual environment,
    not the one its symlink leads to, which JupyterLab's own spec would start)."""
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    path = folder / "kernels" / "python3" / "kernel.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec))


def write_settings(folder: Path) -> None:
    """User settings for the served JupyterLab: no news question, every cell in the page
    (no virtual scrolling, so the page holds every output to check)."""
    settings = {
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        "notebook-extension/tracker": {"windowingMode": "none"},
    }
    for name, values in settings.items():
        path = folder / "@jupyterlab" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


# --- the server ------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port nobody listens on right now, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """The ids of every process below `pid` (the kernels a server started), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def stop(process: subprocess.Popen) -> None:
    """Stop a server we started and whatever it started, by process id: SIGTERM (Jupyter then
    shuts its kernels down), then SIGKILL for anything still running."""
    below = descendants(process.pid)
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for pid in below:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_until_ready(url: str, process: subprocess.Popen, log: Path) -> None:
    """Poll the server's status until it answers; fail with its log if it exits or is slow."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer within {HANG:.0f} s:\n{log.read_text()[-3000:]}")


@contextmanager
def served_lab(base: Path, assignments: Iterable[str]) -> Iterator[str]:
    """JupyterLab serving the answered notebooks of `assignments`, its folders under `base`;
    yields its base URL, then stops it (also after a failure)."""
    served = base / "notebooks"
    for assignment in assignments:
        target = served / notebook_file(assignment)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(answered_release(assignment), target)
    write_settings(base / "settings")
    write_kernel(base / "data")
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_DATA_DIR": str(base / "data"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "IPYTHONDIR": str(base / "ipython"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # the kernel imports this checkout's kvlesson, whatever else is installed
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    log = base / "lab.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                "lab",
                "--no-browser",
                "--ip",
                "127.0.0.1",
                "--port",
                str(port),
                "--ServerApp.token=",
                "--ServerApp.password=",
                "--allow-root",
                "--ServerApp.port_retries=0",
                f"--ServerApp.root_dir={served}",
            ],
            cwd=base,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, process, log)
        yield url
    finally:
        stop(process)


# --- the browser -----------------------------------------------------------------------


def require_chromium() -> None:
    """Fail (never skip) when Debian's Chromium is missing."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's Chromium with "
            "`apt-get update && apt-get install -y chromium` (never `playwright install`)"
        )


def patient(browser: Browser) -> None:
    """Every context and page `browser` makes waits support.patience's browser step (stretched
    by the load when it is made) for each click, load or wait that names no time of its own."""

    def with_patience(make):
        def made(*args, **kwargs):
            context_or_page = make(*args, **kwargs)
            context_or_page.set_default_timeout(browser_step_ms())
            context_or_page.set_default_navigation_timeout(browser_step_ms())
            return context_or_page

        return made

    # A page's own context (browser.new_page) is made inside Playwright: both are wrapped.
    browser.new_context = with_patience(browser.new_context)
    browser.new_page = with_patience(browser.new_page)


@contextmanager
def chromium() -> Iterator[Browser]:
    """Headless Chromium driven by Playwright; closed at the end, also after a failure."""
    require_chromium()
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, timeout=HANG_MS
        )
        patient(browser)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """The tests' Chromium (see chromium)."""
    with chromium() as opened:
        yield opened


@pytest.fixture
def page(browser) -> Iterator[Page]:
    """A fresh page, VIEWPORT in size; closed after the test."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        yield context.new_page()
    finally:
        context.close()


# --- driving JupyterLab ----------------------------------------------------------------


def open_notebook(page: Page, lab: str, assignment: str) -> Locator:
    """Open a notebook in a workspace of its own (so no other tab is restored) and wait for
    its kernel; returns the notebook's panel."""
    page.goto(f"{lab}/lab/workspaces/{assignment}/tree/{notebook_file(assignment)}")
    panel = page.locator(".jp-NotebookPanel").first
    wait_for_kernel(panel)
    return panel


def wait_for_kernel(panel: Locator, timeout: int = HANG_MS) -> None:
    """Wait until this notebook's toolbar names its kernel and reads idle in the same look.

    Either alone says nothing: the execution indicator reads idle before any kernel exists,
    and the name shows while the kernel is still connecting. (The status bar is no better:
    just after a tab switch it still shows the previous notebook's kernel.)"""
    panel.page.wait_for_function(
        """(panel) => {
            const name = panel.querySelector('.jp-Toolbar-kernelName');
            const status = panel.querySelector('.jp-Notebook-ExecutionIndicator');
            return name !== null && /^Python 3/.test(name.getAttribute('aria-label') || '')
                && status !== null && status.dataset.status === 'idle';
        }""",
        arg=panel.element_handle(),
        timeout=timeout,
    )


# A code cell's prompt. A cell whose code is folded (the notebooks' set-up cells) shows a
# placeholder in its place whose own prompt stays empty whether or not the cell has run: left
# out, the cell's run is seen in the cells after it, which read what it defines.
PROMPT = ".jp-CodeCell .jp-InputPrompt:not(.jp-Placeholder-prompt)"


def prompts(panel: Locator) -> list[str]:
    """Each unfolded code cell's prompt as shown: '[ ]:' not run, '[*]:' running, '[3]:' run."""
    return [t.strip() for t in panel.locator(PROMPT).all_inner_texts()]


def run_all(page: Page, panel: Locator) -> None:
    """Run ▸ Run All Cells from the menu bar, then wait until the run is over: the kernel idle
    and no cell waiting its turn ('[*]:'). Whether every cell ran, or one failed and stopped the
    rest, is for the caller to read (problems_on_page): a cell that never runs ends the wait at
    once, with the page as it is, not after the hang guard.

    A Run All that comes while the kernel is still connecting runs nothing: JupyterLab
    clears each cell and moves on, with no message (seen on a loaded machine, after the
    toolbar read idle). If no prompt has changed after RUN_START_SECONDS (stretched by the
    load), click again, as a person would; at most RUN_ALL_CLICKS clicks."""
    before, start_ms = prompts(panel), scaled(RUN_START_SECONDS) * 1000
    for click in range(1, RUN_ALL_CLICKS + 1):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(
                """([panel, before, prompt]) => {
                    const now = [...panel.querySelectorAll(prompt)]
                        .map(p => p.textContent.trim());
                    return now.some((t, k) => t === '[*]:'
                        || (/^\\[\\d+\\]:$/.test(t) && t !== before[k]));
                }""",
                arg=[panel.element_handle(), before, PROMPT],
                timeout=start_ms,
            )
            break
        except PlaywrightTimeout:
            warnings.warn(f"Run All click {click} started no cell in {start_ms / 1000:.0f} s")
    try:
        page.wait_for_function(
            """([panel, prompt]) => {
                const queued = [...panel.querySelectorAll(prompt)]
                    .some(p => p.textContent.trim() === '[*]:');
                const idle = panel.querySelector(
                    '.jp-Notebook-ExecutionIndicator[data-status=idle]') !== null;
                return idle && !queued;
            }""",
            arg=[panel.element_handle(), PROMPT],
            timeout=HANG_MS,
        )
    except PlaywrightTimeout:
        # Keep what the page showed: CI machines are slower than this one.
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "run-all-timed-out.png"))
        status = page.locator("#jp-main-statusbar").inner_text().replace("\n", " ")
        raise AssertionError(
            f"Run All did not finish in {HANG:.0f} s; "
            f"prompts {prompts(panel)}; status bar {status!r}; "
            "screenshot in artifacts/run-all-timed-out.png"
        ) from None


def problems_on_page(panel: Locator) -> list[str]:
    """Error outputs, tracebacks on stderr, widgets that failed, cells that did not run."""
    found = [f"stderr output:\n{text[:1500]}" for text in panel.locator(STDERR).all_inner_texts()]
    text = panel.inner_text()
    for phrase in ("Error displaying widget", "Traceback (most recent call last)"):
        if phrase in text:
            found.append(f"the page says {phrase!r}")
    not_run = [
        t for t in panel.locator(PROMPT).all_inner_texts() if not t.strip().strip("[]:").isdigit()
    ]
    if not_run:
        found.append(f"{len(not_run)} code cells did not run: {not_run}")
    return found
