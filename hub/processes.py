"""A student's processes end with her server: every process of her account, at once.

hub/setup.sh copies this file beside the hub's configuration (PREFIX/etc). A student's
terminal in JupyterLab is a full shell, and a process she starts there with `setsid nohup`
leaves her server's process group and session: stopping her server, or the hub, left it
running, free to take the hub's ports before a restart (the walk of December 2026). So the
hub ends every process of a student's account when her server stops (the spawner's
`post_stop_hook`, hub/jupyterhub_config.py), and the guide's stop command (hub/stop.py) ends
every process of every student. Each is `kill(-1, SIGKILL)` run as her account (setpriv
drops root first), which the kernel applies to all of that account's processes in one step,
so none escapes by forking meanwhile. Only ordinary accounts of the students' group are
ended: never root, a system account, nor an instructor (an instructor's grading run outlives
their server, as they may want).
"""

from __future__ import annotations

import grp
import pwd
import subprocess
import sys

FIRST_ORDINARY_UID = 1000  # Debian's UID_MIN (/etc/login.defs): below it, system accounts
NOBODY = 65534
KILL_ALL_MINE = "import os, signal; os.kill(-1, signal.SIGKILL)"  # all but the caller


def members(group: str) -> list[str]:
    """The accounts in the Unix group `group` (as an extra or as their main group)."""
    try:
        found = grp.getgrnam(group)
    except KeyError:
        return []
    main = [user.pw_name for user in pwd.getpwall() if user.pw_gid == found.gr_gid]
    return sorted({*found.gr_mem, *main})


def end_account(name: str) -> bool:
    """End every process of the ordinary account `name` at once; whether it was one."""
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        return False
    if account.pw_uid < FIRST_ORDINARY_UID or account.pw_uid == NOBODY:
        return False
    subprocess.run(
        [
            "setpriv",
            f"--reuid={account.pw_uid}",
            f"--regid={account.pw_gid}",
            "--clear-groups",
            "--",
            sys.executable,
            "-I",
            "-c",
            KILL_ALL_MINE,
        ],
        capture_output=True,
        check=False,
        timeout=60,
    )
    return True


def end_students(group: str) -> list[str]:
    """End every process of every account of the students' `group`; the accounts ended."""
    return [name for name in members(group) if end_account(name)]
