"""Stamping the self-checks: the expected answers, computed from the instructor's solution.

`execute_and_stamp` runs an instructor notebook in a kernel started in stamp
mode. At each test cell, `kvlesson.grading.checks.selfcheck` notes the right answers of the
cell's probes; then every known mistake (`kvlesson.authoring.mutants`) of the answer
cell above is swapped in, out of the stored notebook's sight, to note the wrong
answers it gives, and the right answer cell is run again (`kvlesson.authoring.mistake_runs`).
The cell's `stamp=""` arguments get the setting, a salt and the salted hashes (right answer,
and each known mistake's answer with its hint: `kvlesson.authoring.stamps`); the grader's key
gets the right answers in clear, with the points and the functions each exercise may not
call (`kvlesson.authoring.key_entries`).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from kvlesson.authoring import mutants, probe_search
from kvlesson.authoring.kernel import Kernel, top_level_names
from kvlesson.authoring.key_entries import key_entry, known_mistakes, same_rule
from kvlesson.authoring.search_cache import SearchCache
from kvlesson.authoring.shown_numbers import cell_text, gives_away, numbers_around, numbers_in
from kvlesson.authoring.stamp_places import put_stamps, stamp_key, with_stamps
from kvlesson.authoring.stamps import hint_words, make_stamp
from kvlesson.authoring.summary import Summary
from kvlesson.grading.checks import selfcheck
from kvlesson.grading.checks.messages import ELSE, YES_NO
from kvlesson.grading.course.known_mistakes import rank
from kvlesson.grading.course.notebooks import answer_code, is_answer_cell, is_test_cell, meta

TIMEOUT = 300  # seconds for one cell; the slowest cell of the course takes a few


@dataclass
class Walk:
    """One notebook's build, cell by cell: its kernel, its scratch folder, what a reader has
    seen so far (`shown`), the names the cells bound, the answer cell last met, the stamps
    made, and a digest of every code cell run (the kernel's state, for the search's cache)."""

    kernel: Kernel
    scratch: Path
    assignment: str
    search: bool
    cache: SearchCache | None
    shown: set[float] = field(default_factory=set)
    bound: list[str] = field(default_factory=list)
    answer: object = None
    stamps: dict[str, str] = field(default_factory=dict)
    state: object = field(default_factory=hashlib.sha256)

    @property
    def stamp_file(self) -> Path:
        return self.scratch / "stamps.jsonl"

    def ran(self, cell) -> None:
        """A cell that is no test cell ran: what it binds, and what a reader sees of it."""
        self.state.update(cell.source.encode() + b"\0")
        if cell.cell_type == "code":
            self.bound += [n for n in top_level_names(cell.source) if n not in self.bound]
        if not is_answer_cell(cell):  # released without solution or output
            self.shown |= numbers_in(cell_text(cell))  # what a reader sees above


def execute_and_stamp(
    nb: nbformat.NotebookNode,
    folder: Path,
    assignment: str,
    search: bool = True,
    cache: SearchCache | None = None,
) -> dict:
    """Execute `nb` in `folder` top to bottom, stamping its test cells in place (after
    the probe search, with `search`; a test cell unchanged since a search `cache` holds is
    not searched again); the assignment's key: {"assignment", "setting", "exercises":
    {grade_id: ...}}. Prints what it did to each test cell (`Summary`) and stops where the
    instructor's answers disagree with the exercise's authority, or where the self-check
    names a mistake the key cannot. The kernel talks over Unix sockets in a private folder,
    never TCP: no other account of the machine can reach it, and ipykernel has no reason to
    warn that it runs over TCP without encryption (once per notebook)."""
    from nbclient import NotebookClient
    from traitlets.config import Config

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
        stamp_mode = {**os.environ, selfcheck.STAMP_FILE: str(Path(scratch) / "stamps.jsonl")}
        with client.setup_kernel(env=stamp_mode):  # stamp mode, for this kernel only
            walk = Walk(Kernel(client), Path(scratch), assignment, search, cache)
            for beside in sorted(p for p in Path(folder).iterdir() if p.suffix != ".ipynb"):
                if beside.is_file():  # what the notebook may read (a model's config.json)
                    walk.state.update(beside.name.encode() + b"\0" + beside.read_bytes())
            key = _walk(walk, nb, below)
    return key


def _walk(walk: Walk, nb: nbformat.NotebookNode, below: dict[int, set[float]]) -> dict:
    """Run every cell of `nb` in order, stamping each test cell; the assignment's key."""
    key: dict = {"assignment": walk.assignment, "setting": None, "exercises": {}}
    for index, cell in enumerate(nb.cells):
        if is_answer_cell(cell):
            walk.answer = cell
        if not is_test_cell(cell):
            if cell.cell_type == "code":
                walk.kernel.run(cell, index)
            walk.ran(cell)
            continue
        shown = walk.shown | below[index] if walk.search else None
        entries, wrong, cell.source, summary = _stamp_test_cell(walk, nb, index, shown)
        key["setting"], key["exercises"][meta(cell)["grade_id"]] = _exercise_key(
            cell, entries, summary
        )
        walk.state.update(cell.source.encode() + b"\0")  # it ran, stamped
        print(summary.text(entries, wrong))
        summary.check(entries, strict=walk.search)
    if walk.stamps:
        put_stamps(nb, walk.stamps)
    return key


def _exercise_key(cell, entries: list[dict], summary: Summary) -> tuple[dict, dict]:
    """The setting a test cell ran at, and its exercise's entry in the key."""
    grade_id = meta(cell)["grade_id"]
    [hidden] = [e for e in entries if e["role"] == "record"]
    if hidden["grade_id"] != grade_id:
        raise ValueError(f"record({hidden['grade_id']!r}) in cell {grade_id}")
    same_rule(entries, hidden, grade_id)
    reread = {
        k: w
        for e in entries
        if e["role"] == "verify"
        for k, w in e["hints"].items()
        if k in (ELSE, YES_NO)
    }
    return hidden["setting"], key_entry(hidden, meta(cell)["points"], summary.key, reread)


def _stamp_test_cell(
    walk: Walk, nb, index: int, shown: set[float] | None
) -> tuple[list[dict], list[dict], str, Summary]:
    """Run test cell `index` in stamp mode (after the probe search, unless `shown`, the
    numbers a reader sees around it, is None), then the known mistakes of the answer cell
    above; the cell's entries, what each known mistake gave, its source with each verify's
    `stamp=` naming its stamp (kept in `walk.stamps`), and what the build did."""
    cell = nb.cells[index]
    where = f"{walk.assignment}/{meta(cell).get('grade_id', index)}"
    right = answer_code(walk.answer.source) if walk.answer is not None else ""
    summary = Summary(where)
    like = _prepare(walk, cell.source, right, where)
    same: dict[str, str] = {}
    if right and shown is not None:
        found = _searched(walk, cell.source, right, where, shown, like)
        cell.source, same, summary.choice = found.source, found.same, found.choice
        found.say()
    walk.stamp_file.write_text("")
    walk.kernel.must(
        "from kvlesson.grading.checks import selfcheck as _kvlesson_selfcheck\n"
        "_kvlesson_selfcheck.start_cell()"
    )
    walk.kernel.run(cell, index)
    if right:
        _note_mistakes(walk, cell.source, right, like, same, summary)
    summary.authority = _authority(walk.kernel, cell.source, right, walk.scratch)
    entries, wrong = _stamp_rows(walk.stamp_file, where)
    summary.key = known_mistakes(entries, wrong, next(e for e in entries if e["role"] == "record"))
    if shown is not None:
        summary.in_view = [
            f"{probe['label']} ({'self-check' if entry['role'] == 'verify' else 'hidden'}) "
            f"gives {probe['normal'].split(':', 1)[1]}"
            for entry in entries
            for probe in entry["probes"]
            if gives_away(probe["normal"], shown)
        ]
    return entries, wrong, _stamped(walk, cell.source, entries, wrong, summary), summary


def _prepare(walk: Walk, source: str, right: str, where: str) -> dict:
    """Before a test cell: no rules declared yet, its probes readable (else a clear stop);
    the notebook's variables of the same kind as each argument its probes pass."""
    walk.kernel.must(
        "from kvlesson.grading.checks import rules as _kvlesson_rules\n_kvlesson_rules.forget()"
    )
    try:
        written = probe_search.Probes.of(source)
    except probe_search.UnreadProbes as error:
        raise probe_search.UnreadProbes(f"{where.split('/')[-1]}: {error}") from None
    if not (right and written.found):
        return {}
    alike = walk.scratch / "alike.json"
    walk.kernel.must(
        f"{source}\nfrom kvlesson.authoring import probe_inputs as _pi\n"
        f"_pi.alike({source!r}, {walk.bound!r}, {str(alike)!r})"
    )
    return {
        f: {int(k): v for k, v in by.items()} for f, by in json.loads(alike.read_text()).items()
    }


def _searched(
    walk: Walk, source: str, right: str, where: str, shown: set[float], like: dict
) -> probe_search.Search:
    """The probe search of a test cell, or what the cache kept of the same search."""
    if walk.cache is None:
        return probe_search.searched(walk.kernel, source, right, walk.scratch, where, shown, like)
    asked = walk.cache.ask(walk.state.hexdigest(), source, right, shown, like)
    kept = walk.cache.get(asked)
    if kept is not None:
        return kept
    found = probe_search.searched(walk.kernel, source, right, walk.scratch, where, shown, like)
    walk.cache.put(asked, found)
    return found


def _note_mistakes(
    walk: Walk, source: str, right: str, like: dict, same: dict[str, str], summary: Summary
) -> None:
    """Swap in every known mistake of `right`, noting in the stamp file what each gives on
    the test cell's probes (one round trip: `kvlesson.authoring.mistake_runs`)."""
    copied = probe_search.examples(right, probe_search.Probes.of(source))
    found = mutants.mutants(
        right, examples=copied, like=like, declared=probe_search.declared_mistakes(source)
    )
    rows = [(m.mistake, m.hint, m.source, same.get(m.source, "")) for m in found]
    out = walk.scratch / "ran.json"
    walk.kernel.batch(
        "from kvlesson.authoring import mistake_runs as _kvlesson_runs\n"
        f"_kvlesson_runs.stamp_values({rows!r}, {right!r}, {str(out)!r})"
    )
    for mutant, ran in zip(found, json.loads(out.read_text()), strict=True):
        summary.known.append(mutant.mistake)
        if not ran:
            summary.dropped.append((mutant.mistake, "its code does not run"))


def _stamp_rows(stamp_file: Path, where: str) -> tuple[list[dict], list[dict]]:
    """What the test cell's calls wrote in stamp mode: its entries (verify and record, in
    order) and the known mistakes' rows, most telling first."""
    rows = [json.loads(line) for line in stamp_file.read_text().splitlines() if line]
    entries = [row for row in rows if row["role"] in ("verify", "record")]
    wrong = sorted(
        (row for row in rows if row["role"] == "mistake"), key=lambda row: rank(row["mistake"])
    )
    hidden = [entry for entry in entries if entry["role"] == "record"]
    if len(hidden) != 1:
        raise ValueError(f"{where}: {len(hidden)} record calls; a test cell has exactly one")
    return entries, wrong


def _stamped(walk: Walk, source: str, entries: list, wrong: list, summary: Summary) -> str:
    """The test cell's source with each verify call naming its stamp, the stamps kept in
    `walk.stamps` for the setup cell; the hints the self-check can give, in `summary`."""
    named = {known["words"] for known in summary.key}
    verified = [(n, e) for n, e in enumerate(entries) if e["role"] == "verify"]
    keys = [stamp_key(summary.where, number) for number in range(len(verified))]
    walk.stamps.update(
        zip(keys, (make_stamp(e, wrong, n, summary.where, named) for n, e in verified))
    )
    summary.hinted = sorted({words for n, e in verified for words in hint_words(e, wrong, n)})
    return with_stamps(source, keys)


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
