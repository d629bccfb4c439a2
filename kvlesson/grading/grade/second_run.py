"""The second run: each right answer of an exercise that forbids functions, worked out again
where those functions do not exist.

The box watches a submission's kernel (`kvlesson.grading.box.watch`, `ledger`), but the
watch lives in the student's own process, which can switch it off (a pipe kept and closed,
a thread it does not see, the kernel's own channel). So a forbidden function is put out of
reach instead: after autograde, a notebook with a right answer to an exercise that forbids
functions runs again in a fresh box whose kvlesson lacks them (`kvlesson.grading.box.
withheld`), and the answers of the two runs are compared, probe by probe, in the grade's own
normal forms. An answer that changes needed a function its exercise forbids: it scores 0,
with both answers in the flag. The class is impossible, not watched: in the second run no
code in the student's process can compute a withheld function, whatever it does there.

One second run withholds every forbidden function of the notebook's right answers at once;
an answer that changes there and whose exercise forbids fewer runs again without its own
ones only (an answer may use what another exercise forbids). The notebook runs as far as
its last test to compare, from the same sealed notebook, with the same cell timeout.

What it cannot catch: an answer worked out elsewhere (another machine, another notebook)
and typed in as numbers (or as a table of a function's values over every input): neither
run can tell it from the student's own work; and a course value computed with a forbidden
function, which the second run lacks as well, so an answer that reads one scores 0 (it did
use that function's result).
"""

from __future__ import annotations

import copy
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from kvlesson.grading.box import withheld
from kvlesson.grading.course.notebooks import grade_id_of
from kvlesson.grading.course.results import PASSED
from kvlesson.grading.marking.marks import NotebookMark, recorded, zeroed


@dataclass(frozen=True)
class Changed:
    """An answer that changed when worked out without `functions`: before and after."""

    functions: tuple[str, ...]
    before: list[str]
    after: list[str] | None  # None: the test gave no single record in the second run

    def words(self) -> str:
        """Why the answer scores 0, in words that name no right value: only what the
        answer gave without the functions (an error, or that it is another value)."""
        names = ", ".join(self.functions)
        errors = [a.removeprefix("error:") for a in self.after or () if a.startswith("error:")]
        gave = (
            "the test recorded no answer"
            if self.after is None
            else f"it raises {errors[0]}"
            if errors
            else "it gives other values"
        )
        return (
            f"scored 0: worked out again in a fresh box whose kvlesson lacks {names}, "
            f"its answer is not the same ({gave}): it needs a function this exercise "
            "asks you to do without"
        )


def to_compare(mark: NotebookMark, key: dict) -> dict[str, tuple[str, ...]]:
    """The exercises whose right answers the second run checks, with their forbidden
    functions: those that forbid some and scored points in the first run."""
    exercises = key["exercises"]
    return {
        m.grade_id: tuple(sorted(exercises[m.grade_id]["forbidden"]))
        for m in mark.marks
        if m.grade_id in exercises
        and m.outcome == PASSED
        and m.score > 0
        and exercises[m.grade_id]["forbidden"]
    }


def changed_answers(
    graded: Path,
    sealed: Path,
    key: dict,
    mark: NotebookMark,
    config,
    private: Path,
    shared: Path,
    spec: str,
) -> dict[str, Changed]:
    """For one graded notebook (`graded`, its first run; `sealed`, the notebook handed in),
    the answers that change without their exercises' forbidden functions. `config` is
    autograde's (the box's settings), `private` the submission's own folder, `shared` the
    run's folder for the withheld copies of kvlesson, `spec` the box's ledger file."""
    checks = to_compare(mark, key)
    if not checks:
        return {}
    first = nbformat.read(graded, as_version=4)
    before = {g: recorded(first, key["exercises"][g], g) for g in checks}
    changed: dict[str, Changed] = {}
    everything = tuple(sorted({name for names in checks.values() for name in names}))
    later: dict[tuple[str, ...], list[str]] = {}
    after = _second(first, sealed, everything, list(checks), key, config, private, shared, spec)
    for grade_id, names in checks.items():
        if after[grade_id] == before[grade_id]:
            continue
        if names == everything:
            changed[grade_id] = Changed(names, before[grade_id] or [], after[grade_id])
        else:
            later.setdefault(names, []).append(grade_id)
    for names, grade_ids in sorted(later.items()):
        again = _second(first, sealed, names, grade_ids, key, config, private, shared, spec)
        changed.update(
            {
                g: Changed(names, before[g] or [], again[g])
                for g in grade_ids
                if again[g] != before[g]
            }
        )
    return changed


def _second(
    first: nbformat.NotebookNode,
    sealed: Path,
    names: tuple[str, ...],
    grade_ids: list[str],
    key: dict,
    config,
    private: Path,
    shared: Path,
    spec: str,
) -> dict[str, list[str] | None]:
    """One second run without `names`: the answers the tests `grade_ids` record."""
    from kvlesson.grading.box.execute import BoxedExecute

    nb = copy.deepcopy(first)
    last = max(i for i, c in enumerate(nb.cells) if grade_id_of(c) in grade_ids)
    nb.cells = nb.cells[: last + 1]  # what comes after the last test cannot change its answer
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    run = len(list(private.glob("second-*.json"))) + 1  # a fresh one for each run
    work = private / f"second-{run}"
    work.mkdir()
    shutil.copy(sealed, work / sealed.name)  # the working copy holds what run 1's did
    ledger = private / f"second-{run}.json"  # no watching: nothing forbidden is left to run
    ledger.write_text(json.dumps({**json.loads(spec), "forbidden": []}))
    settings = copy.deepcopy(config)
    settings.BoxedExecute.package = str(withheld.package_without(names, shared))
    settings.BoxedExecute.ledger = str(ledger)
    BoxedExecute(config=settings).preprocess(nb, {"metadata": {"path": str(work)}})
    return {g: recorded(nb, key["exercises"][g], g) for g in grade_ids}


@dataclass(frozen=True)
class SecondRun:
    """What the second run of a submission needs (kvlesson.grading.grade.second_run): the
    box's settings, the submission's own folder, the run's shared folder, the ledger file
    and the sealed submission."""

    config: object
    private: Path
    shared: Path
    spec: str
    sealed: Path
    log: list[str] = field(default_factory=list)  # what it did, for the run's log

    def check(self, path: Path, key: dict, mark: NotebookMark) -> NotebookMark:
        """`mark` with every right answer that changes without its exercise's forbidden
        functions zeroed; if the second run cannot be made, every answer it had to check
        is zeroed, saying so (a submission that breaks it keeps no point it could not
        check)."""
        start, runs = time.monotonic(), len(list(self.private.glob("second-*.json")))
        try:
            changed = changed_answers(
                path,
                self.sealed / path.name,
                key,
                mark,
                self.config,
                self.private,
                self.shared,
                self.spec,
            )
            words = {grade_id: c.words() for grade_id, c in changed.items()}
            runs = len(list(self.private.glob("second-*.json"))) - runs
            self.log.append(
                f"kvlesson second run of {path.name}: {runs} runs, "
                f"{len(to_compare(mark, key))} right answers checked, "
                f"{len(words)} changed, {time.monotonic() - start:.1f} s"
            )
        except Exception as error:
            words = {
                grade_id: f"scored 0: the second run without its forbidden functions "
                f"could not be made ({type(error).__name__}: {str(error)[:200]}); "
                "grade it again, or check it by hand"
                for grade_id in to_compare(mark, key)
            }
        return zeroed(mark, words)
