"""Debian's bubblewrap (`bwrap`): found, checked, and the command that puts up the walls.

bwrap puts up a zygote's box once (`kvlesson.grading.box.launch`): the walls of
`kvlesson.grading.box.walls`, the root and /dev read-only, no network (its own network
namespace: the grader talks to each kernel over Unix sockets), its own process, IPC, host
and cgroup namespaces, a new session (no terminal to type into), a clean environment (no
token of the grader's session reaches it), and it dies with the process that started it.
Inside, the zygote keeps the capabilities of its own user namespace, and only so long as it
runs no student code: each kernel it forks puts up its own writable places with them and
then drops every one (`kvlesson.grading.box.enter`).
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
from pathlib import Path

from kvlesson.grading.box.walls import FRESH, HIDDEN, SHARED_MEMORY, Walls, system_arguments

BWRAP = "bwrap"  # Debian package `bubblewrap`
# Environment variables the kernel keeps; everything else (tokens, the hub's API key) is dropped.
KEPT_ENVIRONMENT = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "PYTHONPATH",
    "MPLBACKEND",
)


def bwrap_path() -> str:
    """The bwrap program, once it has made a box as this account; else a clear error saying
    how to install it, or why it cannot box here."""
    found = shutil.which(BWRAP)
    if found is None:
        raise RuntimeError(
            "the grading box needs bubblewrap: install it with "
            "`apt-get install bubblewrap` (Debian, Ubuntu) and grade again"
        )
    problem = box_problem(found)
    if problem:
        raise RuntimeError(problem)
    return found


@functools.lru_cache(maxsize=None)
def box_problem(bwrap: str) -> str:
    """Why `bwrap` cannot make a box as this account ("" if it can), in words: as an
    ordinary user it needs unprivileged user namespaces, which some machines forbid."""
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-all", "true"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"the grading box cannot start: {bwrap} does not run ({error})"
    if done.returncode == 0:
        return ""
    said = (done.stderr.strip().splitlines() or ["no message"])[-1]
    account = pwd.getpwuid(os.getuid()).pw_name
    return (
        f"the grading box cannot start here: bubblewrap cannot make a box as the account "
        f"{account} ({bwrap}: {said}). As an ordinary user it needs unprivileged user "
        f"namespaces, which this machine forbids: on Ubuntu 24.04 and later root may "
        f"allow them with `sysctl kernel.apparmor_restrict_unprivileged_userns=0`, on "
        f"older Debian kernels with `sysctl kernel.unprivileged_userns_clone=1`; in a "
        f"container, grade outside it. Check with `bwrap --ro-bind / / --unshare-all true`."
    )


def wall_arguments(walls: Walls) -> list[str]:
    """bwrap's arguments for the walls, in their order; the hidden folders, /dev and the
    root turned read-only last."""
    args = [*system_arguments(), "--dev", "/dev", "--proc", "/proc"]
    for mount in walls.mounts():
        if mount.kind == FRESH:
            args += ["--size", str(mount.size), "--tmpfs", str(mount.target)]
        elif mount.kind == HIDDEN and mount.source is None:
            args += ["--tmpfs", str(mount.target)]
        else:  # shown, or a hidden file (shown as /dev/null)
            args += ["--ro-bind", str(mount.source), str(mount.target)]
    for mount in walls.mounts():
        if mount.kind == HIDDEN and mount.source is None:
            args += ["--remount-ro", str(mount.target)]
    return [*args, "--remount-ro", str(SHARED_MEMORY.parent), "--remount-ro", "/"]


def isolation_arguments() -> list[str]:
    """Every namespace of its own, the capabilities of its own user namespace kept (each
    kernel drops them), a new session, and the box dies with the process that started it."""
    return [
        "--unshare-all",
        "--unshare-user",
        "--cap-add",
        "ALL",
        "--new-session",
        "--die-with-parent",
    ]


def environment_arguments(home: Path) -> list[str]:
    """A clean environment: the kept variables, and an empty home."""
    # JPY_PARENT_PID=1: ipykernel watches no parent (a kernel is the first process of its
    # own process namespace) and prints no connection banner. PYTHONDONTWRITEBYTECODE: the
    # system is read-only in the box, and an import that tried to refresh a stale .pyc in
    # the package would be reported as the student's cell writing outside its working copy.
    args = [
        "--clearenv",
        "--setenv",
        "HOME",
        str(home),
        "--setenv",
        "JPY_PARENT_PID",
        "1",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
        "--setenv",
        "NBGRADER_EXECUTION",
        "autograde",
        # ipykernel's debugger (debugpy) warns at its import that Python's modules are frozen
        "--setenv",
        "PYDEVD_DISABLE_FILE_VALIDATION",
        "1",
    ]
    for name in KEPT_ENVIRONMENT:
        if name in os.environ:
            args += ["--setenv", name, os.environ[name]]
    return args


def bwrap_command(walls: Walls, command: list[str]) -> list[str]:
    """The whole command that runs `command` (a zygote) in the box, in the working copy."""
    return [
        bwrap_path(),
        *wall_arguments(walls),
        *isolation_arguments(),
        *environment_arguments(Path.home()),
        "--chdir",
        str(walls.work),
        "--",
        *command,
    ]
