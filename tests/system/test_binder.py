"""Binder: the course environment built from binder/ alone, as repo2docker would.

repo2docker (Docker is not available here) makes a Python 3.11 environment
(binder/runtime.txt), runs `pip install -r binder/requirements.txt` from the
repository root, then runs binder/postBuild. This module does the same in a
fresh virtual environment, with Jupyter's user folders pointed at a temporary
directory so that nothing installed on this machine leaks in, and then:

* every pin in requirements.txt is what pip installed;
* `jupyter labextension list` shows the widget manager and nbgrader enabled,
  with only nbgrader's Validate button left to students, and the server
  extensions agree;
* every student notebook in notebooks/ runs in that environment's own kernel.
  Unanswered exercises raise by design, so errors are allowed, but only a
  NotImplementedError in an nbgrader answer cell, or an error in the
  nbgrader test cells right after an answer cell; every other cell (setup,
  figures, tables, explorers) must run cleanly, and every explorer must give
  a live widget.

Takes about a minute: most of it is pip filling the new environment (its
cache helps).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from kvlesson.grading.build import command
from support.paths import ROOT

BINDER = ROOT / "binder"
STUDENT_NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*/*.ipynb")
                           if ".ipynb_checkpoints" not in p.parts)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

WIDGETS_EXTENSION = "@jupyter-widgets/jupyterlab-manager"
NBGRADER_EXTENSION = "@jupyter/nbgrader"
STUDENT_PLUGIN = "@jupyter/nbgrader:validate-assignment"
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:course-list")
# Hidden too on Binder: fetch/submit need an nbgrader exchange, and the menu only opens these.
HIDDEN_PLUGINS = INSTRUCTOR_PLUGINS + ("@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu")

# Errors an unanswered release may raise in the nbgrader test cells after an answer:
# the answer's name is missing, the stub raised when called, or a check failed.
TEST_CELL_ERRORS = {"NameError", "NotImplementedError", "AssertionError", "NotYet", "WrongKind"}

# Appended to each notebook before it runs: which Python ran the kernel.
PROBE = "import sys, ipywidgets, kvlesson\nprint(sys.prefix)"

# Run by the environment's own Python: execute one notebook in its folder with
# the environment's nbclient and its python3 kernel, errors allowed, and save it.
RUNNER = """
import sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient

source, target, probe = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
nb = nbformat.read(source, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(probe))
NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": str(source.parent)}}).execute()
nbformat.write(nb, target)
"""


# --- building the environment ----------------------------------------------------------

def isolated_env(venv: Path, home: Path) -> dict[str, str]:
    """Environment variables for commands "inside" the venv, as if it were activated, with
    Jupyter's user config and data folders (kernelspecs, settings) in `home`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"),
               MPLCONFIGDIR=str(home / "matplotlib"), PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


def run(command: list[str], env: dict[str, str], cwd: Path = ROOT, timeout: float = 300) -> str:
    """Run a command; fail the test with its output if it fails. Returns stdout and stderr."""
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    output = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, f"{' '.join(map(str, command))} exited {done.returncode}:\n{output}"
    return output


def runtime_python() -> str:
    """The Python version binder/runtime.txt asks for, e.g. '3.11'."""
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert runtime.startswith("python-"), f"binder/runtime.txt should read python-X.Y, got {runtime!r}"
    return runtime.removeprefix("python-")


def build_environment(venv: Path, env: dict[str, str]) -> None:
    """What repo2docker does with binder/: a fresh environment, the requirements installed
    from the repository root, then postBuild (if there is one) in that environment."""
    assert runtime_python() == f"{sys.version_info.major}.{sys.version_info.minor}", (
        f"binder/runtime.txt asks for Python {runtime_python()}; run this test with that Python")
    run([sys.executable, "-m", "venv", str(venv)], env)
    # --no-compile: pip's byte-compiling of every installed module is half of its time
    # here (48 s against 26 s); what the notebooks import compiles when first imported.
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "-r",
         str(BINDER / "requirements.txt")], env, timeout=600)
    post_build = BINDER / "postBuild"
    if post_build.exists():
        assert os.access(post_build, os.X_OK), "binder/postBuild must be executable (chmod +x)"
        run([str(post_build)], env)


@pytest.fixture(scope="module")
def binder(tmp_path_factory) -> dict:
    """The built environment: its venv folder and the environment variables to use it."""
    base = tmp_path_factory.mktemp("binder")
    venv, home = base / "venv", base / "home"
    env = isolated_env(venv, home)
    build_environment(venv, env)
    return {"venv": venv, "env": env, "base": base}


def jupyter(binder: dict, *args: str) -> str:
    """Run the environment's own `jupyter` with `args`; its output, colours removed."""
    return run([str(binder["venv"] / "bin" / "jupyter"), *args], binder["env"])


# --- executing the student notebooks ---------------------------------------------------

def execute_in(binder: dict, source: Path) -> tuple[nbformat.NotebookNode, str]:
    """Execute one student notebook with the environment's Python and kernel: the executed
    notebook (without the probe) and the sys.prefix its kernel reported."""
    target = binder["base"] / "executed" / f"{source.parent.name}.ipynb"
    target.parent.mkdir(exist_ok=True)
    run([str(binder["venv"] / "bin" / "python"), "-c", RUNNER, str(source), str(target), PROBE],
        binder["env"], timeout=600)
    nb = nbformat.read(target, as_version=4)
    probe = nb.cells.pop()
    return nb, "".join(output.get("text", "") for output in probe.outputs).strip()


@pytest.fixture(scope="module")
def executed(binder) -> dict[str, tuple[nbformat.NotebookNode, str]]:
    """Every student notebook, executed in the Binder environment (two at a time), with the
    sys.prefix of the kernel that ran it."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        notebooks = pool.map(lambda path: execute_in(binder, path), STUDENT_NOTEBOOKS)
        return {path.parent.name: nb for path, nb in zip(STUDENT_NOTEBOOKS, notebooks, strict=True)}


def nbgrader_role(cell) -> str:
    """'answer' for an autograded answer cell, 'test' for an autograder test cell, else ''."""
    meta = cell.metadata.get("nbgrader", {})
    if meta.get("solution") and not meta.get("grade"):
        return "answer"
    if meta.get("grade") and not meta.get("solution"):
        return "test"
    return ""


def errors(cell) -> list[str]:
    """The names of the exceptions a cell raised (at most one), and a marker for any stderr."""
    names = [output.ename for output in cell.get("outputs", []) if output.output_type == "error"]
    names += ["stderr: " + output.text[:300] for output in cell.get("outputs", [])
              if output.output_type == "stream" and output.name == "stderr"]
    return names


def follows_answer(code_cells: list, index: int) -> bool:
    """Whether the code cells before `index` back to the last answer cell are all test cells,
    i.e. this test cell checks an answer right above it."""
    for cell in reversed(code_cells[:index]):
        role = nbgrader_role(cell)
        if role == "answer":
            return True
        if role != "test":
            return False
    return False


def unexpected_errors(nb: nbformat.NotebookNode) -> list[str]:
    """Every error the unanswered release should not raise, described."""
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    problems = []
    for index, cell in enumerate(code):
        role, raised = nbgrader_role(cell), errors(cell)
        allowed = (
            {"NotImplementedError"} if role == "answer" else
            TEST_CELL_ERRORS if role == "test" and follows_answer(code, index) else set())
        for name in raised:
            if name not in allowed:
                problems.append(f"code cell {index} ({role or 'not an nbgrader cell'}, "
                                f"{cell.metadata.get('nbgrader', {}).get('grade_id', '-')}): {name}"
                                f"\n{cell.source[:200]}")
    return problems


# --- the tests -------------------------------------------------------------------------

def test_requirements_are_pinned_and_install_the_course():
    """Every requirement is pinned with ==, and one line installs the package itself from the
    repository root (binder/ stops repo2docker from installing pyproject.toml by itself)."""
    lines = [line.split("#", 1)[0].strip()
             for line in (BINDER / "requirements.txt").read_text().splitlines()]
    lines = [line for line in lines if line]
    local = [line for line in lines if line in (".", "-e .", "--editable .")]
    assert len(local) == 1, f"binder/requirements.txt needs one line installing the repo: {lines}"
    unpinned = [line for line in lines if line not in local and "==" not in line]
    assert not unpinned, f"unpinned requirements: {unpinned}"
    names = {re.split(r"[=<>!~\[]", line)[0].lower().replace("_", "-") for line in lines}
    for needed in ("jupyterlab", "notebook", "ipywidgets", "nbgrader", "pandas", "matplotlib",
                   "papermill", "ipykernel"):
        assert needed in names, f"binder/requirements.txt does not pin {needed}"


def test_pip_installed_exactly_the_pins(binder):
    """What pip put in the new environment is what requirements.txt pins, and kvlesson."""
    frozen = json.loads(run([str(binder["venv"] / "bin" / "python"), "-m", "pip", "list",
                             "--format", "json"], binder["env"]))
    installed = {p["name"].lower().replace("_", "-"): p["version"] for p in frozen}
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==")
            assert installed.get(name.lower().replace("_", "-")) == version, (name, installed.get(name))
    assert "kvlesson" in installed


def test_lab_extensions_for_students(binder):
    """The widget manager and nbgrader are enabled; of nbgrader's plugins only the Validate
    button is left, the others disabled and locked."""
    listing = jupyter(binder, "labextension", "list")
    for extension in (WIDGETS_EXTENSION, NBGRADER_EXTENSION):
        assert re.search(rf"^\s*{re.escape(extension)} v\S+ enabled OK", listing, re.M), (
            f"{extension} is not listed as enabled and OK:\n{listing}")
    disabled = listing.split("Disabled extensions:", 1)[-1] if "Disabled extensions:" in listing else ""
    for plugin in HIDDEN_PLUGINS:
        assert re.search(rf"^\s*{re.escape(plugin)}\s*$", disabled, re.M), (
            f"{plugin} should be disabled for students:\n{listing}")
        assert plugin in listing.split(NBGRADER_EXTENSION + " v", 1)[1].splitlines()[0], (
            f"{plugin} should be locked (else the Plugin Manager can turn it back on):\n{listing}")
    assert STUDENT_PLUGIN not in listing, f"the Validate button must stay enabled:\n{listing}"


def test_server_extensions_for_students(binder):
    """The Validate button's server side is on; formgrader's and the course list's are off."""
    listing = jupyter(binder, "server", "extension", "list")
    state = dict(re.findall(r"^\s*(nbgrader\.server_extensions\.\w+) (enabled|disabled)\s*$",
                            listing, re.M))
    assert state.get("nbgrader.server_extensions.validate_assignment") == "enabled", listing
    for name in ("formgrader", "course_list", "assignment_list"):
        assert state.get(f"nbgrader.server_extensions.{name}") == "disabled", listing


def test_news_popup_is_off(binder):
    """postBuild switches JupyterLab's news question off for every user of the environment."""
    overrides = binder["venv"] / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    settings = json.loads(overrides.read_text())["@jupyterlab/apputils-extension:notification"]
    assert settings["fetchNews"] == "false" and settings["checkForUpdates"] is False


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_student_notebook_runs_in_binder(executed, binder, path):
    """The release runs in the environment's kernel; only unanswered exercises raise."""
    nb, prefix = executed[path.parent.name]
    assert Path(prefix).resolve() == binder["venv"].resolve(), (
        f"the kernel ran on {prefix!r}, not on the Binder environment {binder['venv']}")
    problems = unexpected_errors(nb)
    assert not problems, "\n\n".join(problems)
    answers = [cell for cell in nb.cells if nbgrader_role(cell) == "answer"]
    raised = [name for cell in nb.cells for name in errors(cell)]
    if not command.has_exercises(path.parent.name):  # the reading page runs clean
        assert not answers and not raised, (answers, raised)
        return
    assert answers and all("raise NotImplementedError()" in cell.source for cell in answers), (
        "a student notebook should hold stubs in every answer cell")
    assert raised, "an unanswered release should fail some self-check"


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_explorers_and_figures_render(executed, path):
    """Every explorer cell gives a live widget, and figure cells give a PNG."""
    nb, _ = executed[path.parent.name]
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        mimes = {m for o in cell.outputs for m in o.get("data", {})}
        if "Explorer(" in cell.source:
            assert WIDGET_VIEW in mimes, f"no widget from:\n{cell.source}"
        if re.search(r"^figures\.\w+\(", cell.source, re.M):
            assert "image/png" in mimes, f"no figure from:\n{cell.source}"
