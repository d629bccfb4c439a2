"""Starting the grader's own Python processes so that nothing a student wrote is imported.

`python -m module` puts the folder it starts in first on the import path: a launcher
started in a submission's working copy would import a student's `argparse.py` or
`kvlesson/` as the grader. Every Python process the grader starts runs in isolated mode
(`-I`: no current folder, no PYTHONPATH, no user site-packages) and finds kvlesson where
the grader found it. It writes no bytecode (`-B`; isolated mode ignores
PYTHONDONTWRITEBYTECODE): in the box, a kernel that imported a package with no fresh
`.pyc` (a new clone) would try to write one, outside its working copy.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from pathlib import Path

import kvlesson

# The package's own folder's parent: site-packages, or the repository of an editable
# install; it holds only the grader's code, never a student's.
PACKAGE_HOME = str(Path(kvlesson.__file__).resolve().parent.parent)
PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies
BOOT = (
    "import runpy, sys; sys.path.insert(0, {home!r}); del sys.argv[1]; "
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
)


def python(module: str) -> list[str]:
    """The command that runs `module` as `python -m module` would, in isolated mode; the
    module's own arguments follow it."""
    return [sys.executable, "-I", "-B", "-c", BOOT.format(home=PACKAGE_HOME, module=module), module]


def die_with_parent() -> None:
    """Ask Linux to kill this process when the grader that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def leave() -> None:
    """End this process, its work done: what it logged and printed written out, then gone
    without the interpreter's teardown (0.3 to 0.4 s of a core in a process that imported
    IPython or nbgrader: a grading worker, a zygote)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
