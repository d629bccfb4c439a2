"""`kvlesson VERB`: one command for every job, and the old addresses for one release.

Every verb answers --help with its own usage and the cards and models the package knows;
`kvlesson --help` lists every verb; a wrong verb is named with the right ones; an earlier
release's address still runs and says what to type now.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import tomllib

from kvlesson import cli
from kvlesson.memory.specs import GPUS, MODELS
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
    "old, new",
    [
        (["kvlesson.grade", "--help"], "usage: kvlesson grade"),
        (["kvlesson.course", "build", "--help"], "usage: kvlesson build"),
        (["kvlesson.course", "for", "--help"], "usage: kvlesson for"),
        (["kvlesson.student", "--help"], "usage: kvlesson student"),
    ],
)
def test_an_old_address_still_runs_and_says_what_to_type_now(old, new):
    done = subprocess.run(
        [sys.executable, "-m", *old],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(new)
    assert f"is now `{new.removeprefix('usage: ')}`" in done.stderr
    assert "goes in the next release" in done.stderr


def test_the_old_numbers_address_prints_the_numbers_and_says_so():
    done = subprocess.run(
        [sys.executable, "-m", "kvlesson", "--share", "90"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "53.9 GB" in done.stdout
    assert "is now `kvlesson numbers --share 90`" in done.stderr
