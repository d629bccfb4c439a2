"""nbgrader's exchange between Unix accounts, for tests/grading/exchange.

Real `nbgrader` commands, run as root, on folders handed to other system accounts
(`daemon`, `bin`, `nobody`: root can hand a folder to any of them).
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.patience import HANG

ASSIGNMENT = "02_ceiling"

AS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0, reason="the exchange test hands folders to other accounts: run as root"
)


def nbgrader(command: list[str], cwd: Path, home: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {
        **os.environ,
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=HANG,
    )


def uid(name: str) -> int:
    return pwd.getpwnam(name).pw_uid


def now_stamp(minutes_ago: float = 0) -> str:
    """A submission time as nbgrader writes it, `minutes_ago` before now (UTC)."""
    seconds = time.time() - minutes_ago * 60
    return time.strftime("%Y-%m-%d %H:%M:%S.000000 UTC", time.gmtime(seconds))
