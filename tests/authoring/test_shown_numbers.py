"""No notebook shows an answer in view of its question.

A student who finds the number a probe expects printed near the exercise can copy it instead
of working it out. For every probe of every exercise and question, visible (its salted hash is
in the release) and hidden (its answer is in the key), each number written or printed in the
cells around it, whole or not (`kvlesson.authoring.shown_numbers.numbers_around`: every
cell above, and the cells of its own section below), is tried in the probe's own form (a
whole number, or rounded to the probe's places): none may be the answer, unless `KNOWN` names
that probe with the reason its answer cannot help.
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from kvlesson.authoring import command, stamp_places
from kvlesson.authoring.shown_numbers import copied_as, numbers_around, numbers_in
from kvlesson.grading.checks.selfcheck import digest
from kvlesson.grading.course import notebooks
from kvlesson.grading.course.key import key_path, read_key
from support.paths import ROOT

SOLUTIONS = command.notebook_paths(ROOT / "solutions")
KINDS = {"count": "int", "count_or_none": "int", "number": "num"}  # a kind's normal form

# Answers in view of their question that stay on purpose, each with the reason it cannot be
# copied: exact, so a leak that appears must be fixed or named here.
NONE_IN_A_NEGATIVE_POOL = "a pool below zero (or under a block) holds none: the text says 0"
SMALL_COUNT = (
    "a chat of a few tokens: 1 to 4 blocks, small counts every page holds; the "
    "exercise is about the rounding at 16, which these inputs try"
)
CAP_OF_THE_SWEEP = "the answer is one of the caps of the sweep itself, which lists them all"
WHOLE_SHARE = "a share is one of the whole percents from 1 to 100, which every page quotes"
BOUNDARY_STEP = (
    "a boundary case (a prompt one token over or under k steps' worth): its few "
    "steps are small counts every page holds"
)
KNOWN: dict[str, dict[str, str]] = {
    "01_floor_plan": {
        "blocks_in(4_194_303) (self-check)": "one byte short of two blocks: 1, a small count",
        "blocks_in(-1e9) (self-check)": NONE_IN_A_NEGATIVE_POOL,
        "blocks_in(0) (hidden)": NONE_IN_A_NEGATIVE_POOL,
        "blocks_in(2097151) (hidden)": NONE_IN_A_NEGATIVE_POOL,
        "blocks_in(2097152) (hidden)": "exactly one block's bytes: 1, a small count",
        "blocks_in(-5.0) (hidden)": NONE_IN_A_NEGATIVE_POOL,
    },
    "02_ceiling": {
        **{f"chat_blocks({n}) (self-check)": SMALL_COUNT for n in (1, 17, 14)},
        **{f"chat_blocks({n}) (hidden)": SMALL_COUNT for n in (15, 16, 33, 47, 64)},
        **{
            label: "at most the longest chat a 100% share holds: 100, the top of the range the "
            "exercise gives"
            for label in (
                "lowest_share_for(472_559) (self-check)",
                "lowest_share_for(472560) (hidden)",
            )
        },
        "lowest_share_for(20000) (hidden)": WHOLE_SHARE,
    },
    "03_cap_sweep": {
        **{
            f"knee_of({name}) (self-check)": CAP_OF_THE_SWEEP
            for name in ("rising", "close", "tenth")
        },
        **{f"knee_of(hidden sweep {n}) (hidden)": CAP_OF_THE_SWEEP for n in range(8)},
    },
    "04_preemption": {
        **{
            f"{name} ({side})": reason
            for side in ("self-check", "hidden")
            for name, reason in (
                ("first_pause_step", "a step's number in a trace of a few dozen steps"),
                ("paused_chat", "one of the three places in `case` the question lists, 0, 1 or 2"),
                (
                    "steps_roomy",
                    "with room for all, the case takes as many steps as its "
                    "longest reply, 30 tokens: the question's own case says it",
                ),
                (
                    "steps_tight",
                    "33 in view is B's tokens in the hand case (`kv.blocks_for(33)`: its 32 "
                    "and the one it writes next), not a count of steps",
                ),
            )
        },
    },
    "05_real_server": {
        "fp8_pool_tokens(-1e9, kv.QWEN25_7B) (self-check)": NONE_IN_A_NEGATIVE_POOL,
        "fp8_pool_tokens(1_000, kv.LLAMA_31_8B) (hidden)": NONE_IN_A_NEGATIVE_POOL,
        "fp8_pool_tokens(-5e8, kv.LLAMA_31_8B) (hidden)": NONE_IN_A_NEGATIVE_POOL,
        "share_per_server(1) (hidden)": "one server asks for the whole total: the default, 0.9, "
        "which the question names",
    },
    "06_traffic": {
        **{
            f"steps_to_read({args}) (self-check)": BOUNDARY_STEP
            for args in ("300, 256, 0", "255, 256, 1", "510, 256, 1", "3062, 512, 2")
        },
        **{
            f"steps_to_read({args}) (hidden)": BOUNDARY_STEP
            for args in ("511, 512, 1", "1, 64, 63", "3061, 512, 2")
        },
    },
}


def visible_probes(source: str, stamps: dict) -> list[tuple[str, str, int, dict]]:
    """The probes of a test cell's stamped `verify` call: (label, kind, places, stamp)."""
    found = []
    for call in stamp_places.stamp_calls(source):
        stamp = stamps[next(k.value.value for k in call.keywords if k.arg == "stamp")]
        probes = call.args[0].elts if isinstance(call.args[0], ast.List) else []
        for node, expect in zip(probes, stamp["probes"], strict=True):
            kind = node.func.attr
            places = node.args[3].value if kind == "number" and len(node.args) > 3 else 0
            found.append((node.args[0].value, kind, places, expect))
    return found


def shown_answers(nb, key: dict, only: str | None = None) -> dict[str, float]:
    """Each probe (label, with the side) whose answer a number around its exercise gives,
    and that number; of the exercise whose test cell is `only`, if given."""
    leaks, stamps = {}, stamp_places.stamps_of(nb)
    for index, cell in enumerate(nb.cells):
        if not notebooks.is_test_cell(cell) or only not in (None, notebooks.meta(cell)["grade_id"]):
            continue
        around = sorted(numbers_around(nb, index))
        for label, kind, places, expect in visible_probes(cell.source, stamps):
            for value in around if kind in KINDS else ():
                text = copied_as(value, KINDS[kind], places)
                if text is not None and digest(expect["salt"], text) == expect["hash"]:
                    leaks[f"{label} (self-check)"] = value
        for probe in key["exercises"][notebooks.meta(cell)["grade_id"]]["probes"]:
            for value in around if probe["kind"] in KINDS else ():
                if copied_as(value, KINDS[probe["kind"]], probe["places"]) == probe["normal"]:
                    leaks[f"{probe['label']} (hidden)"] = value
    return leaks


def probe_labels(nb, key: dict, grade_id: str) -> set[str]:
    """Every probe of one exercise, as KNOWN names it: its label and its side."""
    [cell] = [c for c in nb.cells if notebooks.meta(c).get("grade_id") == grade_id]
    stamps = stamp_places.stamps_of(nb)
    return {f"{label} (self-check)" for label, *_ in visible_probes(cell.source, stamps)} | {
        f"{probe['label']} (hidden)" for probe in key["exercises"][grade_id]["probes"]
    }


EXERCISES = [
    (path, notebooks.meta(cell)["grade_id"])
    for path in SOLUTIONS
    for cell in nbformat.read(path, as_version=4).cells
    if notebooks.is_test_cell(cell)
]


@pytest.mark.parametrize("path, grade_id", EXERCISES, ids=[g for _, g in EXERCISES])
def test_no_answer_is_in_view_of_its_question(path, grade_id):
    name = path.parent.name
    nb = nbformat.read(path, as_version=4)
    key = read_key(key_path(ROOT, name))
    leaks = shown_answers(nb, key, only=grade_id)
    labels = probe_labels(nb, key, grade_id)
    known = {label for label in KNOWN.get(name, {}) if label in labels}
    new = {label: value for label, value in leaks.items() if label not in known}
    gone = sorted(known - set(leaks))
    assert not new, (
        f"{grade_id}: answers in view of their question, {new}: ask for inputs whose answers "
        f"the notebook does not show, or, if one cannot help a student, name it with the "
        f"reason in KNOWN[{name!r}], tests/authoring/test_shown_numbers.py"
    )
    assert not gone, f"{grade_id}: named in KNOWN[{name!r}] but no longer in view: {gone}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.parent.name for p in SOLUTIONS])
def test_every_exception_names_a_probe_of_its_notebook(path):
    """KNOWN names probes by their labels: one whose probe is gone must go too."""
    nb = nbformat.read(path, as_version=4)
    key = read_key(key_path(ROOT, path.parent.name))
    labels = set().union(*(probe_labels(nb, key, g) for p, g in EXERCISES if p == path))
    assert set(KNOWN.get(path.parent.name, {})) <= labels, (
        set(KNOWN.get(path.parent.name, {})) - labels
    )


def test_the_check_finds_an_answer_printed_near_its_question():
    """Notebook 5 printed 0.45 (two servers' share) above Exercise 5.6; put it back, or 13.78
    (section 2's pool in requests of 32,768) above Exercise 5.2, and a whole number counts as
    much as a fraction: put any back and the check names the probe."""
    [path] = [p for p in SOLUTIONS if p.parent.name == "05_real_server"]
    nb = nbformat.read(path, as_version=4)
    key = read_key(key_path(ROOT, "05_real_server"))
    before = shown_answers(nb, key)
    nb.cells.insert(
        1,
        nbformat.v4.new_markdown_cell(
            "Each of two servers asks for 0.45; the pool holds 13.78 requests of 32,768 tokens."
        ),
    )
    found = set(shown_answers(nb, key)) - set(before)
    assert {
        "share_per_server(2) (self-check)",
        "concurrency_at_length(H100_LOG, 32_768) (self-check)",
    } <= found


def test_a_whole_number_and_the_section_below_count_too():
    """A count printed below its question, in the same section, gives it away as much as a
    fraction above it: Question 1's pool, printed at its own share in the caption right under
    it, is found (the notebook asks at another share, `Q1_SHARE`, so that none is)."""
    [path] = [p for p in SOLUTIONS if p.parent.name == "01_floor_plan"]
    nb = nbformat.read(path, as_version=4)
    key = read_key(key_path(ROOT, "01_floor_plan"))
    test = next(
        i for i, c in enumerate(nb.cells) if notebooks.meta(c).get("grade_id") == "q1_pool_tests"
    )
    pool = float(key["exercises"]["q1_pool_tests"]["probes"][0]["normal"].split(":")[1])
    nb.cells.insert(test + 1, nbformat.v4.new_markdown_cell(f"The pool is {pool} GB here."))
    assert "pool_gb (self-check)" in shown_answers(nb, key)
    blocks = nbformat.v4.new_markdown_cell("A chat of 8,001 tokens takes 501 blocks.")
    nb.cells.insert(1, blocks)
    assert numbers_around(nb, test + 2) >= {8001.0, 501.0}


def test_a_version_is_not_a_number_a_student_copies():
    """A release names versions (llama-cpp-python 0.3.36, vLLM 0.8.4): neither 0.3 nor 0.8 is
    read out of them, while a number at the end of a sentence and one with thousands' commas
    are."""
    text = "llama-cpp-python 0.3.36 vendors it; vLLM v0.8.4, 0.33.0 and 0.33 hold 131,072 tokens, or 0.45."
    assert numbers_in(text) == {0.33, 131_072, 0.45}
