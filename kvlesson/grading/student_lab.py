"""The student's JupyterLab: nbgrader's Validate button, and none of the instructor's tools.

A student checks a notebook with nbgrader's Validate button. The instructor
tools (formgrader, Create Assignment, the course list), the assignment list
(fetch and submit need an nbgrader exchange) and the Nbgrader menu that only
opens those are hidden, and JupyterLab's news question is switched off. This
module holds the one list of what is hidden and applies it at one of two levels:

* ``python -m kvlesson.student --sys-prefix``: for everybody who uses this
  Python environment (Binder's ``postBuild``, a hub's student image);
* ``python -m kvlesson.student --user``: only for the Jupyter config folder
  that ``JUPYTER_CONFIG_DIR`` names. ``scripts/open.sh`` points it at the
  course's own ``.student/`` folder, so the instructor's JupyterLab, started
  without it, keeps every tool.

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
EXCHANGE_TOOLS = ("@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu",
                  "nbgrader.server_extensions.assignment_list")
# The news question is asked by the announcements plugin, which reads these two settings
# of @jupyterlab/apputils-extension:notification (JupyterLab 4 schema: fetchNews is the
# string "true", "false" or "none", where "none" means ask).
NEWS_PLUGIN = "@jupyterlab/apputils-extension:notification"
NEWS_OFF = {"fetchNews": "false", "checkForUpdates": False}
# Written into the config folder when a setup is done; scripts/open.sh sets the folder up
# again only when this module is newer than the stamp.
STAMP = "kvlesson-student.json"
LEVELS = ("user", "sys_prefix")


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
    from jupyterlab.commands import (disable_extension, get_app_dir, get_user_settings_dir,
                                     lock_extension)
    from jupyter_server.extension.serverextension import toggle_server_extension_python

    user = level == "user"
    config_dir = Path(jupyter_config_dir() if user else ENV_CONFIG_PATH[0])
    news = (Path(get_user_settings_dir()) / "@jupyterlab" / "apputils-extension"
            / "notification.jupyterlab-settings" if user
            else Path(get_app_dir()) / "settings" / "overrides.json")
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


def main(argv: list[str] | None = None) -> None:
    """Command line: `python -m kvlesson.student --user` or `--sys-prefix`."""
    parser = argparse.ArgumentParser(
        prog="python -m kvlesson.student",
        description="Give JupyterLab the student interface: of nbgrader only the Validate "
                    "button, no news question.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--user", action="store_const", const="user", dest="level",
                       help="only for the config folder JUPYTER_CONFIG_DIR names "
                            f"(now {os.environ.get('JUPYTER_CONFIG_DIR', '~/.jupyter')})")
    where.add_argument("--sys-prefix", action="store_const", const="sys_prefix", dest="level",
                       help="for every user of this Python environment (Binder, a hub image)")
    parser.add_argument("--exchange", action="store_true",
                        help="students fetch and submit through an nbgrader exchange: keep the "
                             "assignment list and the Nbgrader menu")
    args = parser.parse_args(argv)
    setup = set_up(args.level, args.exchange)
    print(f"Student interface set up in {setup.config_dir}: hidden {', '.join(setup.hidden)}; "
          f"news question off in {setup.news_settings}")


if __name__ == "__main__":
    main()
