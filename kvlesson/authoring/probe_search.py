"""Probes that tell every known mistake from the right answer, found by search in the build.

A test cell checks a function exercise by calling the student's function on a few inputs:
its self-check (`verify`, which the student sees) and its hidden test (`record`, which the
grade reads). An input on which a wrong solution gives the right answer anyway says nothing
about it: `steps_to_read(300, 256, 0)` cannot tell a solution that ignores `writing` from
the right one. So the build holds every known mistake of the answer
(`kvlesson.authoring.mutants`) against inputs around the cell's own (each number one up and
one down, doubled and halved, 16 either side, and the exact places where the instructor's
answer changes; each name swapped for another the cell uses in that place), and where a
mistake that is wrong somewhere gives the right answer on every visible or on every hidden
probe, it adds to that side the input that catches the most such mistakes, until each is
caught on both. Existing probes stay where they are, so a build that finds nothing to add
changes nothing; a visible input is never added to the hidden side, nor a hidden one to the
visible side.

Three parts: `kvlesson.authoring.probe_inputs` runs in the notebook's kernel (it plans the
inputs, inside the exercise's declared domain, and calls the live functions);
`kvlesson.authoring.probe_cells` reads the cell's probes (`Probes.of`) and writes added ones
in (`rewrite`); this module chooses what to add (`choose`), in the build.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from kvlesson.authoring import mutants
from kvlesson.authoring.probe_cells import (  # noqa: F401 (the search's names, kept here)
    SIDES,
    Probes,
    UnreadProbes,
    WrittenProbe,
    _side_calls,
    declared_mistakes,
    examples,
    rewrite,
)
from kvlesson.authoring.shown_numbers import gives_away

MOST_ADDED = 6  # probes added to one side of one cell at most


@dataclass(frozen=True)
class Choice:
    """What the search adds to each side, and the mistakes no input it tried catches on
    that side (by their place in the list of mistakes)."""

    added: dict[str, list]
    missed: dict[str, set[int]]


@dataclass
class _Side:
    """One side's picking: the inputs it may still add (`pool`, by place in the plan), the
    inputs it holds (`own`: its written probes, then the added ones), what it added, and
    the (function, arguments) already on either side (`used`, shared by both)."""

    inputs: list[dict]
    caught: list[set[int]]
    own: list[int]
    pool: list[int]
    used: set
    added: list[dict] = field(default_factory=list)

    def take(self, best: int) -> None:
        row = self.inputs[best]
        self.added.append(row)
        self.used.add((row["function"], tuple(row["args"])))
        self.own.append(best)
        self.pool[:] = [i for i in self.pool if self.inputs[i]["args"] != row["args"]]

    def catch(self, missed: set[int]) -> set[int]:
        """Add, greedily, the input that catches the most `missed` mistakes (the first in
        plan order on a tie) until none is missed or none helps; the mistakes left."""
        while missed and len(self.added) < MOST_ADDED:
            best = max(self.pool, key=lambda i: (len(self.caught[i] & missed), -i), default=None)
            if best is None or not self.caught[best] & missed:
                break
            self.take(best)
            missed = missed - self.caught[best]
        return missed

    def tell_apart(self, wrong: list, words: list[str], wrong_somewhere: set[int]) -> None:
        """Add inputs that tell apart mistakes with other `words` which give the same
        answers on every probe of this side, while one helps."""
        while len(self.added) < MOST_ADDED:
            now = _alike(self.own, wrong, words, wrong_somewhere)
            best = min(
                self.pool,
                key=lambda i: (_alike(self.own + [i], wrong, words, wrong_somewhere), i),
                default=None,
            )
            if best is None or _alike(self.own + [best], wrong, words, wrong_somewhere) >= now:
                break
            self.take(best)


def choose(
    cell: Probes,
    inputs: list[dict],
    wrong: list[list[str | None]],
    words: list[str] | None = None,
    shown: set[float] = frozenset(),
) -> Choice:
    """The inputs to add to each side so that every mistake that is wrong on some input is
    wrong on a visible and on a hidden probe, greedily, the input that catches most first
    (the first in plan order on a tie); then, on each side, inputs that tell apart
    mistakes with other `words` which give the same answers on every probe of that side (a
    hint is shown, and a mistake named by the grade, only for answers one mistake gives).
    No input is added whose answer is one of the numbers `shown` around the exercise."""
    caught = [
        {m for m, answers in enumerate(wrong) if answers[i] != row["right"]}
        for i, row in enumerate(inputs)
    ]
    wrong_somewhere = set().union(*caught) if caught else set()
    index = {(row["side"], row["text"]): i for i, row in enumerate(inputs)}
    added: dict[str, list] = {}
    left: dict[str, set[int]] = {}
    used = {(p.function, p.args) for p in cell.found}  # inputs on either side already
    for side in reversed(SIDES):  # the hidden test first: the grade rests on it
        written = cell.side(side)
        own = [
            index[side, p.element(p.args)] for p in written if (side, p.element(p.args)) in index
        ]
        added[side], left[side] = [], set()
        if not own:  # this side's probes are not calls on written inputs: nothing to add
            continue
        pool = [
            i
            for i, row in enumerate(inputs)
            if (row["function"], tuple(row["args"])) not in used
            and row["side"] == side
            and _same_function(row, written)
            and not gives_away(row["right"], shown)
        ]
        picking = _Side(inputs, caught, own, pool, used, added[side])
        left[side] = picking.catch(wrong_somewhere - set().union(*(caught[i] for i in own)))
        if words and not any(".yes_no(" in p.template for p in written):  # yes/no: no hints
            picking.tell_apart(wrong, words, wrong_somewhere)
    return Choice(added, left)


def _alike(
    probes: list[int], wrong: list[list[str | None]], words: list[str], wrong_somewhere: set[int]
) -> int:
    """Pairs of mistakes with other words that give the same answers on `probes`."""
    groups: dict[tuple, set[str]] = {}
    counts: dict[tuple, int] = {}
    for m in wrong_somewhere:
        answers = tuple(wrong[m][i] for i in probes)
        groups.setdefault(answers, set()).add(words[m])
        counts[answers] = counts.get(answers, 0) + 1
    return sum(counts[a] * (counts[a] - 1) // 2 for a, w in groups.items() if len(w) > 1)


def _same_function(row: dict, side_probes: list[WrittenProbe]) -> bool:
    return any(p.function == row["function"] and p.template == row["template"] for p in side_probes)


@dataclass
class Search:
    """A test cell's probe search: its source with the added inputs, per mistake's code a
    fingerprint of what it gives on every input tried (two mistakes with one fingerprint
    are one wrong function), the choice (None: the cell calls no function on written
    inputs), and what nothing it tried catches, in words."""

    source: str
    same: dict[str, str] = field(default_factory=dict)
    choice: Choice | None = None
    uncaught: list[str] = field(default_factory=list)

    def say(self) -> None:
        for line in self.uncaught:
            print(line)


def searched(
    kernel,
    source: str,
    right: str,
    scratch: Path,
    where: str,
    shown: set[float] = frozenset(),
    like: dict | None = None,
) -> Search:
    """In the build, with the notebook's `kernel` (`kvlesson.authoring.stamping`): the test
    cell `source` with the inputs this search adds so that every known mistake of the answer
    `right` fails a visible and a hidden probe (the same `source` when its probes already
    do). Run with the right answer defined; `shown`: the numbers a reader sees around the
    exercise; `like`: the notebook's variables of the same kind as each argument
    (`probe_inputs.alike`). A written probe outside the exercise's declared domain stops the
    build: its key would answer a question the exercise does not ask."""
    cell = Probes.of(source)
    if not cell.found:
        return Search(source)
    plan = _plan(kernel, source, scratch, where)
    inputs = json.loads(plan.read_text())["inputs"]
    found = mutants.mutants(
        right, examples=examples(right, cell), like=like, declared=declared_mistakes(source)
    )
    out = scratch / "answers.json"
    kernel.batch(
        "from kvlesson.authoring import mistake_runs as _kvlesson_runs\n"
        f"_kvlesson_runs.search_values({[m.source for m in found]!r}, {right!r}, "
        f"{str(plan)!r}, {str(out)!r})"
    )
    rows = json.loads(out.read_text())
    ran = [(m, row) for m, row in zip(found, rows, strict=True) if row is not None]
    wrong = [row for _, row in ran]
    choice = choose(cell, inputs, wrong, [m.hint for m, _ in ran], shown)
    return Search(
        rewrite(cell, choice.added),
        {m.source: hashlib.sha256(json.dumps(row).encode()).hexdigest()[:16] for m, row in ran},
        choice,
        [
            f"{where}: no input tried catches the mistake {ran[number][0].mistake} on the "
            f"{side} side"
            for side, missed in choice.missed.items()
            for number in sorted(missed)
        ],
    )


def _plan(kernel, source: str, scratch: Path, where: str) -> Path:
    """Plan the inputs around the cell's probes, in the kernel (with the right answer
    defined); a clear stop on a written probe outside the declared domain."""
    plan, outside = scratch / "plan.json", scratch / "outside.json"
    kernel.must(
        f"{source}\nfrom kvlesson.authoring import probe_inputs as _kvlesson_search\n"
        f"_kvlesson_search.plan({source!r}, {str(plan)!r})\n"
        f"open({str(outside)!r}, 'w').write(__import__('json').dumps("
        f"_kvlesson_search.outside({source!r}, get_ipython().user_ns)))"
    )
    refused = json.loads(outside.read_text())
    if refused:
        raise ValueError(
            f"{where}: these probes are outside the exercise's declared domain "
            f"(declare(domain=...)): {', '.join(refused)}"
        )
    return plan
