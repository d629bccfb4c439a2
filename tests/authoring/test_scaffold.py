"""`kvlesson exercise`: a new exercise's three cells with nbgrader's metadata right, where the
instructor asks, and its wrong answers of a student's own in HAND; a clear refusal, and
nothing written, for a taken name, an unknown notebook or a place between an answer and its
test (the walk of 2026-12-07 wrote the cells with an nbformat script: no doc said how).

Always on a copy of the course in tmp_path, never on the repository's own notebooks."""

from __future__ import annotations

import ast
import shutil
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from kvlesson.authoring import command, hand_table, probe_search
from kvlesson.authoring.exercise_cells import NewExercise
from kvlesson.authoring.kernel import top_level_names
from kvlesson.authoring.scaffold import add_exercise, next_free
from kvlesson.grading.course.notebooks import grade_id_of, is_answer_cell, is_test_cell, meta
from support.paths import ROOT


@pytest.fixture
def course(tmp_path) -> Path:
    """A copy of the course (02_ceiling, a reading page) with its HAND table."""
    root = command.copy_course(tmp_path / "course", ["02_ceiling", "07_wrap_up"])
    (root / hand_table.TABLE).parent.mkdir(parents=True)
    shutil.copy(ROOT / hand_table.TABLE, root / hand_table.TABLE)
    return root


def fresh(course: Path, name: str = "02_ceiling") -> NewExercise:
    """The example under a name and a function the notebook does not have yet (whatever
    exercises the repository has gained since these tests were written)."""
    [path] = (course / "solutions" / name).glob("*.ipynb")
    return next_free(nbformat.read(path, as_version=4), name)


def cells_of(root: Path, name: str = "02_ceiling") -> list:
    [path] = (root / "solutions" / name).glob("*.ipynb")
    return nbformat.read(path, as_version=4).cells


def ids(cells) -> list[str | None]:
    return [grade_id_of(c) for c in cells]


def test_three_cells_with_the_metadata_of_the_courses_exercises(course):
    new = replace(fresh(course), points=2)
    added = add_exercise(course, "02_ceiling", new, after="ex2_2")
    cells = cells_of(course)
    question, answer, test = cells[added.index : added.index + 3]
    assert ids(cells)[added.index - 1] == "ex2_2_tests"  # right after Exercise 2.2
    assert question.cell_type == "markdown"
    number = new.name.removeprefix("ex2_")
    assert question.source.startswith(f"## Exercise 2.{number}: the cache of one chat\n")
    assert meta(answer) == {
        "grade": False,
        "grade_id": f"{new.name}_answer",
        "locked": False,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    assert meta(test) == {
        "grade": True,
        "grade_id": f"{new.name}_tests",
        "locked": True,
        "points": 2,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    assert is_answer_cell(answer) and is_test_cell(test)
    nbformat.validate(nbformat.v4.new_notebook(cells=cells))


def test_the_cells_are_written_as_the_build_reads_them(course):
    """Solution markers, the hidden part first with one record of the cell's own id, then a
    self-check to stamp; probes the build's search can read, declared mistakes written out,
    the same forbidden functions on both sides, and the function the question names."""
    new = fresh(course)
    add_exercise(course, "02_ceiling", new)
    [answer] = [c for c in cells_of(course) if grade_id_of(c) == f"{new.name}_answer"]
    [test] = [c for c in cells_of(course) if grade_id_of(c) == f"{new.name}_tests"]
    assert "### BEGIN SOLUTION" in answer.source and "### END SOLUTION" in answer.source
    assert top_level_names(answer.source) == [new.function]
    hidden, visible = test.source.split("### END HIDDEN TESTS")
    assert "### BEGIN HIDDEN TESTS" in hidden
    assert hidden.count(f'selfcheck.record("{new.name}_tests"') == 1
    assert 'stamp=""' in visible and "selfcheck.verify(" in visible
    found = probe_search.Probes.of(test.source).found
    assert {p.function for p in found} == {new.function}
    assert {p.side for p in found} == {"verify", "record"}
    for name, (code, hint) in probe_search.declared_mistakes(test.source).items():
        assert top_level_names(code) == [new.function] and hint.endswith(".")
    forbidden = [
        ast.literal_eval(k.value)
        for node in ast.walk(ast.parse(test.source))
        if isinstance(node, ast.Call)
        for k in node.keywords
        if k.arg == "forbidden"
    ]
    assert forbidden == [("blocks_for",), ("blocks_for",)]


def test_its_wrong_answers_of_a_students_own_go_into_hand(course):
    new = fresh(course)
    added = add_exercise(course, "02_ceiling", new)
    assert added.hand == course / hand_table.TABLE
    tree = ast.parse(added.hand.read_text())
    table = hand_table.table_of(tree)
    entries = dict(zip((ast.literal_eval(k) for k in table.keys), table.values))
    written = ast.literal_eval(entries[f"{new.name}_tests"])
    assert len(written) == 3
    for label, code, expect in written:
        assert top_level_names(code) == [new.function], label  # answers to this exercise
        assert expect is None or isinstance(expect, str)
    assert list(entries)[-1] == f"{new.name}_tests"  # at the end, the others as they were
    before = ast.parse((ROOT / hand_table.TABLE).read_text())
    assert len(table.keys) == len(hand_table.table_of(before).keys) + 1


def test_by_default_after_the_last_graded_cell(course):
    last = [g for g in ids(cells_of(course)) if g][-1]
    new = fresh(course)
    add_exercise(course, "02_ceiling", new)
    graded = [g for g in ids(cells_of(course)) if g]
    assert graded[-3:] == [last, f"{new.name}_answer", f"{new.name}_tests"]


def test_a_reading_page_gets_the_self_checks_import_and_the_cells_at_its_end(course):
    new = fresh(course, "07_wrap_up")
    add_exercise(course, "07_wrap_up", new)
    cells = cells_of(course, "07_wrap_up")
    assert ids(cells)[-2:] == [f"{new.name}_answer", f"{new.name}_tests"]
    setup = next(c for c in cells if "import kvlesson as kv" in c.source)
    lines = setup.source.splitlines()
    assert lines[lines.index("import kvlesson as kv") + 1] == (
        "from kvlesson.grading.checks import selfcheck"
    )


def unchanged(course: Path):
    """What a refusal must leave as it was: the notebook and HAND, byte for byte."""
    [path] = (course / "solutions" / "02_ceiling").glob("*.ipynb")
    return path.read_bytes(), (course / hand_table.TABLE).read_bytes()


@pytest.mark.parametrize(
    "assignment, change, after, said",
    [
        ("02_ceiling", {"name": "ex2_2"}, None, "name ex2_2 is taken: the notebook has"),
        ("02_ceiling", {"name": "q3_pool"}, None, "name q3_pool is taken"),
        ("02_cieling", {}, None, "no assignment 02_cieling .* 02_ceiling"),
        ("02_ceiling", {}, "ex2_2_answer", "an answer cell.*ex2_2_tests"),
        ("02_ceiling", {}, "ex9_99", "no graded cell of that name.*ex2_1"),
        ("02_ceiling", {"name": "Ex 2.3"}, None, "short lower-case name such as ex2_3"),
        ("02_ceiling", {"name": "ex2_3_tests"}, None, "short lower-case name"),
        ("02_ceiling", {"function": "chat_blocks"}, None, "chat_blocks is already"),
        ("02_ceiling", {"function": "2fast"}, None, "function must be a Python name"),
        ("02_ceiling", {"points": 0}, None, "points must be a number more"),
        ("02_ceiling", {"points": float("inf")}, None, "points must be"),
        ("02_ceiling", {"points": float("nan")}, None, "points must be"),
    ],
)
def test_a_refusal_says_why_and_writes_nothing(course, assignment, change, after, said):
    before = unchanged(course)
    with pytest.raises(ValueError, match=said):
        add_exercise(course, assignment, replace(fresh(course), **change), after)
    assert unchanged(course) == before


def test_an_exercise_hand_already_holds_is_refused_and_nothing_written(course):
    table, new = course / hand_table.TABLE, fresh(course)
    table.write_text(hand_table.with_entry(table.read_text(), f"{new.name}_tests", new.hand()))
    before = unchanged(course)
    with pytest.raises(ValueError, match=f"has {new.name}_tests already"):
        add_exercise(course, "02_ceiling", new)
    assert unchanged(course) == before


def test_a_course_without_the_tests_gets_the_cells_alone(course):
    shutil.rmtree(course / "tests")
    new = fresh(course)
    added = add_exercise(course, "02_ceiling", new)
    assert added.hand is None and f"{new.name}_tests" in ids(cells_of(course))


def test_the_last_entry_gets_its_comma_and_a_table_not_closed_on_its_own_line_is_refused():
    text = 'HAND = {\n    "a": [\n        ("x", "y", None)\n    ]\n}\n'
    written = hand_table.with_entry(text, "b_tests", [("l", "code\nmore", None)])
    table = hand_table.table_of(ast.parse(written))
    assert [ast.literal_eval(k) for k in table.keys] == ["a", "b_tests"]
    assert ast.literal_eval(table.values[1]) == [("l", "code\nmore", None)]
    with pytest.raises(ValueError, match="does not end with a line of its own"):
        hand_table.with_entry('HAND = {"a": []}\n', "b_tests", [])
    with pytest.raises(ValueError, match="has no HAND"):
        hand_table.with_entry("OTHER = {}\n", "b_tests", [])


def test_the_next_free_name_follows_the_notebooks_last_and_its_function_is_free(course):
    numbers = [int(g.split("_")[1]) for g in ids(cells_of(course)) if g and g.startswith("ex2_")]
    first = fresh(course)
    assert first.name == f"ex2_{max(numbers) + 1}"
    add_exercise(course, "02_ceiling", first)
    second = fresh(course)
    assert second.name == f"ex2_{max(numbers) + 2}" and second.function != first.function
    assert fresh(course, "07_wrap_up").name == "ex7_1"  # a page without exercises
