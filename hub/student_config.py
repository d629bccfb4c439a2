"""Write the students' Jupyter configuration for the course's hub (run by hub/setup.sh).

    JUPYTER_CONFIG_DIR=/opt/kvlesson-hub/etc/student python hub/student_config.py

A student on the hub gets the student interface of kvlesson.delivery.lab (the one list of
nbgrader's tools a student does not see, shared with Binder and scripts/open.sh) in its
exchange form: students fetch and submit through nbgrader's Assignment List, so it and the
Nbgrader menu stay. The plugins are disabled and locked, and the server extensions switched
off, in the folder JUPYTER_CONFIG_DIR names, which hub/jupyterhub_config.py puts on the
students' configuration path only: instructors share this environment and keep every tool.
JupyterLab's news question is switched off for everyone in this environment, in its
overrides.json (merged: an admin's own overrides stay), because JupyterLab reads a user's
settings from that user's home, not from a shared folder.
"""

from __future__ import annotations

from pathlib import Path

from jupyterlab.commands import get_app_dir

from kvlesson.delivery.lab import NEWS_OFF, NEWS_PLUGIN, merge_json, set_up


def main() -> None:
    """The student interface in JUPYTER_CONFIG_DIR; the news off for this environment."""
    setup = set_up("user", exchange=True)
    merge_json(Path(get_app_dir()) / "settings" / "overrides.json", {NEWS_PLUGIN: NEWS_OFF})
    print(f"Students' configuration in {setup.config_dir}: hidden {', '.join(setup.hidden)}")


if __name__ == "__main__":
    main()
