"""The grader's key of one exercise, from what its test cell gave in the build, and the check
that a key is what the executed notebook's hidden tests printed (not stale).

The build (`kvlesson.authoring.stamping`) runs each test cell in stamp mode; its hidden
`record` call gives the probes and their right answers, the known mistakes what they give.
`key_entry` keeps what the grader needs of them (`keys/<assignment>.json`,
`kvlesson.grading.course.key`); `stamp_problems` says where a stored key and notebook disagree.
"""

from __future__ import annotations

import ast

import nbformat

from kvlesson.authoring.key_mistakes import key_mistakes
from kvlesson.grading.checks import probes
from kvlesson.grading.checks.records import records_of
from kvlesson.grading.course.notebooks import is_test_cell, meta


def key_entry(
    entry: dict, points: float, known: list[dict] = (), reread: dict[str, str] | None = None
) -> dict:
    """What the grader needs of one hidden test: points, forbidden calls, expected values,
    what the `known` mistakes give (`kvlesson.authoring.key_mistakes.key_mistakes`),
    and the self-check's own words on what to re-read (`reread`: its hints' "else" and
    "yes_no"), which the feedback says of a wrong answer no known mistake gives."""
    found = {
        "points": points,
        "forbidden": entry["forbidden"],
        "probes": [
            {
                k: probe[k]
                for k in ("label", "kind", "unit", "places", "scale", "normal", "expected")
            }
            for probe in entry["probes"]
        ],
        "mistakes": list(known),
    }
    if reread:
        found["reread"] = dict(reread)
    return found


def same_rule(entries: list[dict], hidden: dict, grade_id: str) -> None:
    """A self-check forbids what its hidden test forbids: a forbidden call must say so in
    the notebook, in the grade's words, not first in the grade."""
    for entry in entries:
        if entry["role"] == "verify" and entry["forbidden"] != hidden["forbidden"]:
            raise ValueError(
                f"{grade_id}: the self-check forbids {tuple(entry['forbidden'])} "
                f"and the hidden test {tuple(hidden['forbidden'])}: give verify "
                f"the same forbidden="
            )


def known_mistakes(entries: list[dict], wrong: list[dict], hidden: dict) -> list[dict]:
    """The known mistakes of a hidden test, by the answers they give on its inputs, in the
    words of the cell's self-check hints."""
    hints = {
        code: words
        for entry in entries
        if entry["role"] == "verify"
        for code, words in entry["hints"].items()
    }
    return key_mistakes(wrong, entries.index(hidden), hidden["probes"], hints)


def stamp_problems(nb: nbformat.NotebookNode, key: dict) -> list[str]:
    """Where a key and an executed instructor notebook disagree (a stale key): the test
    cells, their points, their forbidden functions, and the values each hidden test's
    record line printed against the values the key expects."""
    problems = []
    tests = {meta(c)["grade_id"]: c for c in nb.cells if is_test_cell(c)}
    if set(tests) != set(key["exercises"]):
        problems.append(f"test cells {sorted(tests)} against key {sorted(key['exercises'])}")
    for grade_id, cell in tests.items():
        exercise = key["exercises"].get(grade_id)
        if exercise is None:
            continue
        [record] = [c for c in _record_calls(cell.source)] or [None]
        given = {
            k.arg: ast.literal_eval(k.value)
            for k in (record.keywords if record else [])
            if k.arg == "forbidden"
        }
        if list(given.get("forbidden", ())) != exercise["forbidden"]:
            problems.append(
                f"{grade_id}: forbidden {given.get('forbidden')} in the notebook, "
                f"{exercise['forbidden']} in the key"
            )
        printed = records_of(cell)
        values = printed[0].get("values") if len(printed) == 1 else None
        if values != [probe["expected"] for probe in exercise["probes"]] or [
            _normal(probe, value) for probe, value in zip(exercise["probes"], values)
        ] != [probe["normal"] for probe in exercise["probes"]]:
            problems.append(
                f"{grade_id}: the key's expected values are not what the hidden test printed"
            )
        if exercise["points"] != meta(cell)["points"]:
            problems.append(
                f"{grade_id}: points {exercise['points']} in the key, "
                f"{meta(cell)['points']} in the notebook"
            )
    return problems


def _normal(probe: dict, value: dict) -> str:
    return probes.normal(probes.from_key(probe), probes.decode(value))


def _record_calls(source: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "record"
    ]
