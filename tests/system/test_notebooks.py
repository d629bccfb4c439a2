"""The notebooks as source code: what they quote, what they store, what they grade.

nbval (`pytest --nbval`, in the README's test command) re-runs solutions/ and
compares every text output with the stored one. These tests check the rest:
numbers in the prose come out of the code, stored outputs are clean, the
student release is what nbgrader makes from solutions/ today, every unanswered
release fails its tests, and a wrong kind of answer fails with a message without
stopping the rest of the grading. (That every solution passes its own tests, hidden
ones included, nbval shows by running them, and test_grade_every_assignment.py by
grading them through the course's grading command.)
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbgrader.validator import Validator

from kvlesson.authoring import command, key_entries, stamp_places
from kvlesson.grading.course import released
from kvlesson.grading.course.key import KEYS, key_path, read_key
from support.paths import ROOT
from support.patience import HANG

SOLUTIONS = command.notebook_paths(ROOT / "solutions")
RELEASE = command.notebook_paths(ROOT / "notebooks")
NAMES = [path.parent.name for path in SOLUTIONS]
RELEASE_OF = {path: ROOT / "notebooks" / path.parent.name / path.name for path in SOLUTIONS}
PARAMETERS = ("GPU", "MODEL", "SHARE", "LONGEST", "CAP")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# A quantity in prose: a number followed by a unit ("53.9 GB", "4 blocks", "10%").
UNIT = (
    r"(?:%|GB/s|GB|GiB|MiB|MB|ms|us|s|tokens/s|tokens?|blocks?|chats?|bytes|pauses?|steps?|times)"
)
QUANTITY = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*" + UNIT + r"(?!\w)")


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def prose(nb) -> str:
    """The notebook's own text: markdown cells, less code, links and answer cells."""
    text = "\n".join(
        cell.source
        for cell in nb.cells
        if cell.cell_type == "markdown" and not nbgrader_meta(cell).get("solution")
    )
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def output_text(nb) -> str:
    """Everything the code printed or displayed as text, thousands separators removed."""
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                parts.append(output.text)
            for mime in ("text/plain", "text/markdown", "text/html"):
                parts.append(output.get("data", {}).get(mime, ""))
    return plain_number("\n".join(parts))


def plain_number(text: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_every_quantity_in_the_prose_is_an_output_of_the_notebook(path):
    nb = read(path)
    outputs = output_text(nb)
    missing = [
        m.group(0)
        for m in QUANTITY.finditer(prose(nb))
        if not re.search(r"(?<![\d.])" + re.escape(plain_number(m.group(1))) + r"(?![\d])", outputs)
    ]
    assert not missing, f"{path.name} quotes numbers that no output contains: {missing}"


def test_the_prose_check_catches_a_drifted_number():
    nb = read(SOLUTIONS[1])
    nb.cells.append(nbformat.v4.new_markdown_cell("The pool holds 411,521 tokens."))
    quoted = [m.group(1) for m in QUANTITY.finditer(prose(nb))]
    assert "411,521" in quoted and "411521" not in output_text(nb)


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_each_notebook_has_a_parameters_cell_with_the_five_settings(path):
    cells = [cell for cell in read(path).cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(cells) == 1, "exactly one cell tagged 'parameters' (papermill)"
    assigned = set(re.findall(r"^(\w+)\s*=", cells[0].source, flags=re.M))
    assert assigned == set(PARAMETERS)


DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")
EXPLORER = re.compile(r"\b(\w+Explorer)\(")


def type_of(source: str) -> str:
    """The explorer class a cell makes."""
    return EXPLORER.search(source).group(1)


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_stored_outputs_are_clean(path):
    nb = read(path)
    assert "widgets" not in nb.metadata, "widget state must not be stored"
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"a stored error in {cell.source[:60]!r}"
            data = output.get("data", {})
            assert WIDGET_VIEW not in data, "widget views carry random model ids"
            text = "\n".join(str(v) for k, v in data.items() if k.startswith("text/"))
            text += output.get("text", "")
            text = DATA_URI.sub("data:", text)  # a picture's base64 may spell anything
            assert not re.search(r"0x[0-9a-f]{6,}", text), f"a memory address in {text[:80]!r}"
            assert not re.search(r"(/work/|/tmp/|/root/|/home/)", text), "an absolute path"


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_every_explorer_stores_a_hint_not_a_widget(path):
    explorers = [cell for cell in read(path).cells if "Explorer(" in cell.source]
    if path.parent.name == "00_start_here":
        assert not explorers
        return
    assert len(explorers) == 1
    data = [o["data"] for o in explorers[0].outputs]
    assert data and not any(WIDGET_VIEW in d for d in data), "a stored widget view"
    still = data[0]["text/plain"]
    assert (
        still.startswith(f"{type_of(explorers[0].source)}. A still of this explorer at ")
        and "Its sliders need Python running" in still
        and "<img alt=" in data[0]["text/html"]
    ), still


def test_the_five_check_yourself_questions_are_graded():
    """Questions 1..5 of the lesson, spread over notebooks 1..4: autograded or by hand."""
    ids = {
        path.parent.name: {
            nbgrader_meta(c).get("grade_id")
            for c in read(path).cells
            if nbgrader_meta(c).get("grade")
        }
        for path in SOLUTIONS
    }
    assert {"q1_pool_tests", "q1_unused_tests"} <= ids["01_floor_plan"]
    assert {"q2_answer", "q3_pool_tests", "q3_blocks_tests", "q3_starts_tests"} <= ids["02_ceiling"]
    assert {"q4_numbers_tests", "q4_why"} <= ids["03_cap_sweep"]
    assert {"q5_answer"} <= ids["04_preemption"]


HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS\n?", flags=re.S)


def clear_comparisons(source: str) -> list[str]:
    """The asserts and equality tests of a test cell, where an expected value would be written
    in clear; the key's own declarations (`declare(domain=...)`, which says which inputs an
    exercise takes, e.g. `size % tp == 0`) are not compared with any answer."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "declare":
            return
        if isinstance(node, ast.Assert) or (
            isinstance(node, ast.Compare)
            and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops)
        ):
            found.append(ast.unparse(node))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def test_a_comparison_outside_the_keys_declarations_is_found():
    cell = "declare(domain=lambda tp: tp % 2 == 0)\nselfcheck.verify([])\nassert x == 3\ny != 2"
    assert clear_comparisons(cell) == ["assert x == 3", "x == 3", "y != 2"]


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_each_test_cell_records_first_then_verifies_with_stamps(path):
    """The convention of docs/self-checks.md: hidden `selfcheck.record` of the cell's own
    grade id first, with no stamp, then the visible `selfcheck.verify`, its stamp filled by
    the build, and no expected value written in clear (no assert, no comparison)."""
    nb = read(path)
    stamps = stamp_places.stamps_of(nb)
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade") or meta.get("solution"):
            continue
        assert meta.get("locked") and meta.get("points", 0) > 0
        [hidden] = HIDDEN.findall(cell.source)
        visible = HIDDEN.sub("", cell.source)
        assert hidden.count("selfcheck.record(") == 1, meta["grade_id"]
        assert f'selfcheck.record("{meta["grade_id"]}"' in hidden, meta["grade_id"]
        assert cell.source.index("BEGIN HIDDEN") < cell.source.index("selfcheck.verify(")
        assert visible.count("selfcheck.verify(") == 1, meta["grade_id"]
        assert 'stamp=""' not in cell.source, f"{meta['grade_id']}: run the build to stamp it"
        for name in stamp_places.stamp_names(cell.source):  # named, loaded by the setup cell
            assert name in stamps and set(stamps[name]) == {"setting", "probes", "hints"}, name
        # the hidden test carries no hash: nothing in the grading kernel reveals an answer
        assert "stamp=" not in hidden and "hash" not in hidden, meta["grade_id"]
        assert clear_comparisons(cell.source) == [], meta["grade_id"]


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_the_key_matches_what_the_hidden_tests_printed(path):
    """keys/<assignment>.json holds what the instructor's hidden tests printed when the
    build ran them (not stale): values, their normal forms, points, forbidden functions."""
    key = read_key(key_path(ROOT, path.parent.name))
    assert key_entries.stamp_problems(read(path), key) == [], "the key is stale: run kvlesson build"


def test_the_stale_key_check_catches_a_changed_answer():
    path = SOLUTIONS[1]
    key = read_key(key_path(ROOT, path.parent.name))
    first = next(iter(key["exercises"].values()))
    first["probes"][0]["normal"] += "1"
    assert key_entries.stamp_problems(read(path), key)


def test_no_key_is_released_or_kept_with_the_solutions():
    """nbgrader copies every file of solutions/<assignment>/ into the release."""
    for folder in ("solutions", "notebooks"):
        assert not list((ROOT / folder).rglob("*.json")), f"a JSON file in {folder}/"
    assert sorted(p.stem for p in (ROOT / KEYS).glob("*.json")) == NAMES


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_every_answer_cell_is_followed_by_its_self_check(path):
    cells = read(path).cells
    for i, cell in enumerate(cells):
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            after = nbgrader_meta(cells[i + 1])
            assert after.get("grade") and not after.get("solution"), meta["grade_id"]


@pytest.fixture(scope="module")
def fresh_release(tmp_path_factory) -> Path:
    """The student release as nbgrader makes it today, in a copy of the course."""
    root = command.copy_course(tmp_path_factory.mktemp("course"))
    command.release(root)
    return root / "notebooks"


def comparable(nb) -> list[tuple]:
    return [
        (c.cell_type, c.source, c.metadata.get("nbgrader"), c.metadata.get("tags"))
        for c in nb.cells
    ]


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_the_release_is_regenerated_from_the_solutions(path, fresh_release):
    committed = ROOT / "notebooks" / path.parent.name / path.name
    assert committed.exists(), f"{committed} is missing: run kvlesson build"
    assert comparable(read(committed)) == comparable(
        read(fresh_release / path.parent.name / path.name)
    ), f"notebooks/ is stale for {path.parent.name}: run kvlesson build"


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_autograde_knows_each_locked_cells_released_form(path):
    """kvlesson/grading/course/released.py silences autograde's "has changed" warning for a
    locked cell only when it is exactly its released form: that form must be what the
    release holds."""
    given = {nbgrader_meta(c).get("grade_id"): c.source for c in read(RELEASE_OF[path]).cells}
    for cell in read(path).cells:
        meta = nbgrader_meta(cell)
        if meta.get("locked"):
            assert released.released(cell.source) == given[meta["grade_id"]], meta["grade_id"]


def test_the_release_has_exactly_the_solutions_assignments():
    assert [p.parent.name for p in RELEASE] == NAMES


def validate(path: Path) -> dict:
    """nbgrader's own check, what the Validate button runs: {} means every test passed.
    (The `nbgrader validate` command exits 0 even on failure, so it is not used here.)"""
    return Validator().validate(str(path))


@pytest.mark.parametrize("path", RELEASE, ids=NAMES)
def test_every_unanswered_release_fails_its_tests(path):
    result = validate(path)
    if not command.has_exercises(path.parent.name):  # a reading page: it must simply run
        assert result == {}, f"{path}, a page without exercises, fails: {result}"
        return
    assert result.get("failed"), f"{path} passes unanswered: its tests check nothing"


def answered_release(name: str) -> nbformat.NotebookNode:
    """A released notebook with every answer cell replaced by the instructor's solution."""
    [source] = (ROOT / "solutions" / name).glob("*.ipynb")
    return command.answered(read(ROOT / "notebooks" / name / source.name), read(source))


def graded_with_q1(answer: str) -> dict[str, list]:
    """Notebook 1 answered right, then `answer` appended to Question 1's cell, executed like
    nbgrader's autograder (an error does not stop the run); the outputs by grade id."""
    nb = answered_release("01_floor_plan")
    q1 = next(c for c in nb.cells if nbgrader_meta(c).get("grade_id") == "q1_answer")
    q1.source += "\n" + answer
    NotebookClient(
        nb,
        timeout=HANG,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(ROOT / "notebooks" / "01_floor_plan")}},
    ).execute()
    return {
        nbgrader_meta(c)["grade_id"]: c.outputs
        for c in nb.cells
        if nbgrader_meta(c).get("grade_id")
    }


def errors(outputs) -> list:
    return [o for o in outputs if o.output_type == "error"]


def test_a_string_answer_fails_with_a_message_and_the_rest_still_grades():
    outputs = graded_with_q1('pool_gb = "53.9 GB"')
    [error] = errors(outputs["q1_pool_tests"])
    assert error.ename == "WrongKind"
    assert error.evalue.startswith("Not yet: pool_gb should be a number of GB")
    assert "without quotes or units" in error.evalue
    for grade_id in ("ex1_1_tests", "ex1_2_tests", "q1_unused_tests"):
        assert not errors(outputs[grade_id]), grade_id
        assert "Self-check passed." in "".join(o.get("text", "") for o in outputs[grade_id])


def test_a_wrong_number_fails_the_self_check_without_giving_the_answer():
    outputs = graded_with_q1("pool_gb = 50.2")
    [error] = errors(outputs["q1_pool_tests"])
    assert error.ename == "NotYet" and error.evalue.startswith("Not yet: pool_gb")
    key = json.loads((ROOT / "keys" / "01_floor_plan.json").read_text())
    right = key["exercises"]["q1_pool_tests"]["probes"][0]["normal"].split(":")[1]
    assert right not in error.evalue and right not in "".join(error.traceback)


def test_validate_shows_a_short_test_cell_and_the_whole_verdict(tmp_path):
    """What nbgrader's Validate dialog shows for a failed exercise: the test cell's source,
    which names its stamp and holds no salted hash, and the verdict in lines that fit the
    dialog (nbgrader cuts each line at Validator.width, 90, with an indent and "...")."""
    nb = answered_release("06_traffic")
    answer = next(c for c in nb.cells if nbgrader_meta(c).get("grade_id") == "ex6_2_answer")
    answer.source = (
        "def steps_to_read(prompt, budget, writing):\n"
        "    return -(-prompt // budget)"
    )  # the wrong answer: writing ignored
    path = tmp_path / "traffic.ipynb"
    nbformat.write(nb, path)
    result = validate(path)
    [failed] = [f for f in result["failed"] if "steps_to_read" in f["source"]]
    assert '"salt"' not in failed["source"] and '"hash"' not in failed["source"]
    assert len(failed["source"]) < 1_000, len(failed["source"])
    error = re.sub(r"<[^>]+>", "", failed["error"])
    verdict = [line for line in error.splitlines() if line.strip()]
    assert any(line.startswith("Not yet: steps_to_read(") for line in verdict), verdict
    assert all(len(line) <= Validator().width - 4 - 3 for line in verdict), verdict
