"""Stamping the self-checks: the expected answers, computed from the instructor's solution.

`execute_and_stamp` runs an instructor notebook in a kernel started in stamp
mode. At each test cell, `kvlesson.grading.checks.selfcheck` notes the right answers of the
cell's probes; then every known mistake (`kvlesson.authoring.mutants`) of the answer
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

from kvlesson.authoring import mutants, probe_search
from kvlesson.authoring.kernel import Kernel, top_level_names
from kvlesson.authoring.key_mistakes import key_mistakes, one_mistake
from kvlesson.authoring.shown_numbers import cell_text, numbers_around, numbers_in
from kvlesson.authoring.stamp_places import put_stamps, stamp_key, with_stamps
from kvlesson.authoring.summary import Summary
from kvlesson.grading.checks import probes, selfcheck
from kvlesson.grading.checks.messages import ELSE, YES_NO, seal, words_digest
from kvlesson.grading.checks.records import records_of
from kvlesson.grading.course.known_mistakes import rank
from kvlesson.grading.course.notebooks import answer_code, is_answer_cell, is_test_cell, meta

TIMEOUT = 300  # seconds for one cell; the slowest cell of the course takes a few


def salt_for(*parts: object) -> str:
    """A salt per probe, the same at every build of the same setting (stable diffs)."""
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:16]


def make_stamp(
    entry: dict, wrong: list[dict], index: int, where: str, named: set[str] | None = None
) -> str:
    """The stamp of one verify call: the setting; per probe a salt and the hash of the right
    answer; and the hints: each known mistake's words, sealed with its answers
    (`kvlesson.grading.checks.messages.seal`), and the hashes of what it gives on every probe
    but the yes-or-no ones (None there: a yes or no never names a mistake, any wrong one is
    every mistake's; the numbers beside it do). A hint is kept only when the mistake gives an
    answer on each such probe and no mistake with other words gives the same answers
    (`unique_hints`); with `named` (the words the key names mistakes in), only a hint the key
    can name too: the self-check, the feedback and the report name the same mistakes."""
    salts = [
        salt_for(where, index, number, probe["label"], json.dumps(entry["setting"]))
        for number, probe in enumerate(entry["probes"])
    ]
    counted = [probe["kind"] != "yes_no" for probe in entry["probes"]]
    hints = []
    if any(counted):
        right = tuple(p["normal"] for p, c in zip(entry["probes"], counted) if c)
        for words, values in unique_hints(entry, wrong, index, right, counted):
            if named is not None and words not in named:
                continue
            given = iter(values)
            hashes = [
                selfcheck.digest(salt, next(given)) if c else None
                for salt, c in zip(salts, counted)
            ]
            hints.append(
                {
                    "said": seal(words, salts[0], list(values)),
                    "named": words_digest(words),
                    "hashes": hashes,
                }
            )
    probes = [
        {"salt": salt, "hash": selfcheck.digest(salt, probe["normal"])}
        for salt, probe in zip(salts, entry["probes"])
    ]
    return json.dumps(
        {"setting": entry["setting"], "probes": probes, "hints": hints}, separators=(",", ":")
    )


def unique_hints(
    entry: dict, wrong: list[dict], index: int, right: tuple, counted: list[bool] | None = None
) -> list[tuple[str, tuple]]:
    """(words, what the mistake gives on each probe `counted` keeps: by default all) for each
    known mistake of a verify call that gives an answer on each of them (one that raises
    shows its error instead) and a wrong one somewhere, once per set of answers, and only
    where the mistakes giving those answers are one
    (`kvlesson.authoring.key_mistakes.one_mistake`; the cell's `hints=` words first)."""
    found: dict[tuple, list[dict]] = {}
    for mistake in wrong:
        given = mistake["values"][index]
        values = tuple(v for v, c in zip(given, counted or [True] * len(given)) if c)
        if values != right and all(v is not None for v in values):
            words = entry["hints"].get(mistake["mistake"], mistake["hint"])
            found.setdefault(values, []).append({**mistake, "words": words})
    return [(same[0]["words"], values) for values, same in found.items() if one_mistake(same)]


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


def _stamp_test_cell(
    kernel: Kernel,
    nb,
    index: int,
    answer,
    stamp_file: Path,
    where: str,
    shown: set[float] | None,
    answers: dict[str, str],
    bound: list[str],
) -> tuple[list[dict], list[dict], str, Summary]:
    """Run test cell `index` in stamp mode (after the probe search, unless `shown`, the
    numbers a reader sees around it, is None), then the known mistakes of `answer`; the
    cell's entries, what each known mistake gave, its source with each verify's `stamp=` its
    key in `answers` (where its stamp goes), and what the build did, for its summary.
    `bound`: the names the notebook's cells above bind (a student may read one of them
    instead of an argument)."""
    cell = nb.cells[index]
    right = answer_code(answer.source) if answer is not None else ""
    scratch = stamp_file.parent
    kernel.must(
        "from kvlesson.grading.checks import rules as _kvlesson_rules\n_kvlesson_rules.forget()"
    )
    like: dict = {}
    try:
        written = probe_search.Probes.of(cell.source)
    except probe_search.UnreadProbes as error:
        raise probe_search.UnreadProbes(f"{meta(cell).get('grade_id', index)}: {error}") from None
    if right and written.found:
        kernel.must(
            f"{cell.source}\nfrom kvlesson.authoring import probe_inputs as _pi\n"
            f"_pi.alike({cell.source!r}, {bound!r}, {str(scratch / 'alike.json')!r})"
        )
        like = {
            f: {int(k): v for k, v in by.items()}
            for f, by in json.loads((scratch / "alike.json").read_text()).items()
        }
    same: dict[str, str] = {}
    summary = Summary(where)
    if right and shown is not None:
        cell.source, same, summary.choice = probe_search.searched(
            kernel, cell.source, right, scratch, where, shown, like
        )
    stamp_file.write_text("")
    kernel.must(
        "from kvlesson.grading.checks import selfcheck as _kvlesson_selfcheck\n"
        "_kvlesson_selfcheck.start_cell()"
    )
    kernel.run(cell, index)
    if right:
        copied = probe_search.examples(right, probe_search.Probes.of(cell.source))
        for mutant in mutants.mutants(
            right, examples=copied, like=like, declared=probe_search.declared_mistakes(cell.source)
        ):
            summary.known.append(mutant.mistake)
            if kernel.quietly(mutant.source):
                kernel.must(
                    f"_kvlesson_selfcheck.wrong_values({mutant.mistake!r}, "
                    f"{mutant.hint!r}, {same.get(mutant.source, '')!r})"
                )
            else:
                summary.dropped.append((mutant.mistake, "its code does not run"))
            kernel.must(right)
    summary.authority = _authority(kernel, cell.source, right, scratch)
    rows = [json.loads(line) for line in stamp_file.read_text().splitlines() if line]
    entries = [row for row in rows if row["role"] in ("verify", "record")]
    wrong = sorted(
        (row for row in rows if row["role"] == "mistake"), key=lambda row: rank(row["mistake"])
    )
    hidden = [entry for entry in entries if entry["role"] == "record"]
    if len(hidden) != 1:
        raise ValueError(f"{where}: {len(hidden)} record calls; a test cell has exactly one")
    summary.key = _known(entries, wrong, hidden[0])
    named = {known["words"] for known in summary.key}
    stamps = [
        make_stamp(entry, wrong, number, where, named)
        for number, entry in enumerate(entries)
        if entry["role"] == "verify"
    ]
    keys = [stamp_key(where, n) for n in range(len(stamps))]
    answers.update(zip(keys, stamps))
    summary.hinted = sorted(
        {
            words
            for number, entry in enumerate(entries)
            if entry["role"] == "verify"
            for words in _hint_words(entry, wrong, number)
        }
    )
    return entries, wrong, with_stamps(cell.source, keys), summary


def _hint_words(entry: dict, wrong: list[dict], index: int) -> list[str]:
    """The words of every hint a verify call's self-check could give, before the key's
    filter (as `make_stamp` picks them)."""
    counted = [probe["kind"] != "yes_no" for probe in entry["probes"]]
    right = tuple(p["normal"] for p, c in zip(entry["probes"], counted) if c)
    return (
        [words for words, _ in unique_hints(entry, wrong, index, right, counted)]
        if any(counted)
        else []
    )


def _authority(kernel: Kernel, source: str, right: str, scratch: Path) -> list | None:
    """The exercise's authority's answer on every probe of the test cell, by side (None:
    no authority declared), worked out in the kernel (`kvlesson.authoring.authority`)."""
    functions = [
        node.name
        for node in ast.walk(ast.parse(right or "pass"))
        if isinstance(node, ast.FunctionDef)
    ]
    out = scratch / "authority.json"
    kernel.must(
        f"from kvlesson.authoring import authority as _kvlesson_authority\n"
        f"_kvlesson_authority.answers({source!r}, {functions!r}, {str(out)!r})"
    )
    found = json.loads(out.read_text())
    return found["sides"] if found["authority"] else None


def execute_and_stamp(
    nb: nbformat.NotebookNode, folder: Path, assignment: str, search: bool = True
) -> dict:
    """Execute `nb` in `folder` top to bottom, stamping its test cells in place (after
    the probe search, with `search`); the assignment's key: {"assignment", "setting",
    "exercises": {grade_id: ...}}. Prints what it did to each test cell (`Summary`) and
    stops where the instructor's answers disagree with the exercise's authority, or where
    the self-check names a mistake the key cannot. The kernel talks over Unix sockets in a
    private folder, never TCP: no other account of the machine can reach it, and ipykernel has
    no reason to warn that it runs over TCP without encryption (once per notebook)."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    key: dict = {"assignment": assignment, "setting": None, "exercises": {}}
    below = {
        index: numbers_around(nb, index, above=False)
        for index, cell in enumerate(nb.cells)
        if is_test_cell(cell)
    }  # the section under each exercise, as last executed
    with tempfile.TemporaryDirectory() as scratch:
        sockets = Config(
            {"KernelManager": {"transport": "ipc", "ip": str(Path(scratch) / "kernel")}}
        )
        client = NotebookClient(
            nb,
            timeout=TIMEOUT,
            kernel_name="python3",
            record_timing=False,
            config=sockets,
            resources={"metadata": {"path": str(folder)}},
        )
        stamp_file = Path(scratch) / "stamps.jsonl"
        previous = os.environ.get(selfcheck.STAMP_FILE)
        os.environ[selfcheck.STAMP_FILE] = str(stamp_file)  # the kernel inherits it
        try:
            with client.setup_kernel():
                kernel, answer, shown, answers, bound = Kernel(client), None, set(), {}, []
                for index, cell in enumerate(nb.cells):
                    if is_answer_cell(cell):
                        answer = cell
                    if not is_test_cell(cell):
                        if cell.cell_type == "code":
                            kernel.run(cell, index)
                            bound += [n for n in top_level_names(cell.source) if n not in bound]
                        if not is_answer_cell(cell):  # released without solution or output
                            shown |= numbers_in(cell_text(cell))  # what a reader sees above
                        continue
                    grade_id = meta(cell)["grade_id"]
                    entries, wrong, cell.source, summary = _stamp_test_cell(
                        kernel,
                        nb,
                        index,
                        answer,
                        stamp_file,
                        f"{assignment}/{grade_id}",
                        shown | below[index] if search else None,
                        answers,
                        bound,
                    )
                    [hidden] = [e for e in entries if e["role"] == "record"]
                    if hidden["grade_id"] != grade_id:
                        raise ValueError(f"record({hidden['grade_id']!r}) in cell {grade_id}")
                    _same_rule(entries, hidden, grade_id)
                    key["setting"] = hidden["setting"]
                    reread = {
                        k: w
                        for e in entries
                        if e["role"] == "verify"
                        for k, w in e["hints"].items()
                        if k in (ELSE, YES_NO)
                    }
                    key["exercises"][grade_id] = key_entry(
                        hidden, meta(cell)["points"], summary.key, reread
                    )
                    print(summary.text(entries, wrong))
                    summary.check(entries, strict=search)
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
            raise ValueError(
                f"{grade_id}: the self-check forbids {tuple(entry['forbidden'])} "
                f"and the hidden test {tuple(hidden['forbidden'])}: give verify "
                f"the same forbidden="
            )


def _known(entries: list[dict], wrong: list[dict], hidden: dict) -> list[dict]:
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
