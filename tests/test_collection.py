"""Every test file on disk is collected, and every instructor notebook with --nbval.

pytest skips folders by name (`build`, `dist`, `venv`, a leading dot: its `norecursedirs`), a
file whose name does not match `test_*.py`, and a module that skips itself while it is
imported; each of those runs nothing and says nothing. The 176 tests of the release builder's
folder, once called `build`, never ran for five days. This collects the suite as the README's
test command does and holds what it found against the files on disk.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from support.paths import ROOT


def collected() -> set[str]:
    """The files `pytest --nbval --collect-only` finds a test in, as paths from the root."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--collect-only", "-q", "-p", "no:xdist"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.process
def test_every_test_file_and_every_instructor_notebook_is_collected():
    on_disk = {
        path.relative_to(ROOT).as_posix()
        for path in [*ROOT.glob("tests/**/test_*.py"), *ROOT.glob("solutions/*/*.ipynb")]
        if ".ipynb_checkpoints" not in path.parts
    }
    missing = sorted(on_disk - collected())
    assert missing == [], f"files on disk that pytest collects no test from: {missing}"
