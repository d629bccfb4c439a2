"""The second run: a graded notebook run again in a fresh box whose kvlesson lacks an
exercise's forbidden functions.

The marking decides what to compare and which cells to run
(`kvlesson.grading.marking.second_run`); this runs them: from the same sealed notebook,
with the same cell timeout, its kernel forked from the worker's zygote of the copy of
kvlesson without those functions (`kvlesson.grading.box.withheld`, made once per grading
run in the run's shared folder), its ledger watching nothing (nothing forbidden is left to
run), its figures not drawn. In that box no code in the student's process can compute a
withheld function, whatever it does there.

What it cannot catch: an answer worked out elsewhere (another machine, another notebook)
and typed in as numbers (or as a table of a function's values over every input): neither
run can tell it from the student's own work; and a course value computed with a forbidden
function, which the second run lacks as well, so an answer that reads one scores 0 (it did
use that function's result).
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from kvlesson.grading.box import withheld
from kvlesson.grading.box.execute import BoxedExecute
from kvlesson.grading.box.launch import Zygotes
from kvlesson.grading.marking import cell_roles, second_run
from kvlesson.grading.marking.marks import NotebookMark
from kvlesson.grading.marking.second_run import zeroed


@dataclass
class SecondRun:
    """What the second run of a submission needs: the box's settings (autograde's
    configuration), the run's shared folder, the sealed submission's folder, the worker's
    zygotes, and the assignment's ledger."""

    config: object
    shared: Path
    sealed: Path
    zygotes: Zygotes | None
    ledger: dict
    runs: int = 0
    log: list[str] = field(default_factory=list)  # what it did, for the run's log

    def check(
        self,
        first: nbformat.NotebookNode,
        key: dict,
        mark: NotebookMark,
        course: cell_roles.CourseCells,
        name: str,
    ) -> NotebookMark:
        """`mark` with every right answer that changes without its exercise's forbidden
        functions zeroed; if the second run cannot be made, every answer it had to check
        is zeroed, saying so (a submission that breaks it keeps no point it could not
        check)."""
        checks = second_run.to_compare(mark, key)
        if not checks:
            return mark
        start, runs = time.monotonic(), self.runs
        try:
            before = second_run.answers_of(first, key, list(checks))

            def run(names: tuple[str, ...], grade_ids: list[str], short: bool):
                cells = second_run.short_cells(first, grade_ids, key, course) if short else None
                return self.run_without(first, names, grade_ids, cells, key)

            changed = second_run.changed_answers(checks, before, run)
            words = {grade_id: c.words() for grade_id, c in changed.items()}
            self.log.append(
                f"kvlesson second run of {name}: {self.runs - runs} runs, {len(checks)} right answers "
                f"checked, {len(words)} changed, {time.monotonic() - start:.1f} s"
            )
        except Exception as error:
            words = {
                grade_id: f"scored 0: the second run without its forbidden functions "
                f"could not be made ({type(error).__name__}: {str(error)[:200]}); "
                "grade it again, or check it by hand"
                for grade_id in checks
            }
        return zeroed(mark, words)

    def run_without(
        self,
        first: nbformat.NotebookNode,
        names: tuple[str, ...],
        grade_ids: list[str],
        cells: list[int] | None,
        key: dict,
    ) -> second_run.Answers:
        """One run without `names`, of the cells `cells` of the first run's notebook (None:
        all of them up to the last test of `grade_ids`): the answers those tests record."""
        nb = copy.deepcopy(first)
        last = second_run.last_test(nb, grade_ids)
        kept = cells if cells is not None else range(last + 1)
        nb.cells = [nb.cells[i] for i in kept]
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        settings = copy.deepcopy(self.config)
        settings.BoxedExecute.package = str(withheld.package_without(names, self.shared))
        settings.BoxedExecute.ledger = {**self.ledger, "forbidden": []}
        settings.BoxedExecute.draw = False
        self.runs += 1
        execute = BoxedExecute(config=settings, log=logging.getLogger(__name__))
        execute.zygotes = self.zygotes
        execute.preprocess(nb, {"metadata": {"path": str(self.sealed)}})
        return second_run.answers_of(nb, key, grade_ids)
