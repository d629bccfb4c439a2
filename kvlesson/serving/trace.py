"""The run step by step, for the small cases the notebooks draw and tabulate."""

from __future__ import annotations

from typing import Iterable

from kvlesson.arguments import whole
from kvlesson.serving.results import Step
from kvlesson.serving.server import Server
from kvlesson.serving.settings import Settings, start, takes_settings


@takes_settings(longest=None)
def trace(chats: Iterable, settings: Settings, *, max_steps: int = 10_000) -> list[Step]:
    """The run step by step: who runs, the blocks each holds, pauses and joins.

    For small cases (the hand case: two chats, four blocks, no ceiling, which
    is why `longest` defaults to None here); stops with an error past `max_steps`.
    """
    max_steps = whole("max_steps", max_steps, 1)
    server = Server(*start(chats, settings))
    steps = []
    while not server.done:
        if server.tally.steps >= max_steps:
            raise ValueError(
                f"trace is for small cases: the run passed max_steps={max_steps:,}; "
                "use serve() for large runs"
            )
        steps.append(server.step(record=snapshot))
    return steps


def snapshot(server: Server, joined: list[int], paused: list[int], start: float, seconds: float):
    """The step before the write: a maker of its Step, given who wrote and who finished."""
    running = tuple(server.running)
    held = {i: len(server.slots[i]) for i in running}
    private = {i: server.slots[i].count(None) for i in running}
    context = {i: server.context(i) for i in running}
    args = (
        server.tally.steps,
        running,
        held,
        context,
        server.pool.free,
        tuple(joined),
        tuple(paused),
    )
    rest = dict(
        slices=dict(server.slices),
        private=private,
        shared=len(server.pool.users),
        waiting=len(server.waiting),
        start=start,
    )
    return lambda wrote, finished: Step(
        *args, finished, seconds, server.tally.clock, wrote=wrote, **rest
    )
