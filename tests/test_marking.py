"""The grade outside the kernel: record lines against the key, flags, the static scan.

`kvlesson.grading.marking` reads what an autograded notebook printed and compares it with
`keys/<assignment>.json`: exact types, no record or two, a failed cell with right
values, a forbidden call (under any alias), and the answer cells read as code for
tampering. The last tests execute notebook 1 with the hidden tests put back, as
autograde does, and mark it.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kvlesson.grading import course_build, marking, probes, stamping

ROOT = Path(__file__).resolve().parents[1]
NAMES = course_build.assignments(ROOT)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize(("value", "kind", "normal"), [
    (205, "count", "int:205"), (True, "yes_no", "bool:True"), (None, "count_or_none", "none"),
    (53.94, "number", "num:53.9"), (-0.01, "number", "num:0.0"), (8, "number", "num:8.0"),
])
def test_an_answer_of_the_right_kind_has_one_normal_form(value, kind, normal):
    probe = probes.Probe("x", lambda: value, kind, "GB", 1)
    assert probes.normal(probe, probes.decode(probes.encode(value))) == normal


@pytest.mark.parametrize(("value", "kind"), [
    (205.0, "count"), ("205", "count"), (True, "count"), (1, "yes_no"), ("53.9 GB", "number"),
    (None, "number"),
])
def test_an_answer_of_the_wrong_kind_is_refused_with_not_yet(value, kind):
    with pytest.raises(probes.WrongKind, match="^Not yet: x"):
        probes.normal(probes.Probe("x", lambda: value, kind, "GB", 1),
                      probes.decode(probes.encode(value)))


def test_the_encoding_keeps_types_apart():
    kinds = [probes.encode(v)["t"] for v in (1, 1.0, True, None, "1", [1])]
    assert kinds == ["int", "float", "bool", "none", "str", "other"]


def ex1_1() -> tuple[nbformat.NotebookNode, dict]:
    """The released notebook 1 answered right, and its key."""
    [path] = (ROOT / "solutions" / "01_floor_plan").glob("*.ipynb")
    release = read(ROOT / "notebooks" / "01_floor_plan" / path.name)
    return (course_build.answered(release, read(path)),
            marking.read_key(marking.key_path(ROOT, "01_floor_plan")))


def graded_cell(grade_id: str, printed: list[str], failed: bool = False):
    cell = nbformat.v4.new_code_cell("", metadata={"nbgrader": {"grade_id": grade_id,
                                                                "grade": True}})
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="\n".join(printed))]
    if failed:
        cell.outputs.append(nbformat.v4.new_output("error", ename="NotYet", evalue="Not yet:",
                                                   traceback=[]))
    return cell


def record_line(grade_id: str, values: list, calls: list[str] = ()) -> str:
    return "KVLESSON-MARK " + json.dumps({"id": grade_id, "values": values, "calls": list(calls)})


def right_values(exercise: dict) -> list:
    return [probe["expected"] for probe in exercise["probes"]]


def test_a_record_is_marked_against_the_key_with_exact_types():
    _, key = ex1_1()
    exercise = key["exercises"]["ex1_2_tests"]
    right = right_values(exercise)
    assert marking.mark_cell(graded_cell("ex1_2_tests", [record_line("ex1_2_tests", right)]),
                             exercise, None).score == exercise["points"]
    as_floats = [{"t": "float", "v": float(v["v"])} for v in right]
    assert marking.mark_cell(graded_cell("ex1_2_tests", [record_line("ex1_2_tests", as_floats)]),
                             exercise, None).score == 0


def test_no_record_two_records_and_a_failed_cell_with_right_values_are_flagged():
    _, key = ex1_1()
    exercise = key["exercises"]["ex1_2_tests"]
    line = record_line("ex1_2_tests", right_values(exercise))
    none = marking.mark_cell(graded_cell("ex1_2_tests", ["Self-check passed."]), exercise, None)
    two = marking.mark_cell(graded_cell("ex1_2_tests", [line, line]), exercise, None)
    odd = marking.mark_cell(graded_cell("ex1_2_tests", [line], failed=True), exercise, None)
    assert none.score == two.score == 0 and "no record" in none.flags[0] and "2 record" in two.flags[0]
    assert odd.score == exercise["points"] and "cell failed" in odd.flags[0]


def test_a_forbidden_call_scores_zero_with_the_reason():
    _, key = ex1_1()
    exercise = key["exercises"]["ex1_1_tests"]
    line = record_line("ex1_1_tests", right_values(exercise),
                       ["kvlesson.memory.floor.memory_parts"])
    mark = marking.mark_cell(graded_cell("ex1_1_tests", [line]), exercise, None)
    assert mark.score == 0 and "memory_parts" in mark.flags[0] and "forbids" in mark.flags[0]


CHEATS = {
    "rebinds a check": "import kvlesson.grading.selfcheck\nkvlesson.grading.selfcheck.verify = print",
    "fakes sha1": "import hashlib\nhashlib.sha1 = lambda *a: None",
    "builtins": "import builtins\nbuiltins.abs = lambda x: 0",
    "a transformer": "get_ipython().input_transformers_post.append(lambda lines: lines)",
    "exits": "import os\nos._exit(0)",
    "reflection": "getattr(kv, 'memory' + '_parts')",
    "dunder": "x = ().__class__.__base__",
    "string": "f = 'memory_parts'",
    "rebinds kv": "kv = None",
    "assigns to kv": "kv.blocks_for = lambda n: 1",
}


@pytest.mark.parametrize("cheat", CHEATS)
def test_the_scan_finds_each_cheat(cheat):
    assert marking.scan(CHEATS[cheat], {"memory_parts"}, {"kv", "selfcheck"}), cheat


@pytest.mark.parametrize("name", NAMES)
def test_the_scan_finds_nothing_in_the_instructors_answers(name):
    [path] = (ROOT / "solutions" / name).glob("*.ipynb")
    nb, key = read(path), marking.read_key(marking.key_path(ROOT, name))
    modules, answer, found = marking.locked_names(nb), None, []
    for cell in nb.cells:
        if stamping.is_answer_cell(cell):
            answer = stamping.answer_code(cell.source)
        elif stamping.is_test_cell(cell):
            forbidden = set(key["exercises"][stamping.nbgrader_meta(cell)["grade_id"]]["forbidden"])
            found += marking.scan(answer, forbidden, modules)
    assert found == []


def autograded(answers: dict[str, str]) -> list[marking.Mark]:
    """Notebook 1 answered right but for `answers` (grade id: code), with the hidden tests
    put back as autograde does, executed; its marks, made outside the kernel."""
    nb, key = ex1_1()
    [path] = (ROOT / "solutions" / "01_floor_plan").glob("*.ipynb")
    tests = {stamping.nbgrader_meta(c)["grade_id"]: c.source for c in read(path).cells
             if stamping.is_test_cell(c)}
    for cell in nb.cells:
        grade_id = stamping.nbgrader_meta(cell).get("grade_id")
        cell.source = answers.get(grade_id, tests.get(grade_id, cell.source))
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(ROOT / "notebooks" / "01_floor_plan")}}
                   ).execute()
    return marking.mark_notebook(nb, key)


def test_an_honest_notebook_gets_every_point_and_no_flag():
    marks = autograded({})
    assert [m.flags for m in marks if m.flags] == []
    assert all(m.score == m.points for m in marks), marks


def test_package_calls_through_an_alias_or_in_a_variable_score_zero():
    marks = {m.grade_id: m for m in autograded({
        "ex1_1_answer": "from kvlesson.memory.floor import memory_parts as mp\n"
                        "def pool_bytes(share):\n    return mp(share, gpu, model).pool_bytes",
        "q1_answer": "pool_gb = kv.memory_parts(SHARE, gpu, model).pool_bytes / 1e9\n"
                     "unused_gb = 8.0",
    })}
    assert marks["ex1_1_tests"].score == 0
    assert any("kvlesson.memory.floor.memory_parts" in f for f in marks["ex1_1_tests"].flags)
    assert marks["q1_pool_tests"].score == 0 and marks["q1_unused_tests"].score == 0
    assert any("mentions memory_parts" in f for f in marks["q1_pool_tests"].flags)
    assert marks["ex1_2_tests"].score == marks["ex1_2_tests"].points
