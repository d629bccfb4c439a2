"""docs/first-exercise.md's machine steps on a copy of the course: `kvlesson exercise` writes
an exercise, `kvlesson check` builds it (the notebook changed) and passes every check of it;
a wrong answer of a student's own missing from HAND is a check to change, said in words; a
changed question is built again. The wider tests the check stands for are the course's own
(tests/authoring, tests/system/test_notebooks.py): the check runs them, for one exercise.

The copy holds 02_ceiling and the tests; its kernels import this repository's kvlesson."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from kvlesson.authoring import command, exercise_check, hand_table
from kvlesson.authoring.probe_cells import declared_mistakes
from kvlesson.authoring.scaffold import add_exercise, next_free
from kvlesson.grading.course.notebooks import grade_id_of
from support.paths import ROOT


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    root = command.copy_course(tmp_path_factory.mktemp("first") / "course", ["02_ceiling"])
    shutil.copytree(ROOT / "notebooks" / "02_ceiling", root / "notebooks" / "02_ceiling")
    shutil.copy(ROOT / "pyproject.toml", root)
    shutil.copytree(
        ROOT / "tests", root / "tests", ignore=shutil.ignore_patterns("__pycache__", "artifacts")
    )
    return root


@pytest.fixture(scope="module")
def new(course):
    """The example exercise under the notebook's next name (ex2_3 while it has two)."""
    [path] = (course / "solutions" / "02_ceiling").glob("*.ipynb")
    return next_free(nbformat.read(path, as_version=4), "02_ceiling")


def test_an_exercise_written_built_and_checked(course, new, capsys):
    add_exercise(course, "02_ceiling", new, after="ex2_2")
    outcomes = exercise_check.check(course, "02_ceiling", new.name)
    said = capsys.readouterr().out
    assert "changed since it was built: kvlesson build 02_ceiling" in said  # built first
    assert [o for o in outcomes if not o.passed] == []
    checked = {o.what for o in outcomes}
    assert {
        "the self checks reject what the grade rejects",
        "every key is true",
        "each exercise has wrong answers of a students own",
        "no answer is in view of its question",
        "every quantity in the prose is an output of the notebook",
        "every unanswered release fails its tests",
        "the notebook for H100_80GB at a 50% share",
    } <= checked
    [lies] = [o.said for o in outcomes if o.what == "the self checks reject what the grade rejects"]
    assert lies.startswith(f"{new.name}_tests:") and "0 lies, 0 blind" in lies


def test_what_to_change_is_said_and_a_changed_question_is_built_again(course, new, capsys):
    table, tests = course / hand_table.TABLE, f"{new.name}_tests"
    text = table.read_text()
    start = text.index(f'    "{tests}": [')
    end = text.index("    ],\n", start)
    table.write_text(text[:start] + f'    "{tests}": [\n' + text[end:])  # no wrong answer
    [path] = (course / "solutions" / "02_ceiling").glob("*.ipynb")
    nb = nbformat.read(path, as_version=4)
    [question] = [c for c in nb.cells if c.source.startswith(f"## {new.heading}:")]
    question.source = question.source.replace("the cache of one chat", "one chat's cache")
    nbformat.write(nb, path)
    outcomes = exercise_check.check(course, "02_ceiling", new.name)
    assert "changed since it was built" in capsys.readouterr().out
    [change] = [o for o in outcomes if not o.passed]
    assert change.what == "each exercise has wrong answers of a students own"
    assert f"add at least 3 to HAND[{tests!r}] in tests/authoring/test_selfchecks.py" in (
        change.said
    )


def test_the_guides_two_submissions(course, new):
    """Step 6 of docs/first-exercise.md, as written there: Alice answers as the instructor,
    Bob makes the mistake the exercise declares."""
    guide = (ROOT / "docs" / "first-exercise.md").read_text()
    code = guide.split("python - <<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0]
    code = code.replace("ex2_3", new.name)  # the guide's name, or the next free one here
    made = subprocess.run([sys.executable, "-"], input=code, cwd=course, text=True)
    assert made.returncode == 0
    answers = {}
    for student in ("alice", "bob"):
        nb = nbformat.read(course / "submitted" / student / "02_ceiling" / "ceiling.ipynb", 4)
        [answers[student]] = [c.source for c in nb.cells if grade_id_of(c) == f"{new.name}_answer"]
    [test] = [
        c
        for c in nbformat.read(next((course / "solutions" / "02_ceiling").glob("*.ipynb")), 4).cells
        if grade_id_of(c) == f"{new.name}_tests"
    ]
    [(wrong, _)] = declared_mistakes(test.source).values()
    assert answers["bob"] == wrong and answers["alice"] != wrong
