"""Binder: the course environment built from binder/ alone, as repo2docker would.

repo2docker (Docker is not available here) makes a Python 3.11 environment
(binder/runtime.txt), runs `pip install -r binder/requirements.txt` from the
repository root, then runs binder/postBuild. This module does the same in a
fresh virtual environment, with Jupyter's user folders pointed at a temporary
directory so that nothing installed on this machine leaks in, and then:

* binder/requirements.txt installs the course at exactly the versions of the shared lock,
  constraints.txt (every package pip put there is the lock's version);
* `jupyter labextension list` shows the widget manager and nbgrader enabled,
  with only nbgrader's Validate button left to students, and the server
  extensions agree.

The notebooks are not run here any more: scripts/test.sh runs the whole suite in .venv,
installed from the same constraints.txt, so the kernel packages Binder gets are the ones
tests/system/test_notebooks.py, nbval and the browser tests already run every notebook
with. What only this module sees is what pip makes of binder/ and what postBuild does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT
from support.patience import HANG

BINDER = ROOT / "binder"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

WIDGETS_EXTENSION = "@jupyter-widgets/jupyterlab-manager"
NBGRADER_EXTENSION = "@jupyter/nbgrader"
STUDENT_PLUGIN = "@jupyter/nbgrader:validate-assignment"
INSTRUCTOR_PLUGINS = (
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
)
# Hidden too on Binder: fetch/submit need an nbgrader exchange, and the menu only opens these.
HIDDEN_PLUGINS = INSTRUCTOR_PLUGINS + (
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:menu",
)


# --- building the environment ----------------------------------------------------------


def isolated_env(venv: Path, home: Path) -> dict[str, str]:
    """Environment variables for commands "inside" the venv, as if it were activated, with
    Jupyter's user config and data folders (kernelspecs, settings) in `home`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH")
    }
    env.update(
        VIRTUAL_ENV=str(venv),
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        MPLCONFIGDIR=str(home / "matplotlib"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    return env


def run(command: list[str], env: dict[str, str], cwd: Path = ROOT, timeout: float = HANG) -> str:
    """Run a command; fail the test with its output if it fails. Returns stdout and stderr."""
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    output = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} exited {done.returncode}:\n{output}"
    )
    return output


def runtime_python() -> str:
    """The Python version binder/runtime.txt asks for, e.g. '3.11'."""
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert runtime.startswith("python-"), (
        f"binder/runtime.txt should read python-X.Y, got {runtime!r}"
    )
    return runtime.removeprefix("python-")


def build_environment(venv: Path, env: dict[str, str]) -> None:
    """What repo2docker does with binder/: a fresh environment, the requirements installed
    from the repository root, then postBuild (if there is one) in that environment."""
    assert runtime_python() == f"{sys.version_info.major}.{sys.version_info.minor}", (
        f"binder/runtime.txt asks for Python {runtime_python()}; run this test with that Python"
    )
    run([sys.executable, "-m", "venv", str(venv)], env)
    # --no-compile: pip's byte-compiling of every installed module is half of its time
    # here (48 s against 26 s); what the notebooks import compiles when first imported.
    run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-compile",
            "-r",
            str(BINDER / "requirements.txt"),
        ],
        env,
        timeout=HANG,
    )
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


# --- the tests -------------------------------------------------------------------------


def lock() -> dict[str, str]:
    """constraints.txt: each package's name (normalised) and its one version."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[^=\s]+", line), f"not a pin: {line!r}"
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_requirements_take_every_version_from_the_lock():
    """binder/requirements.txt installs the course with its `course` extra and takes every
    version from the shared lock (no pin of its own that could drift from it); the lock pins
    what the course imports and runs on, and Binder's Python is the lock's."""
    lines = [
        line.split("#", 1)[0].strip()
        for line in (BINDER / "requirements.txt").read_text().splitlines()
    ]
    assert [line for line in lines if line] == ["-c ../constraints.txt", "-e .[course]"], lines
    pins = lock()
    for needed in (
        "jupyterlab",
        "notebook",
        "ipywidgets",
        "nbgrader",
        "pandas",
        "matplotlib",
        "papermill",
        "ipykernel",
        "ipython",
        "jupyter-client",
        "nbclient",
    ):
        assert needed in pins, f"constraints.txt does not pin {needed}"
    header = (ROOT / "constraints.txt").read_text().splitlines()[1]
    assert f"Python {runtime_python()}." in header, (header, runtime_python())


def test_pip_installed_exactly_the_lock(binder):
    """What pip put in the new environment is, package by package, constraints.txt's version
    (pip, setuptools and wheel are the environment's own; kvlesson is the repository)."""
    frozen = json.loads(
        run(
            [str(binder["venv"] / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
            binder["env"],
        )
    )
    installed = {p["name"].lower().replace("_", "-"): p["version"] for p in frozen}
    pins = lock()
    off = {
        name: (version, pins.get(name))
        for name, version in installed.items()
        if name not in ("pip", "setuptools", "wheel", "kvlesson") and pins.get(name) != version
    }
    assert not off, f"installed (version, lock's version): {off}"
    assert "kvlesson" in installed


def test_lab_extensions_for_students(binder):
    """The widget manager and nbgrader are enabled; of nbgrader's plugins only the Validate
    button is left, the others disabled and locked."""
    listing = jupyter(binder, "labextension", "list")
    for extension in (WIDGETS_EXTENSION, NBGRADER_EXTENSION):
        assert re.search(rf"^\s*{re.escape(extension)} v\S+ enabled OK", listing, re.M), (
            f"{extension} is not listed as enabled and OK:\n{listing}"
        )
    disabled = (
        listing.split("Disabled extensions:", 1)[-1] if "Disabled extensions:" in listing else ""
    )
    for plugin in HIDDEN_PLUGINS:
        assert re.search(rf"^\s*{re.escape(plugin)}\s*$", disabled, re.M), (
            f"{plugin} should be disabled for students:\n{listing}"
        )
        assert plugin in listing.split(NBGRADER_EXTENSION + " v", 1)[1].splitlines()[0], (
            f"{plugin} should be locked (else the Plugin Manager can turn it back on):\n{listing}"
        )
    assert STUDENT_PLUGIN not in listing, f"the Validate button must stay enabled:\n{listing}"


def test_server_extensions_for_students(binder):
    """The Validate button's server side is on; formgrader's and the course list's are off."""
    listing = jupyter(binder, "server", "extension", "list")
    state = dict(
        re.findall(r"^\s*(nbgrader\.server_extensions\.\w+) (enabled|disabled)\s*$", listing, re.M)
    )
    assert state.get("nbgrader.server_extensions.validate_assignment") == "enabled", listing
    for name in ("formgrader", "course_list", "assignment_list"):
        assert state.get(f"nbgrader.server_extensions.{name}") == "disabled", listing


def test_news_popup_is_off(binder):
    """postBuild switches JupyterLab's news question off for every user of the environment."""
    overrides = binder["venv"] / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    settings = json.loads(overrides.read_text())["@jupyterlab/apputils-extension:notification"]
    assert settings["fetchNews"] == "false" and settings["checkForUpdates"] is False
