"""The answer is whatever produced it (kvlesson.grading.marking.answer_flow, cell_roles).

The code that works out an answer is every cell of the student's that can change what the
answer reads: not only the cell that binds a name at its top level, but a cell that fills a
dict in place, a helper that sets a global, a cell whose value IPython keeps in `_` or
`Out`, an attribute set on an object, a function that changes what it is given, and a cell
that writes names it does not spell out. A cell that only looks at the course's figures
feeds nothing, and a name bound anew cuts off what came before it.
"""

from __future__ import annotations

import nbformat
import pytest

from kvlesson.authoring import command
from kvlesson.grading.course import notebooks
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.marking import answer_flow, marks
from support.paths import ROOT

COURSE = frozenset({"kv", "gpu", "model", "SHARE", "selfcheck"})
SETUP = "import kvlesson as kv\ngpu, model, SHARE = kv.A100_80GB, kv.LLAMA_31_8B, 90"
TEST = "selfcheck.record('q1', [selfcheck.number('pool_gb', lambda: pool_gb, 'GB', 1)])"
MP = "kv.memory_parts(SHARE, gpu, model)"

# (what the student's cells do, their code before the answer, the answer, cells that feed it)
FEEDS = [
    (
        "a dict filled in place",
        ["table = {}", f"table['p'] = {MP}"],
        "pool_gb = table['p'].pool_bytes / 1e9",
        {1, 2},
    ),
    (
        "a method that fills it",
        ["table = []", f"table.append({MP})"],
        "pool_gb = table[0].pool_bytes / 1e9",
        {1, 2},
    ),
    (
        "a helper that sets a global",
        [f"def fill():\n    global found\n    found = {MP}", "fill()"],
        "pool_gb = found.pool_bytes / 1e9",
        {1, 2},
    ),
    (
        "a helper that fills what it is given",
        ["box = {}", f"def fill(d):\n    d['p'] = {MP}", "fill(box)"],
        "pool_gb = box['p'].pool_bytes / 1e9",
        {1, 2, 3},
    ),
    ("IPython's _", [f"{MP}"], "pool_gb = _.pool_bytes / 1e9", {1}),
    ("IPython's Out", [f"{MP}", "1 + 1"], "pool_gb = Out[2].pool_bytes / 1e9", {1, 2}),
    (
        "an attribute of an object of its own",
        ["class Box: pass\nb = Box()", f"b.p = {MP}"],
        "pool_gb = b.p.pool_bytes / 1e9",
        {1, 2},
    ),
    (
        "a name it does not spell out",
        [f"globals()['hid' + 'den'] = {MP}"],
        "pool_gb = hidden.pool_bytes / 1e9",
        {1},
    ),
    (
        "a cell run again from the input history",
        [f"x = {MP}", "exec(In[1])"],
        "pool_gb = x.pool_bytes / 1e9",
        {1, 2},
    ),
    (
        "a cell that only looks",
        [f"print({MP})", f"{MP}.pool_bytes"],
        "pool_gb = (SHARE / 100 * gpu.memory_bytes - model.weights_bytes) / 1e9",
        set(),
    ),
    (
        "a name bound anew",
        [f"parts = {MP}", "parts = {'pool_bytes': 1e9}"],
        "pool_gb = parts['pool_bytes'] / 1e9",
        {2},
    ),
]


@pytest.mark.parametrize(
    ("does", "before", "answer", "feeding"), FEEDS, ids=[row[0] for row in FEEDS]
)
def test_every_cell_that_can_change_what_the_answer_reads_feeds_it(does, before, answer, feeding):
    sources = dict(enumerate([SETUP, *before, answer, TEST]))
    theirs = set(range(1, len(before) + 2))
    test = len(sources) - 1
    fed = answer_flow.feeding_cells(sources, theirs, test, COURSE)
    assert fed - {test - 1} == feeding, (does, fed)


def test_a_cell_that_does_not_parse_can_change_anything():
    assert answer_flow.effects("x = (").any_name


def test_a_dict_filled_with_the_forbidden_function_costs_question_1():
    """The issue's cheat: a cell that binds no name fills a dict with memory_parts's
    result, which the answer reads; the reading of cells now follows it."""
    [path] = (ROOT / "solutions" / "01_floor_plan").glob("*.ipynb")
    instructor = nbformat.read(path, as_version=4)
    release = nbformat.read(ROOT / "notebooks" / "01_floor_plan" / path.name, as_version=4)
    nb = command.answered(release, instructor)
    q1 = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == "q1_answer")
    q1.source = "pool_gb = box['p'] / 1e9\nunused_gb = 8.0"
    setup = next(i for i, c in enumerate(nb.cells) if "import kvlesson" in c.source)
    nb.cells[setup + 1 : setup + 1] = [
        nbformat.v4.new_code_cell("box = {}"),
        nbformat.v4.new_code_cell("box['p'] = kv.memory_parts(SHARE, gpu, model).pool_bytes"),
    ]
    marked = {
        m.grade_id: m
        for m in marks.mark_notebook(
            nb, read_key(key_path(ROOT, "01_floor_plan")), instructor
        ).marks
    }
    assert any("uses memory_parts" in flag for flag in marked["q1_pool_tests"].flags), marked[
        "q1_pool_tests"
    ].flags
    assert not any("memory_parts" in flag for flag in marked["ex1_2_tests"].flags)
