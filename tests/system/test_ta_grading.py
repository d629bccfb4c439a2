"""A teaching assistant grades a class on a laptop, without root: docs/instructors.md's
"Grading on your own account", its blocks run as written by an ordinary account.

The blocks marked `<!-- ta-test: NAME -->` in the guide are typed, one after the other, by a
throwaway account made for the test (no sudo, no group of the course), in its own copy of
the repository: the check that bubblewrap can box on this account, a Canvas-style zip of two
students' notebooks sorted by nbgrader's `zip_collect`, a third student's notebook handed
over as a file, and `kvlesson grade`. The guide's install block is not run (it needs the
network and minutes): the account uses the environment hub/setup.sh made in
/opt/kvlesson-hub, which any account can run (scripts/test.sh makes it first; the test skips
without it), as the guide's own virtual environment would be. Each student's score must be
what their answers are worth, and the class report must be written.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from support.handing_in import answers_to_tests, handed_in, points
from support.hub_session import account_pids, as_account, end_processes, run
from support.paths import ROOT
from support.patience import HANG

GUIDE = ROOT / "docs" / "instructors.md"
BLOCK = re.compile(r"<!-- ta-test: ([\w-]+) -->\n```bash\n(.*?)```", re.S)
ENVIRONMENT = Path("/opt/kvlesson-hub/venv/bin")  # hub/setup.sh's, runnable by any account
TA = "kvlta"  # the test's teaching assistant, an ordinary account
ASSIGNMENT, NOTEBOOK = "01_floor_plan", "floor_plan"
ZIP_PLACE, FILE_PLACE = "~/Downloads/submissions.zip", "~/from-ada/floor_plan.ipynb"


def why_not() -> str | None:
    """Why this machine cannot run the test, or None."""
    if os.geteuid() != 0:
        return "the test makes an ordinary account to grade as: run it as root"
    for tool in ("useradd", "userdel", "runuser", "git", "bwrap"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on this machine"
    if not (ENVIRONMENT / "kvlesson").exists():
        return f"no {ENVIRONMENT}: run `bash hub/setup.sh` as root first (scripts/test.sh does)"
    return None


pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


def blocks() -> dict[str, str]:
    """The guide's blocks the TA types, by name."""
    found = dict(BLOCK.findall(GUIDE.read_text()))
    assert set(found) == {"check", "zip", "folder", "grade"}, sorted(found)
    return found


@pytest.fixture(scope="module")
def laptop() -> Iterator[Path]:
    """The TA's account with its own copy of the repository (as `git clone` leaves it); the
    copy's path. The account and its home are removed afterwards."""
    subprocess.run(["userdel", "--remove", TA], capture_output=True)
    run("useradd", "--create-home", TA)
    try:
        home = Path(run("getent", "passwd", TA).stdout.split(":")[5])
        clone = home / "kvlesson"
        listed = (
            subprocess.run(
                ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
            )
            .stdout.decode()
            .split("\0")
        )
        for name in filter(None, listed):
            if (ROOT / name).is_file():
                (clone / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, clone / name)
        run("chown", "-R", f"{TA}:", str(home))
        yield clone
    finally:
        end_processes(account_pids({TA}))
        subprocess.run(["userdel", "--remove", TA], capture_output=True)


def typed(block: str, clone: Path) -> str:
    """The TA types `block` in the repository root, with the course's environment first on
    PATH (what `. .venv/bin/activate` gives); what it printed. Fails with it if a command
    failed."""
    script = "\n".join(
        [
            "set -euo pipefail",
            f"cd {shlex.quote(str(clone))}",
            f"export PATH={ENVIRONMENT}:/usr/local/bin:/usr/bin:/bin",
            block,
        ]
    )
    status, output = as_account(TA, f"bash -c {shlex.quote(script)}", timeout=HANG)
    assert status == 0, f"the TA typed the guide's block and it failed:\n{block}\n{output}"
    return output


def test_a_ta_grades_a_download_and_a_handed_over_file_without_root(laptop):
    steps = blocks()
    clone, home = laptop, laptop.parent
    release = nbformat.read(clone / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    solution = nbformat.read(clone / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    answers, worth = answers_to_tests(solution), points(solution)
    answered = {"ada": set(answers), "bea": set(list(answers)[:1]), "cal": set()}
    expected = {
        name: sum(worth[t] for a in mine for t in answers[a]) for name, mine in answered.items()
    }
    assert 0 < expected["bea"] < expected["ada"]

    # What the platform's download holds (Canvas's names: a late one, one handed in again),
    # and ada's notebook as a file of its own.
    with tempfile.TemporaryDirectory() as scratch:
        made = Path(scratch)
        for name, file in (
            ("bea", f"bea_1002_2002_{NOTEBOOK}.ipynb"),
            ("cal", f"cal_late_1003_2003_{NOTEBOOK}-1.ipynb"),
        ):
            nbformat.write(handed_in(release, solution, answered[name]), made / file)
        with zipfile.ZipFile(made / "submissions.zip", "w") as archive:
            for file in sorted(made.glob("*.ipynb")):
                archive.write(file, f"submissions/{file.name}")
        (home / "Downloads").mkdir()
        shutil.copy(made / "submissions.zip", home / "Downloads")
        (home / "from-ada").mkdir()
        nbformat.write(
            handed_in(release, solution, answered["ada"]), home / "from-ada" / f"{NOTEBOOK}.ipynb"
        )
    run("chown", "-R", f"{TA}:", str(home))

    assert "the grading box works on this account" in typed(steps["check"], clone)
    assert ZIP_PLACE in steps["zip"] and FILE_PLACE in steps["folder"], steps  # where we put them
    typed(steps["zip"], clone)
    typed(steps["folder"], clone)
    for name in answered:
        assert (clone / "submitted" / name / ASSIGNMENT / f"{NOTEBOOK}.ipynb").is_file(), name

    output = typed(steps["grade"], clone)
    scores = {
        m[1]: float(m[2])
        for m in re.finditer(rf"^\s*(\w+)\s+{NOTEBOOK}\s+([\d.]+) / [\d.]+", output, re.M)
    }
    assert scores == expected, output
    report = clone / "reports" / f"{ASSIGNMENT}.html"
    assert report.is_file() and report.stat().st_uid != 0, output
