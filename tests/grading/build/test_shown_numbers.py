"""No notebook prints a self-check's answer above the exercise that asks for it.

A student who finds the number a probe expects already printed above the
exercise can copy it instead of working it out. For every visible probe of
every exercise and question (its salted hash is in the notebook), each number
written or printed in the cells above the answer cell is tried in the probe's
own form (a whole number, or rounded to the probe's places): none may hash to
the expected answer.
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from kvlesson.grading.build import command, stamp_places
from kvlesson.grading.build.shown_numbers import cell_text, copied_as, numbers_in
from kvlesson.grading.checks.selfcheck import digest
from kvlesson.grading.course import notebooks
from support.paths import ROOT

SOLUTIONS = command.notebook_paths(ROOT / "solutions")
KINDS = {"count": "int", "count_or_none": "int", "number": "num"}  # a kind's normal form

# Answers printed above their exercise that a change leaves on purpose: none. The list is
# exact: a leak that appears must be fixed or named here with its reason.
KNOWN: dict[str, list[str]] = {}


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


def shown_answers(nb) -> list[str]:
    """Each visible probe whose expected answer a number above its answer cell gives away."""
    leaks, above, stamps = [], set(), stamp_places.stamps_of(nb)
    for cell in nb.cells:
        if notebooks.is_answer_cell(cell) or notebooks.is_test_cell(cell):
            for label, kind, places, expect in visible_probes(cell.source, stamps):
                if kind not in KINDS:
                    continue
                for value in sorted(above):
                    text = copied_as(value, KINDS[kind], places)
                    if text is not None and digest(expect["salt"], text) == expect["hash"]:
                        leaks.append(f"{label} = {value:g}")
        if not notebooks.is_test_cell(cell) and not notebooks.is_answer_cell(cell):
            # a self-check prints no answer; an answer cell is released without the
            # solution and its output: the student sees what they write
            above |= numbers_in(cell_text(cell))
    return leaks


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.parent.name for p in SOLUTIONS])
def test_no_visible_probe_is_answered_above_its_exercise(path):
    leaks = shown_answers(nbformat.read(path, as_version=4))
    assert leaks == KNOWN.get(path.parent.name, []), (
        f"{path.parent.name} prints these answers above their exercise: {leaks}")


def test_the_check_finds_an_answer_printed_above():
    """Notebook 5 printed 0.45 (two servers' share) above Exercise 5.6, and 4.98 (the rig's pool
    at 131,072) above Exercise 5.2: put either back and the check names the probe."""
    [path] = [p for p in SOLUTIONS if p.parent.name == "05_real_server"]
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("Each of two servers asks for 0.45; the pool "
                                                     "holds 4.98 requests of 131,072 tokens."))
    leaks = set(shown_answers(nb)) - set(KNOWN.get("05_real_server", []))
    assert leaks == {"share_per_server(2) = 0.45",
                     "concurrency_at_length(rig_measurements.RIG_LOG, 131_072) = 4.98"}
