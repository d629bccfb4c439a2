"""Stamping the self-checks: the expected answers, computed from the instructor's solution.

`execute_and_stamp` runs an instructor notebook in a kernel started in stamp
mode. At each test cell, `kvlesson.grading.checks.selfcheck` notes the right answers of the
cell's probes; then every known mistake (`kvlesson.grading.build.mutants`) of the answer
cell above is swapped in, out of the stored notebook's sight, to note the wrong
answers it gives, and the right answer cell is run again. The cell's `stamp=""`
arguments get the setting, a salt and the salted hashes (right answer, and each
known mistake's answer with its hint); the grader's key gets the right answers
in clear, with the points and the functions each exercise may not call.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from pathlib import Path

import nbformat

from kvlesson.grading.build import mutants, probe_search
from kvlesson.grading.build.key_mistakes import key_mistakes, one_mistake
from kvlesson.grading.build.shown_numbers import cell_text, numbers_in
from kvlesson.grading.build.stamp_places import put_stamps, stamp_key, with_stamps
from kvlesson.grading.checks import probes, selfcheck
from kvlesson.grading.checks.records import records_of
from kvlesson.grading.course.known_mistakes import MISTAKES
from kvlesson.grading.course.notebooks import answer_code, is_answer_cell, is_test_cell, meta

TIMEOUT = 300  # seconds for one cell; the slowest cell of the course takes a few
def salt_for(*parts: object) -> str:
    """A salt per probe, the same at every build of the same setting (stable diffs)."""
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:16]


def make_stamp(entry: dict, wrong: list[dict], index: int, where: str) -> str:
    """The stamp of one verify call: the setting; per probe a salt and the hash of the right
    answer; and the hints: each known mistake's words with the hashes of what it gives on
    every probe. A hint is kept only when no mistake with other words gives the same
    answers (`unique_hints`), and never for yes-or-no probes, where any wrong answer is
    every mistake's."""
    salts = [salt_for(where, index, number, probe["label"], json.dumps(entry["setting"]))
             for number, probe in enumerate(entry["probes"])]
    hints = []
    if all(probe["kind"] != "yes_no" for probe in entry["probes"]):
        right = tuple(probe["normal"] for probe in entry["probes"])
        for words, values in unique_hints(entry, wrong, index, right):
            hints.append({"words": words, "hashes": [
                None if value is None else selfcheck.digest(salt, value)
                for salt, value in zip(salts, values)]})
    probes = [{"salt": salt, "hash": selfcheck.digest(salt, probe["normal"])}
              for salt, probe in zip(salts, entry["probes"])]
    return json.dumps({"setting": entry["setting"], "probes": probes, "hints": hints},
                      separators=(",", ":"))


def unique_hints(entry: dict, wrong: list[dict], index: int,
                 right: tuple) -> list[tuple[str, tuple]]:
    """(words, what the mistake gives on each probe) for each known mistake of a verify call
    that gives a wrong answer somewhere, once per set of answers, and only where the
    mistakes giving those answers are one (`kvlesson.grading.build.key_mistakes.one_mistake`; the
    cell's `hints=` words first)."""
    found: dict[tuple, list[dict]] = {}
    for mistake in wrong:
        values = tuple(mistake["values"][index])
        if values != right and any(v is not None for v in values):
            words = entry["hints"].get(mistake["mistake"], mistake["hint"])
            found.setdefault(values, []).append({**mistake, "words": words})
    return [(same[0]["words"], values) for values, same in found.items()
            if one_mistake(same)]


def key_entry(entry: dict, points: float, known: list[dict] = ()) -> dict:
    """What the grader needs of one hidden test: points, forbidden calls, expected values,
    and what the `known` mistakes give (`kvlesson.grading.build.key_mistakes.key_mistakes`)."""
    return {"points": points, "forbidden": entry["forbidden"],
            "probes": [{k: probe[k] for k in ("label", "kind", "unit", "places", "scale",
                                               "normal", "expected")}
                       for probe in entry["probes"]],
            "mistakes": list(known)}


class _Kernel:
    """A notebook's kernel, with a way to run code that leaves no trace in the notebook."""

    def __init__(self, client):
        self.client = client

    def run(self, cell, index: int) -> None:
        self.client.execute_cell(cell, index)

    def quietly(self, code: str) -> bool:
        """Run `code` without storing it; False if it raised."""
        from nbclient.exceptions import CellExecutionError
        cell, first = nbformat.v4.new_code_cell(code), self.client.nb.cells[0]
        try:
            self.client.execute_cell(cell, 0, store_history=False)
        except CellExecutionError:
            return False
        finally:
            self.client.nb.cells[0] = first  # nbclient stores the cell it ran at the index
        return True

    def must(self, code: str) -> None:
        """Run `code` without storing it; the build's own code must not fail (a silent
        failure here once left every self-check without its hints)."""
        if not self.quietly(code):
            raise RuntimeError(f"the build's code failed in the notebook's kernel:\n{code}")


def _stamp_test_cell(kernel: _Kernel, nb, index: int, answer, stamp_file: Path,
                     where: str, shown: set[float] | None, answers: dict[str, str]
                     ) -> tuple[list[dict], list[dict], str]:
    """Run test cell `index` in stamp mode (after the probe search, unless `shown`, the
    numbers shown above it, is None), then the known mistakes of `answer`; the cell's
    entries, what each known mistake gave, and its source with each verify's `stamp=` its
    key in `answers`, where its stamp goes."""
    cell = nb.cells[index]
    right = answer_code(answer.source) if answer is not None else ""
    same: dict[str, str] = {}
    if right and shown is not None:
        cell.source, same = probe_search.searched(kernel, cell.source, right, stamp_file.parent,
                                                  where, shown)
    stamp_file.write_text("")
    kernel.must("from kvlesson.grading.checks import selfcheck as _kvlesson_selfcheck\n"
                "_kvlesson_selfcheck.start_cell()")
    kernel.run(cell, index)
    if right:
        copied = probe_search.examples(right, probe_search.Probes.of(cell.source))
        for mutant in mutants.mutants(right, examples=copied):
            if kernel.quietly(mutant.source):
                kernel.must(f"_kvlesson_selfcheck.wrong_values({mutant.mistake!r}, "
                            f"{mutant.hint!r}, {same.get(mutant.source, '')!r})")
            kernel.must(right)
    rows = [json.loads(line) for line in stamp_file.read_text().splitlines() if line]
    entries = [row for row in rows if row["role"] in ("verify", "record")]
    wrong = sorted((row for row in rows if row["role"] == "mistake"),
                   key=lambda row: list(MISTAKES).index(row["mistake"]))
    stamps = [make_stamp(entry, wrong, number, where) for number, entry in enumerate(entries)
              if entry["role"] == "verify"]
    keys = [stamp_key(where, n) for n in range(len(stamps))]
    answers.update(zip(keys, stamps))
    return entries, wrong, with_stamps(cell.source, keys)


def execute_and_stamp(nb: nbformat.NotebookNode, folder: Path, assignment: str,
                      search: bool = True) -> dict:
    """Execute `nb` in `folder` top to bottom, stamping its test cells in place (after
    the probe search, with `search`); the assignment's key: {"assignment", "setting",
    "exercises": {grade_id: ...}}. The kernel talks over Unix sockets in a private folder,
    never TCP: no other account of the machine can reach it, and ipykernel has no reason to
    warn that it runs over TCP without encryption (once per notebook)."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    key: dict = {"assignment": assignment, "setting": None, "exercises": {}}
    with tempfile.TemporaryDirectory() as scratch:
        sockets = Config({"KernelManager": {"transport": "ipc",
                                            "ip": str(Path(scratch) / "kernel")}})
        client = NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3",
                                record_timing=False, config=sockets,
                                resources={"metadata": {"path": str(folder)}})
        stamp_file = Path(scratch) / "stamps.jsonl"
        previous = os.environ.get(selfcheck.STAMP_FILE)
        os.environ[selfcheck.STAMP_FILE] = str(stamp_file)  # the kernel inherits it
        try:
            with client.setup_kernel():
                kernel, answer, shown, answers = _Kernel(client), None, set(), {}
                for index, cell in enumerate(nb.cells):
                    if is_answer_cell(cell):
                        answer = cell
                    if not is_test_cell(cell):
                        if cell.cell_type == "code":
                            kernel.run(cell, index)
                        if not is_answer_cell(cell):  # released without solution or output
                            shown |= numbers_in(cell_text(cell))  # what a reader sees above
                        continue
                    grade_id = meta(cell)["grade_id"]
                    entries, wrong, cell.source = _stamp_test_cell(
                        kernel, nb, index, answer, stamp_file, f"{assignment}/{grade_id}",
                        shown if search else None, answers)
                    [hidden] = [e for e in entries if e["role"] == "record"]
                    if hidden["grade_id"] != grade_id:
                        raise ValueError(f"record({hidden['grade_id']!r}) in cell {grade_id}")
                    _same_rule(entries, hidden, grade_id)
                    key["setting"] = hidden["setting"]
                    key["exercises"][grade_id] = key_entry(
                        hidden, meta(cell)["points"], _known(entries, wrong, hidden))
                if answers:
                    put_stamps(nb, answers)
        finally:
            if previous is None:
                os.environ.pop(selfcheck.STAMP_FILE, None)
            else:
                os.environ[selfcheck.STAMP_FILE] = previous
    return key


def _same_rule(entries: list[dict], hidden: dict, grade_id: str) -> None:
    """A self-check forbids what its hidden test forbids: a forbidden call must say so in
    the notebook, in the grade's words, not first in the grade."""
    for entry in entries:
        if entry["role"] == "verify" and entry["forbidden"] != hidden["forbidden"]:
            raise ValueError(f"{grade_id}: the self-check forbids {tuple(entry['forbidden'])} "
                             f"and the hidden test {tuple(hidden['forbidden'])}: give verify "
                             f"the same forbidden=")


def _known(entries: list[dict], wrong: list[dict], hidden: dict) -> list[dict]:
    """The known mistakes of a hidden test, by the answers they give on its inputs, in the
    words of the cell's self-check hints."""
    hints = {code: words for entry in entries if entry["role"] == "verify"
             for code, words in entry["hints"].items()}
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
        given = {k.arg: ast.literal_eval(k.value) for k in (record.keywords if record else [])
                 if k.arg == "forbidden"}
        if list(given.get("forbidden", ())) != exercise["forbidden"]:
            problems.append(f"{grade_id}: forbidden {given.get('forbidden')} in the notebook, "
                            f"{exercise['forbidden']} in the key")
        printed = records_of(cell)
        values = printed[0].get("values") if len(printed) == 1 else None
        if values != [probe["expected"] for probe in exercise["probes"]] \
                or [_normal(probe, value) for probe, value in zip(exercise["probes"], values)] \
                != [probe["normal"] for probe in exercise["probes"]]:
            problems.append(f"{grade_id}: the key's expected values are not what the hidden "
                            "test printed")
        if exercise["points"] != meta(cell)["points"]:
            problems.append(f"{grade_id}: points {exercise['points']} in the key, "
                            f"{meta(cell)['points']} in the notebook")
    return problems


def _normal(probe: dict, value: dict) -> str:
    return probes.normal(probes.from_key(probe), probes.decode(value))


def _record_calls(source: str) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "record"]
