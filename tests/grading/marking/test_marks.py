"""The grade outside the kernel: record lines against the key, flags, the reading of cells.

`kvlesson.grading.marking` reads what an autograded notebook printed and compares it with
`keys/<assignment>.json`: exact types, no record or two, a broken or oversized one, a
failed cell with right values, a forbidden call (under any alias, at any depth), every
cell the student wrote read as code for tampering (`kvlesson.grading.marking.cell_scan`), and the
course's cells kept in order. The last tests execute notebook 1 with the hidden tests put
back, as autograde does, and mark it.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kvlesson.authoring import command
from kvlesson.grading.checks import probes
from kvlesson.grading.checks.records import RECORD_LIMIT
from kvlesson.grading.course import notebooks
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.course.results import LOOK, TAMPERING
from kvlesson.grading.marking import cell_roles, cell_scan, marks
from support.paths import ROOT
from support.patience import HANG

NAMES = command.assignments(ROOT)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize(
    ("value", "kind", "normal"),
    [
        (205, "count", "int:205"),
        (True, "yes_no", "bool:True"),
        (None, "count_or_none", "none"),
        (53.94, "number", "num:53.9"),
        (-0.01, "number", "num:0.0"),
        (8, "number", "num:8.0"),
    ],
)
def test_an_answer_of_the_right_kind_has_one_normal_form(value, kind, normal):
    probe = probes.Probe("x", lambda: value, kind, "GB", 1)
    assert probes.normal(probe, probes.decode(probes.encode(value))) == normal


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (205.0, "count"),
        ("205", "count"),
        (True, "count"),
        (1, "yes_no"),
        ("53.9 GB", "number"),
        (None, "number"),
    ],
)
def test_an_answer_of_the_wrong_kind_is_refused_with_not_yet(value, kind):
    with pytest.raises(probes.WrongKind, match="^Not yet: x"):
        probes.normal(
            probes.Probe("x", lambda: value, kind, "GB", 1), probes.decode(probes.encode(value))
        )


def test_the_encoding_keeps_types_apart():
    kinds = [probes.encode(v)["t"] for v in (1, 1.0, True, None, "1", [1])]
    assert kinds == ["int", "float", "bool", "none", "str", "other"]


def ex1_1() -> tuple[nbformat.NotebookNode, dict]:
    """The released notebook 1 answered right, and its key."""
    [path] = (ROOT / "solutions" / "01_floor_plan").glob("*.ipynb")
    release = read(ROOT / "notebooks" / "01_floor_plan" / path.name)
    return (command.answered(release, read(path)), read_key(key_path(ROOT, "01_floor_plan")))


def graded_cell(grade_id: str, printed: list[str], failed: bool = False):
    cell = nbformat.v4.new_code_cell(
        "", metadata={"nbgrader": {"grade_id": grade_id, "grade": True}}
    )
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="\n".join(printed))]
    if failed:
        cell.outputs.append(
            nbformat.v4.new_output("error", ename="NotYet", evalue="Not yet:", traceback=[])
        )
    return cell


def record_line(grade_id: str, values: list, calls: list[str] = ()) -> str:
    return "KVLESSON-MARK " + json.dumps({"id": grade_id, "values": values, "calls": list(calls)})


def right_values(exercise: dict) -> list:
    return [probe["expected"] for probe in exercise["probes"]]


def test_a_record_is_marked_against_the_key_with_exact_types():
    _, key = ex1_1()
    exercise = key["exercises"]["ex1_2_tests"]
    right = right_values(exercise)
    assert (
        marks.mark_cell(
            graded_cell("ex1_2_tests", [record_line("ex1_2_tests", right)]), exercise, None
        ).score
        == exercise["points"]
    )
    as_floats = [{"t": "float", "v": float(v["v"])} for v in right]
    assert (
        marks.mark_cell(
            graded_cell("ex1_2_tests", [record_line("ex1_2_tests", as_floats)]), exercise, None
        ).score
        == 0
    )


def test_no_record_two_records_and_a_failed_cell_with_right_values_are_flagged():
    _, key = ex1_1()
    exercise = key["exercises"]["ex1_2_tests"]
    line = record_line("ex1_2_tests", right_values(exercise))
    none = marks.mark_cell(graded_cell("ex1_2_tests", ["Self-check passed."]), exercise, None)
    two = marks.mark_cell(graded_cell("ex1_2_tests", [line, line]), exercise, None)
    odd = marks.mark_cell(graded_cell("ex1_2_tests", [line], failed=True), exercise, None)
    assert (
        none.score == two.score == 0 and "no record" in none.flags[0] and "2 record" in two.flags[0]
    )
    assert odd.score == exercise["points"] and "cell failed" in odd.flags[0]


def test_a_forbidden_call_scores_zero_with_the_reason():
    _, key = ex1_1()
    exercise = key["exercises"]["ex1_1_tests"]
    line = record_line(
        "ex1_1_tests", right_values(exercise), ["kvlesson.memory.floor.memory_parts"]
    )
    mark = marks.mark_cell(graded_cell("ex1_1_tests", [line]), exercise, None)
    assert mark.score == 0 and "calls memory_parts" in mark.flags[0]
    assert "work it out without memory_parts" in mark.flags[0]


CHEATS = {  # code in a cell of the student's: what the reading finds, and what it costs
    "rebinds a check": (
        "import kvlesson.grading.checks.selfcheck\nkvlesson.grading.checks.selfcheck.verify = print",
        TAMPERING,
    ),
    "fakes sha1": ("import hashlib\nhashlib.sha1 = lambda *a: None", TAMPERING),
    "builtins": ("import builtins\nbuiltins.abs = lambda x: 0", TAMPERING),
    "a transformer": (
        "get_ipython().input_transformers_post.append(lambda lines: lines)",
        TAMPERING,
    ),
    "a shell line": ("!cp ../../solutions/*/*.ipynb .", TAMPERING),
    "a magic that runs code": ("%run other.py", TAMPERING),
    "a cell magic that writes a file": ("%%writefile helper.py\nx = 1", TAMPERING),
    "the trace function": ("import sys\nsys.settrace(None)", TAMPERING),
    "frames": ("f = (lambda: 0).__code__", TAMPERING),
    "exits": ("import os\nos._exit(0)", LOOK),
    "reflection": ("getattr(kv, 'memory' + '_parts')", LOOK),
    "attrgetter": ("import operator\noperator.attrgetter('memory_parts')(kv)", LOOK),
    "dunder": ("x = ().__class__.__base__", LOOK),
    "rebinds kv": ("kv = None", TAMPERING),
    "assigns to kv": ("kv.blocks_for = lambda n: 1", TAMPERING),
}


@pytest.mark.parametrize("cheat", CHEATS)
def test_the_reading_finds_each_cheat_and_what_it_costs(cheat):
    source, kind = CHEATS[cheat]
    found = cell_scan.scan(source, {"kv", "selfcheck"})
    assert found and kind in {f.kind for f in found}, (cheat, found)


@pytest.mark.parametrize(
    "harmless",
    [
        "%matplotlib inline\nx = 1",
        "%time y = 2 * 3",
        "import math\nx = math.ceil(2.5)",
        "from kvlesson.lesson import charts",
        "help(kv.room)",
        "print(f'{x:,}')",
    ],
)
def test_the_reading_finds_nothing_to_flag_in_plain_code(harmless):
    assert (
        cell_scan.scan(harmless, {"kv", "selfcheck"}, {"kvlesson.lesson", "kvlesson.grading"}) == []
    )


@pytest.mark.parametrize("name", NAMES)
def test_the_reading_finds_nothing_in_the_instructors_answers(name):
    [path] = (ROOT / "solutions" / name).glob("*.ipynb")
    nb = read(path)
    course = cell_roles.CourseCells.of(nb)
    found = [
        f
        for cell in nb.cells
        if notebooks.is_answer_cell(cell)
        for f in cell_scan.scan(
            notebooks.answer_code(cell.source), set(course.names), course.modules
        )
    ]
    assert found == []


def test_a_broken_huge_or_odd_record_line_belongs_to_no_exercise():
    _, key = ex1_1()
    exercise = key["exercises"]["ex1_2_tests"]
    right = right_values(exercise)
    lines = [
        "KVLESSON-MARK {not json",
        "KVLESSON-MARK [1, 2]",
        record_line("ex1_2_tests", right) + " " * RECORD_LIMIT,
        "KVLESSON-MARK " + "[" * 100_000 + "]" * 100_000,
        "KVLESSON-MARK " + json.dumps({"id": "ex1_2_tests", "values": "all"}),
    ]
    for line in lines:
        mark = marks.mark_cell(graded_cell("ex1_2_tests", [line]), exercise, None)
        assert mark.score == 0 and mark.flags, line[:40]


def autograded(answers: dict[str, str], extra: list[str] = ()) -> marks.NotebookMark:
    """Notebook 1 answered right but for `answers` (grade id: code), with the hidden tests
    put back as autograde does and cells of the student's `extra` code added at the top,
    executed; its marks, made outside the kernel."""
    nb, key = ex1_1()
    [path] = (ROOT / "solutions" / "01_floor_plan").glob("*.ipynb")
    instructor = read(path)
    tests = {
        notebooks.meta(c)["grade_id"]: c.source
        for c in instructor.cells
        if notebooks.is_test_cell(c)
    }
    for cell in nb.cells:
        grade_id = notebooks.meta(cell).get("grade_id")
        cell.source = answers.get(grade_id, tests.get(grade_id, cell.source))
    setup = next(i for i, c in enumerate(nb.cells) if "import kvlesson" in c.source)
    for n, code in enumerate(extra):
        nb.cells.insert(setup + 1 + n, nbformat.v4.new_code_cell(code))
    NotebookClient(
        nb,
        timeout=HANG,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(ROOT / "notebooks" / "01_floor_plan")}},
    ).execute()
    return marks.mark_notebook(nb, key, instructor)


@pytest.mark.process
def test_an_honest_notebook_gets_every_point_and_no_flag():
    marked = autograded({})
    assert [m.flags for m in marked.marks if m.flags] == [] and marked.flags == ()
    assert all(m.score == m.points for m in marked.marks), marked
    assert not marked.tampered


@pytest.mark.process
def test_package_calls_through_an_alias_in_a_variable_or_another_cell_score_zero():
    marked = autograded(
        {
            "ex1_1_answer": "from kvlesson.memory.floor import memory_parts as mp\n"
            "def pool_bytes(share):\n    return mp(share, gpu, model).pool_bytes",
            "q1_answer": "pool_gb = _p.pool_bytes / 1e9\nunused_gb = 8.0",
        },
        extra=["_p = kv.room(SHARE, LONGEST, gpu=gpu, model=model).parts"],
    )
    marks = {m.grade_id: m for m in marked.marks}
    assert marks["ex1_1_tests"].score == 0
    assert any("memory_parts" in f for f in marks["ex1_1_tests"].flags)
    assert marks["q1_pool_tests"].score == 0 and marks["q1_unused_tests"].score == 0
    assert any("room" in f for f in marks["q1_pool_tests"].flags), marks["q1_pool_tests"].flags
    assert marks["ex1_2_tests"].score == marks["ex1_2_tests"].points


@pytest.mark.process
def test_a_package_function_that_calls_the_forbidden_one_scores_zero():
    marked = autograded(
        {
            "q1_answer": "pool_gb = kv.startup(gpu, model, SHARE, LONGEST, "
            "kv.RESERVE_BYTES).parts.pool_bytes / 1e9\n"
            "unused_gb = (gpu.memory_bytes * (100 - SHARE) / 100) / 1e9"
        }
    )
    marks = {m.grade_id: m for m in marked.marks}
    assert marks["q1_pool_tests"].score == 0, marks["q1_pool_tests"]
    assert any("memory_parts" in f for f in marks["q1_pool_tests"].flags)


def test_moving_the_course_s_cell_above_a_test_scores_zero():
    """The answer reads `parts`, which the course's own cell works out with memory_parts
    below the question; moving that cell above the test is not working it out."""
    nb, key = ex1_1()
    [path] = (ROOT / "solutions" / "01_floor_plan").glob("*.ipynb")
    instructor = read(path)
    ids = [c.get("id") for c in nb.cells]
    parts = next(
        i for i, c in enumerate(nb.cells) if c.source.startswith("parts = kv.memory_parts")
    )
    moved = nb.cells.pop(parts)
    nb.cells.insert(
        ids.index(
            next(c.get("id") for c in nb.cells if notebooks.meta(c).get("grade_id") == "q1_answer")
        ),
        moved,
    )
    marked = marks.mark_notebook(nb, key, instructor)
    by_id = {m.grade_id: m for m in marked.marks}
    assert by_id["q1_pool_tests"].score == 0
    assert any("moved" in f for f in by_id["q1_pool_tests"].flags)
