"""The run step by step, for the small cases the notebooks draw and tabulate."""

from __future__ import annotations

from typing import Iterable

from kvlesson.arguments import whole
from kvlesson.memory.floor import RESERVE_BYTES
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.serving.results import Step
from kvlesson.serving.server import Server
from kvlesson.serving.settings import WHOLE_PROMPT, start


def trace(
    chats: Iterable,
    cap: int,
    share: int | None = None,
    longest: int | None = None,
    reserved: bool = False,
    *,
    blocks: int | None = None,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
    budget: int | None = None,
    prefix_caching: bool = False,
    admission: int | None = None,
    admit_rule: str = WHOLE_PROMPT,
    max_steps: int = 10_000,
) -> list[Step]:
    """The run step by step: who runs, the blocks each holds, pauses and joins.

    For small cases (the hand case: two chats, four blocks, no ceiling, which
    is why `longest` defaults to None here); stops with an error past `max_steps`.
    """
    max_steps = whole("max_steps", max_steps, 1)
    server = Server(
        *start(
            chats,
            cap,
            share,
            longest,
            reserved,
            blocks,
            gpu,
            model,
            reserve_bytes,
            budget,
            prefix_caching,
            admission,
            admit_rule,
        )
    )
    steps = []
    while not server.done:
        if server.tally.steps >= max_steps:
            raise ValueError(
                f"trace is for small cases: the run passed max_steps={max_steps:,}; "
                "use serve() for large runs"
            )
        steps.append(server.step(record=True))
    return steps
