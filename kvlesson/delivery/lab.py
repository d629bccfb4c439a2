"""The student's JupyterLab: nbgrader's Validate button, and none of the instructor's tools.

A student checks a notebook with nbgrader's Validate button. The instructor
tools (formgrader, Create Assignment, the course list), the assignment list
(fetch and submit need an nbgrader exchange) and the Nbgrader menu that only
opens those are hidden, and JupyterLab's news question is switched off. This
module holds the one list of what is hidden and applies it at one of two levels:

* ``kvlesson student --sys-prefix``: for everybody who uses this
  Python environment (Binder's ``postBuild``, a hub's student image);
* ``kvlesson student --user``: only for the Jupyter config folder
  that ``JUPYTER_CONFIG_DIR`` names. ``scripts/open.sh`` points it at the
  course's own ``.student/`` folder, so the instructor's JupyterLab, started
  without it, keeps every tool.

``kvlesson open`` starts JupyterLab on the course as ``scripts/open.sh`` promises: for a
student, notebooks/ at notebook 0 with this interface, from the course's own config folder
(``.kvlesson/student``); with ``--instructor``, the course root with every tool. The
environment's own programs come first on the server's PATH, so a notebook's ``!`` command
or a terminal finds the same Python, nbgrader and ``kvlesson`` as the server.

With ``--exchange`` the assignment list and the Nbgrader menu stay, for students who
fetch and submit through an nbgrader exchange (a hub, a shared machine).

The calls are the ones behind the commands of nbgrader's installation guide
(``jupyter labextension disable`` and ``lock``, ``jupyter server extension
disable``): https://nbgrader.readthedocs.io/en/stable/user_guide/installation.html
Since JupyterLab 4.1 the Plugin Manager can turn a disabled plugin back on
unless it is locked, so every hidden plugin is locked too. Settings files are
merged, never written over: a shared hub's own overrides stay.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

HIDDEN_LAB_PLUGINS = (
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:menu",
)
HIDDEN_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
    "nbgrader.server_extensions.assignment_list",
)
# What students need when they fetch and submit through an nbgrader exchange (a hub or a
# shared machine, docs/instructors.md): kept with --exchange.
EXCHANGE_TOOLS = (
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:menu",
    "nbgrader.server_extensions.assignment_list",
)
# The news question is asked by the announcements plugin, which reads these two settings
# of @jupyterlab/apputils-extension:notification (JupyterLab 4 schema: fetchNews is the
# string "true", "false" or "none", where "none" means ask).
NEWS_PLUGIN = "@jupyterlab/apputils-extension:notification"
NEWS_OFF = {"fetchNews": "false", "checkForUpdates": False}
# Written into the config folder when a setup is done; scripts/open.sh sets the folder up
# again only when this module is newer than the stamp.
STAMP = "kvlesson-student.json"
LEVELS = ("user", "sys_prefix")
STATE = ".kvlesson"  # in the course folder (gitignored): the student's Jupyter config, the stamp
FIRST = "00_start_here/start_here.ipynb"  # where a student's JupyterLab opens


@dataclass(frozen=True)
class StudentSetup:
    """Where the student interface was written: the Jupyter config folder (lab page config,
    server extensions, the stamp), the settings file that turns the news off, and what was
    hidden."""

    level: str
    config_dir: Path
    news_settings: Path
    hidden: tuple[str, ...]


def merge_json(path: Path, values: dict) -> None:
    """Write `values` into the JSON object in `path`, nested objects merged key by key; every
    other entry already in the file stays. Creates the file (and its folder) if missing."""
    current: object = {}
    if path.exists() and path.read_text().strip():
        try:
            current = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON ({error}): fix or remove it") from error
    if not isinstance(current, dict):
        raise ValueError(f"{path} should hold a JSON object, not {type(current).__name__}")

    def merged(old: dict, new: dict) -> dict:
        out = dict(old)
        for key, value in new.items():
            both = isinstance(value, dict) and isinstance(out.get(key), dict)
            out[key] = merged(out[key], value) if both else value
        return out

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged(current, values), indent=2) + "\n")


def set_up(level: str, exchange: bool = False) -> StudentSetup:
    """Hide the instructor tools and the news question at `level` ('user': the folder
    JUPYTER_CONFIG_DIR names; 'sys_prefix': this Python environment); with `exchange`, keep
    the assignment list and the Nbgrader menu that opens it."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    # Imported here: JupyterLab comes with the course extra, not with the package.
    from jupyter_core.paths import ENV_CONFIG_PATH, jupyter_config_dir
    from jupyter_server.extension.serverextension import toggle_server_extension_python
    from jupyterlab.commands import (
        disable_extension,
        get_app_dir,
        get_user_settings_dir,
        lock_extension,
    )

    user = level == "user"
    config_dir = Path(jupyter_config_dir() if user else ENV_CONFIG_PATH[0])
    news = (
        Path(get_user_settings_dir())
        / "@jupyterlab"
        / "apputils-extension"
        / "notification.jupyterlab-settings"
        if user
        else Path(get_app_dir()) / "settings" / "overrides.json"
    )
    kept = EXCHANGE_TOOLS if exchange else ()
    plugins = [name for name in HIDDEN_LAB_PLUGINS if name not in kept]
    extensions = [name for name in HIDDEN_SERVER_EXTENSIONS if name not in kept]
    for plugin in plugins:
        disable_extension(plugin, level=level)
        lock_extension(plugin, level=level)
    for extension in extensions:
        toggle_server_extension_python(extension, enabled=False, user=user, sys_prefix=not user)
    merge_json(news, NEWS_OFF if user else {NEWS_PLUGIN: NEWS_OFF})
    stamp = {"hidden": plugins + extensions, "news": NEWS_OFF}
    (config_dir / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    return StudentSetup(level, config_dir, news, tuple(plugins + extensions))


def student_arguments(parser: argparse.ArgumentParser) -> None:
    """`kvlesson student`: where the student interface goes."""
    parser.description = (
        "Give JupyterLab the student interface: of nbgrader only the "
        "Validate button, no news question."
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--user",
        action="store_const",
        const="user",
        dest="level",
        help="only for the config folder JUPYTER_CONFIG_DIR names "
        f"(now {os.environ.get('JUPYTER_CONFIG_DIR', '~/.jupyter')})",
    )
    where.add_argument(
        "--sys-prefix",
        action="store_const",
        const="sys_prefix",
        dest="level",
        help="for every user of this Python environment (Binder, a hub image)",
    )
    parser.add_argument(
        "--exchange",
        action="store_true",
        help="students fetch and submit through an nbgrader exchange: keep the "
        "assignment list and the Nbgrader menu",
    )


def student_run(args: argparse.Namespace) -> int:
    setup = set_up(args.level, args.exchange)
    print(
        f"Student interface set up in {setup.config_dir}: hidden {', '.join(setup.hidden)}; "
        f"news question off in {setup.news_settings}"
    )
    return 0


def course_folder(start: Path) -> Path:
    """The course the Lab opens: `start` when it holds notebooks/ and nbgrader_config.py,
    else the repository this package was installed from; ValueError when neither does."""
    import kvlesson

    for folder in (start, Path(kvlesson.__file__).resolve().parents[1]):
        if (folder / "notebooks").is_dir() and (folder / "nbgrader_config.py").is_file():
            return folder
    raise ValueError(
        f"no course in {start}: run it in a copy of the course repository (the "
        "folder with notebooks/ and nbgrader_config.py)"
    )


def lab_environment(course: Path, student: bool) -> dict[str, str]:
    """The server's environment: this Python's programs first on PATH, and for a student the
    course's own Jupyter config folder (first on the config path: in a virtual environment
    Jupyter otherwise prefers the environment's config, where nbgrader enables every tool)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    if student:
        config = course / STATE / "student"
        env.update(
            JUPYTER_CONFIG_DIR=str(config),
            JUPYTER_CONFIG_PATH=os.pathsep.join(
                filter(None, [str(config), env.get("JUPYTER_CONFIG_PATH")])
            ),
            JUPYTERLAB_SETTINGS_DIR=str(config / "lab" / "user-settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(config / "lab" / "workspaces"),
        )
    return env


def lab_arguments(course: Path, student: bool, extra: list[str]) -> list[str]:
    """`jupyter lab`'s arguments: a student's Lab serves notebooks/ and opens notebook 0."""
    found = (
        [f"--ServerApp.root_dir={course / 'notebooks'}", f"--LabApp.default_url=/lab/tree/{FIRST}"]
        if student
        else []
    )
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # a container, a fresh VM
        found.append("--allow-root")
    return found + extra


def open_arguments(parser: argparse.ArgumentParser) -> None:
    """`kvlesson open`: a student's Lab, or an instructor's; anything else goes to JupyterLab."""
    parser.add_argument(
        "--instructor",
        action="store_true",
        help="the course root with every "
        "nbgrader tool (formgrader, Create Assignment), not the student's Lab",
    )
    parser.set_defaults(extra_arguments=[])  # the rest: `jupyter lab`'s own (--port 9000)


def open_run(args: argparse.Namespace) -> int:
    """Start JupyterLab on the course (it replaces this process)."""
    course = course_folder(Path.cwd())
    student = not args.instructor
    env = lab_environment(course, student)
    if student:
        stamp = Path(env["JUPYTER_CONFIG_DIR"]) / STAMP
        if not stamp.is_file() or stamp.stat().st_mtime < Path(__file__).stat().st_mtime:
            os.environ.update(env)  # set_up writes where JUPYTER_CONFIG_DIR points
            set_up("user")
        print(f"Opening the course at notebook 0 ({FIRST}).")
    else:
        print("Opening the course root with every nbgrader tool (Nbgrader menu, formgrader).")
    print(
        "If no browser opens, open the http://127.0.0.1:... link printed below.\n"
        "To stop the server: Ctrl+C twice here, or File > Shut Down in JupyterLab.",
        flush=True,
    )
    os.chdir(course)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        *lab_arguments(course, student, args.extra_arguments),
    ]
    os.execve(sys.executable, command, env)
    return 0  # not reached: the server has taken this process's place
