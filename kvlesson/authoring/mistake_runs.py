"""(In the kernel) each known mistake of an answer swapped in, what it gives noted, the right
answer put back: all of a test cell's mistakes in one round trip.

The build holds every known mistake (`kvlesson.authoring.mutants`) against a test cell twice:
the probe search asks what each gives on the inputs it planned
(`kvlesson.authoring.probe_inputs`), and the stamping notes what each gives on the cell's
probes (`kvlesson.grading.checks.selfcheck.wrong_values`). Each mistake is an answer cell of
its own, run as IPython runs a cell (magics and all), quietly: nothing it prints or raises
reaches the notebook. Run here, in the kernel, a mistake costs a fraction of a millisecond;
run as a request of its own from the build, about 4 ms of the two processes' time, some
2,000 times a build.
"""

from __future__ import annotations

import json
from typing import Callable

from kvlesson.authoring.probe_inputs import answers_on


class RightAnswerLost(RuntimeError):
    """The instructor's answer no longer runs after a mistake was swapped in."""


def _shell():
    return get_ipython()  # noqa: F821 (IPython's, in the kernel)


def _ran(shell, code: str) -> bool:
    """Run `code` as a cell of its own, unseen: whether it ran without raising."""
    from IPython.utils.capture import capture_output

    with capture_output():
        result = shell.run_cell(code, store_history=False)
    return result.success


def _each(codes: list[str], right: str, note: Callable[[int, bool], None]) -> None:
    """Swap in each code in turn and `note(index, whether it ran)` while it is in place;
    put `right` back after each."""
    shell = _shell()
    shown = (shell.showtraceback, shell.showsyntaxerror)
    shell.showtraceback = shell.showsyntaxerror = lambda *args, **kwargs: None
    try:
        for index, code in enumerate(codes):
            note(index, _ran(shell, code))
            if not _ran(shell, right):
                raise RightAnswerLost(f"the answer cell no longer runs after:\n{code}")
    finally:
        shell.showtraceback, shell.showsyntaxerror = shown


def search_values(codes: list[str], right: str, plan_path: str, out_path: str) -> None:
    """For each mistake's code: what it gives on every input planned in `plan_path`, or None
    where its code does not run; written to `out_path` as JSON, in order."""
    rows: list = []
    _each(
        codes,
        right,
        lambda _, ran: rows.append(answers_on(plan_path, _shell().user_ns) if ran else None),
    )
    with open(out_path, "w") as out:
        json.dump(rows, out)


def stamp_values(mistakes: list[tuple[str, str, str, str]], right: str, out_path: str) -> None:
    """For each (mistake, hint, code, fingerprint): note what the mistake gives on the last
    test cell's probes in the stamp file (`selfcheck.wrong_values`) when its code runs;
    whether each ran, written to `out_path` as JSON."""
    from kvlesson.grading.checks import selfcheck

    ran_each: list[bool] = []

    def note(index: int, ran: bool) -> None:
        mistake, hint, _, same = mistakes[index]
        if ran:
            selfcheck.wrong_values(mistake, hint, same)
        ran_each.append(ran)

    _each([code for _, _, code, _ in mistakes], right, note)
    with open(out_path, "w") as out:
        json.dump(ran_each, out)
