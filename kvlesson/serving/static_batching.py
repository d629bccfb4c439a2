"""Static batching, for comparison with the server's continuous batching.

A static batch goes in together and nobody new gets in until every chat in
it has finished (seed 002: the meeting that cannot end until the person with
40 slides sits down). The server of this course batches continuously: a
finished chat's seat goes to the next one in the queue at the next step.
`static_batches` serves the chats in batches of `size`, each batch on the
same server starting when the one before it has finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kvlesson.arguments import whole
from kvlesson.serving.chats import as_chats
from kvlesson.serving.server import serve
from kvlesson.serving.settings import past_the_ceiling


@dataclass(frozen=True)
class Batched:
    """Per chat (in the order given): when its first and last tokens came, in seconds."""

    first_token_s: tuple[float, ...]
    last_token_s: tuple[float, ...]
    seconds: float


def static_batches(chats: Iterable, size: int, **settings) -> Batched:
    """Serve the chats in batches of `size` (in order), one batch after another.

    `settings` are `serve`'s (the pool, the ceiling, the hardware); within a
    batch the chats run together, as `serve` runs them with `cap=size`.
    """
    chats = as_chats(chats)
    size = whole("size", size, 1)
    first, last, clock = [], [], 0.0
    for start in range(0, len(chats), size):
        batch = serve(chats[start : start + size], size, **settings)
        if batch.refused:
            raise ValueError(
                f"{past_the_ceiling(batch.refused)}; static_batches needs "
                "every chat served (raise longest)"
            )
        first += [clock + t for t in batch.first_token_s]
        last += [clock + t for t in batch.last_token_s]
        clock += batch.seconds
    return Batched(tuple(first), tuple(last), clock)
