"""`kvlesson VERB ...` run in this process, as the console command would run it: its exit code
and what it printed. A test of what a verb prints needs no new Python (a second or more a
start); tests/test_cli.py holds the real command, started as a process, to the same output."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from kvlesson import cli


@dataclass(frozen=True)
class Ran:
    """A verb's exit code and what it wrote to stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


def kvlesson(*argv: str) -> Ran:
    """Run `kvlesson ARGV` in this process (argparse's usage errors included: exit code 2)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
    return Ran(code, out.getvalue(), err.getvalue())
