"""`kvlesson VERB`: one command for every job.

Every verb answers --help with its own usage and the cards and models the package knows;
`kvlesson --help` lists every verb; a wrong verb is named with the right ones; an earlier
release's address is gone, and CHANGELOG.md says what to type now.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from kvlesson import cli
from kvlesson.authoring.command import copy_course
from kvlesson.memory.specs import GPUS, MODELS
from support.command import kvlesson
from support.paths import ROOT


def test_the_overview_lists_every_verb_and_the_packages_cards_and_models(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for verb, about in cli.VERBS.items():
        assert f"  {verb} " in out and about.about in out
    assert all(key in out for key in [*GPUS, *MODELS]), out


def test_no_verb_is_a_usage_error_with_the_overview(capsys):
    assert cli.main([]) == 2
    assert "verbs:" in capsys.readouterr().out


def test_an_unknown_verb_is_named_with_the_verbs(capsys):
    assert cli.main(["grdae"]) == 2
    err = capsys.readouterr().err
    assert "no verb 'grdae'" in err and "grade" in err and "numbers" in err


@pytest.mark.parametrize("verb", list(cli.VERBS))
def test_every_verb_answers_help_with_its_usage_and_the_hardware(verb, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([verb, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: kvlesson {verb}")
    assert "RTX_3090" in out and "QWEN25_7B" in out  # the lists come from the package


def test_the_course_for_another_card_takes_only_the_packages_cards(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["for", "--gpu", "B200", "--out", "x"])
    assert done.value.code == 2
    assert "invalid choice: 'B200'" in capsys.readouterr().err


def test_only_open_passes_unknown_arguments_on(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["grade", "01_floor_plan", "--port", "9000"])
    assert done.value.code == 2
    assert "unrecognized arguments: --port 9000" in capsys.readouterr().err


def test_the_console_script_is_the_one_command():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"kvlesson": "kvlesson.cli:main"}


@pytest.mark.parametrize(
    "old", ["kvlesson.grade", "kvlesson.course", "kvlesson.student", "kvlesson.box"]
)
def test_an_old_address_is_gone_and_the_changelog_says_what_to_type_now(old):
    assert importlib.util.find_spec(old) is None
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"`python -m {old}" in changelog


def test_a_setting_without_a_verb_names_the_verbs(capsys):
    assert cli.main(["--share", "90"]) == 2
    said = capsys.readouterr().err
    assert "no verb '--share'" in said and "numbers" in said


@pytest.mark.process
def test_the_console_command_prints_what_the_verb_prints_in_process():
    """The installed `kvlesson` (the console script) and `python -m kvlesson` print what the
    tests read from the verb run in this process (support.command)."""
    script = Path(sys.executable).parent / "kvlesson"
    for command in ([str(script)], [sys.executable, "-m", "kvlesson"]):
        done = subprocess.run(
            [*command, "numbers", "--json"], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == json.loads(kvlesson("numbers", "--json").stdout)


def test_a_verb_puts_its_own_environments_programs_first(monkeypatch):
    """nbgrader runs `alembic` by name: a verb started with a PATH that lacks this
    environment's programs (a JupyterLab's `!` line, a cron job) must still find it."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    cli.own_programs_first()
    programs = str(Path(sys.executable).parent)
    assert os.environ["PATH"].split(os.pathsep) == [programs, "/usr/bin", "/bin"]
    assert shutil.which("alembic") == str(Path(programs) / "alembic")
    cli.own_programs_first()  # once is enough
    assert os.environ["PATH"].split(os.pathsep) == [programs, "/usr/bin", "/bin"]


@pytest.mark.process
def test_generate_finds_alembic_with_a_path_that_lacks_it(tmp_path):
    """The walk of 2026-12-07: `kvlesson build` failed where the venv's bin was not on PATH.
    A new gradebook asks alembic for its version: `kvlesson generate` makes one."""
    root = copy_course(tmp_path / "course", ["01_floor_plan"])
    done = subprocess.run(
        [sys.executable, "-m", "kvlesson", "generate", "--course", str(root), "01_floor_plan"],
        cwd=tmp_path,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "recorded in" in done.stdout and (root / "gradebook.db").is_file()
