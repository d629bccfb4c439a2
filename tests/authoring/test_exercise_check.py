"""`kvlesson check`: the tests of one exercise and of its notebook, none of the others; built
first only when the notebook changed since its build; each outcome in words, a failure as its
message (what to change), not pytest's explanation of an assert."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace

import nbformat
import pytest

from kvlesson.authoring import build, command, exercise_check
from kvlesson.authoring.scaffold import add_exercise, next_free
from kvlesson.grading.course.key import key_path


@dataclass
class Item:
    """What the plugin reads of a collected test."""

    originalname: str
    id: str | None
    callspec: object = field(init=False)

    def __post_init__(self):
        self.callspec = SimpleNamespace(id=self.id) if self.id else None


class Config:
    def __init__(self, chosen: str | None):
        self.chosen, self.deselected = chosen, []
        self.hook = SimpleNamespace(pytest_deselected=lambda items: self.deselected.extend(items))

    def getoption(self, name: str):
        return self.chosen


ITEMS = [
    Item("test_the_self_checks_reject_what_the_grade_rejects", "ex2_3_tests"),
    Item("test_the_self_checks_reject_what_the_grade_rejects", "ex2_1_tests"),
    Item("test_every_notebook_names_some_mistake", "02_ceiling"),  # every exercise: not this
    Item("test_every_quantity_in_the_prose_is_an_output_of_the_notebook", "02_ceiling"),
    Item("test_every_quantity_in_the_prose_is_an_output_of_the_notebook", "01_floor_plan"),
    Item("test_the_release_is_regenerated_from_the_solutions", "02_ceiling"),
    Item("test_the_prose_check_catches_a_drifted_number", None),
    Item("test_no_answer_is_in_view_of_its_question", "ex2_3_tests"),
]


def test_only_the_exercises_tests_and_its_notebooks_are_kept():
    items, config = list(ITEMS), Config("02_ceiling/ex2_3")
    exercise_check.pytest_collection_modifyitems(config, items)
    assert items == [ITEMS[0], ITEMS[3], ITEMS[7]]
    assert len(config.deselected) == len(ITEMS) - 3


def test_without_the_option_the_plugin_keeps_everything():
    items = list(ITEMS)
    exercise_check.pytest_collection_modifyitems(Config(None), items)
    assert items == ITEMS


@pytest.mark.parametrize(
    "chosen, found",
    [
        ("02_ceiling/ex2_3", ("02_ceiling", "ex2_3_tests")),
        ("02_ceiling/ex2_3_tests", ("02_ceiling", "ex2_3_tests")),
    ],
)
def test_an_exercise_is_named_by_its_assignment_and_name(chosen, found):
    assert exercise_check.tests_id(chosen) == found


@pytest.mark.parametrize("chosen", ["ex2_3", "02_ceiling/", "/ex2_3"])
def test_a_half_named_exercise_is_refused(chosen):
    with pytest.raises(ValueError, match="ASSIGNMENT/NAME, such as 02_ceiling/ex2_3"):
        exercise_check.tests_id(chosen)


def row(outcome: str, why: str = "", printed: str = "", when: str = "call") -> dict:
    test = "tests/authoring/test_selfchecks.py::test_each_exercise_has_wrong_answers[ex2_3_tests]"
    return {"test": test, "outcome": outcome, "when": when, "why": why, "printed": printed}


def test_a_failure_is_its_message_without_pytests_explanation():
    said = exercise_check.outcome_of(
        row(
            "failed",
            "AssertionError: ex2_3_tests: only 0 hand-written answers: add at least 3 to\n"
            "HAND['ex2_3_tests'] in tests/authoring/test_selfchecks.py\n"
            "assert 0 >= 3\n +  where 0 = len([])",
        )
    )
    assert said == exercise_check.Outcome(
        "each exercise has wrong answers",
        False,
        "ex2_3_tests: only 0 hand-written answers: add at least 3 to "
        "HAND['ex2_3_tests'] in tests/authoring/test_selfchecks.py",
    )
    fixture = exercise_check.outcome_of(row("failed", "Failed: build first", when="setup"))
    assert fixture.what.endswith("(setup)") and fixture.said == "build first"


def test_a_pass_says_what_it_printed_about_the_exercise():
    printed = "\nex2_3_tests: 21 wrong variants (3 by hand), 0 lies, 0 blind\n  equivalent: x\n"
    passed = exercise_check.outcome_of(row("passed", printed=printed), "ex2_3_tests")
    assert (
        passed.passed
        and passed.said == "ex2_3_tests: 21 wrong variants (3 by hand), 0 lies, 0 blind"
    )


@pytest.fixture
def course(tmp_path):
    return command.copy_course(tmp_path / "course", ["02_ceiling"])


def test_an_exercise_the_notebook_lacks_is_named_with_the_ones_it_has(course):
    with pytest.raises(ValueError, match=r"no exercise ex9_99 .*are ex2_1, ex2_2, "):
        exercise_check.exercise_in(course, "02_ceiling", "ex9_99")
    assert exercise_check.exercise_in(course, "02_ceiling", "ex2_1") == "ex2_1_tests"


def test_a_notebook_is_built_again_only_when_it_changed(course, monkeypatch):
    built = []
    monkeypatch.setattr(exercise_check, "build", lambda root, names: built.append(names))
    [path] = (course / "solutions" / "02_ceiling").glob("*.ipynb")
    key = json.loads(key_path(course, "02_ceiling").read_text())
    key["built_from"] = build.source_digest(nbformat.read(path, as_version=4))
    key_path(course, "02_ceiling").write_text(json.dumps(key))
    nb = nbformat.read(path, as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs, code.execution_count = [], None  # run again, or saved by JupyterLab:
    code.metadata["execution"] = {"iopub.status.idle": "2026-12-07T10:00:00Z"}  # no change
    nbformat.write(nb, path)
    assert not exercise_check.built_afresh(course, "02_ceiling") and built == []
    add_exercise(course, "02_ceiling", next_free(nb, "02_ceiling"))
    assert exercise_check.built_afresh(course, "02_ceiling") and built == [["02_ceiling"]]


BUILD_SAYS = """executing solutions/02_ceiling/ceiling.ipynb
02_ceiling/ex2_1_tests: added 0 self-check probe(s) and 0 hidden
  hint: a part left over still counts as a whole one: round up, not down.
02_ceiling/ex2_3_tests: added 1 self-check probe(s) and 1 hidden
  self-check: slice_chats(1505)
  hint: a factor is missing: an input of the product is left out.
02_ceiling/ex2_30_tests: added 0 self-check probe(s) and 0 hidden
  hint: not this one's
releasing with nbgrader
"""


def test_the_check_shows_what_the_build_said_about_its_exercise_and_keeps_the_rest(
    course, monkeypatch, capsys
):
    """An instructor reads the check's lines, not some 1,600 words of the build's log about
    the notebook's other exercises (a walk of docs/first-exercise.md); the whole log is
    kept, and shown in part when the build stops."""
    monkeypatch.setattr(exercise_check, "build", lambda root, names: print(BUILD_SAYS, end=""))
    [path] = (course / "solutions" / "02_ceiling").glob("*.ipynb")
    add_exercise(course, "02_ceiling", next_free(nbformat.read(path, as_version=4), "02_ceiling"))
    assert exercise_check.built_afresh(course, "02_ceiling", "ex2_3_tests")
    shown = capsys.readouterr().out
    assert "02_ceiling/ex2_3_tests: added 1 self-check probe(s) and 1 hidden" in shown
    assert "  self-check: slice_chats(1505)" in shown
    assert "ex2_1_tests" not in shown and "not this one's" not in shown
    assert (course / exercise_check.BUILD_LOG).read_text() == BUILD_SAYS

    def stops(root, names):
        print("02_ceiling/ex2_3_tests: the answer cell raised NameError")
        raise RuntimeError("the build stopped")

    monkeypatch.setattr(exercise_check, "build", stops)
    nb = nbformat.read(path, as_version=4)
    nb.cells[-1].source += "\n# changed again"
    nbformat.write(nb, path)
    with pytest.raises(RuntimeError, match="the build stopped"):
        exercise_check.built_afresh(course, "02_ceiling", "ex2_3_tests")
    assert "the answer cell raised NameError" in capsys.readouterr().out


def test_the_checks_without_pytest_say_how_to_install_it(course, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pytest", None)
    with pytest.raises(RuntimeError, match=r'pip install -e "\.\[author\]" -c constraints.txt'):
        exercise_check.exercise_tests(course, "02_ceiling", "ex2_1_tests")


def test_a_course_without_the_tests_is_told_where_the_checks_are(course):
    with pytest.raises(RuntimeError, match="lacks tests/authoring/test_selfchecks.py.*a clone of"):
        exercise_check.exercise_tests(course, "02_ceiling", "ex2_1_tests")
