"""The settings an explorer is likely to show next, computed while the student looks.

A student moves a slider one step, looks, and moves it again, most often the same way. So
after each move the views of the next value either way along the slider just moved are
computed on one worker thread, a moment after the move (the new picture leaves the kernel
first). A move to one of them takes that view and only draws it; a move anywhere else
computes its view as before. A view is the model's pure result: the figure is drawn only by
the kernel's own thread.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterable

import ipywidgets as w

ENABLED = True  # benchmarks of the drawing alone switch it off
DELAY_S = 0.05  # after a move, before computing ahead: the kernel sends the new picture first
WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explorer-lookahead")


class Lookahead:
    """Views computed ahead, by setting (the controls' values)."""

    def __init__(self, compute: Callable[[tuple], Any]):
        self.compute = compute
        self.pending: dict[tuple, Future] = {}

    def view(self, setting: tuple) -> Any:
        """The view of `setting`: computed ahead (waited for, if it is being computed), or
        computed now."""
        future = self.pending.pop(setting, None)
        if future is None or future.cancel():
            return self.compute(setting)
        return future.result()

    def ahead(self, settings: Iterable[tuple]) -> None:
        """Compute these settings' views next, and forget the others not begun."""
        wanted = list(settings) if ENABLED else []
        for setting in [s for s in self.pending if s not in wanted]:
            self.pending.pop(setting).cancel()
        for setting in wanted:
            if setting not in self.pending:
                self.pending[setting] = WORKER.submit(self._later, setting)

    def _later(self, setting: tuple) -> Any:
        time.sleep(DELAY_S)
        return self.compute(setting)


def next_values(control: w.Widget) -> list:
    """The values one step either way from where a slider stands (none for other controls:
    a dropdown or a text box has no next value)."""
    step = getattr(control, "next_values", None)
    return step() if callable(step) else []


def next_settings(controls: list[w.Widget], moved: w.Widget) -> list[tuple]:
    """The settings one step either way along the control that moved, the others as they are."""
    if moved not in controls:
        return []
    at = controls.index(moved)
    now = [control.value for control in controls]
    return [tuple(now[:at] + [value] + now[at + 1 :]) for value in next_values(moved)]
