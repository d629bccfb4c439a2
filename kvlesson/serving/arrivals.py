"""Chats that arrive over time, and chats that share a beginning.

The lesson's chats all wait at time zero. A `Request` is a chat with an
arrival time (seconds from the start of the run) and, for prefix caching,
the shared texts it starts with: a system prompt every chat of an app sends,
or the earlier turns of a conversation, which a chat client resends every turn.

`shared` lists those texts as (name, tokens), each one the beginning of the
next: (("system", 500), ("alice", 2_400)) says the first 500 tokens are the
system prompt and the first 2,400 are Alice's conversation so far (which
starts with the system prompt). Two chats hold the same block when both name
the same text for it.

Arrival times are fixed in advance (an open loop): a user's next turn comes
at its time even if the server is late with the last reply.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Iterable

from kvlesson.arguments import positive, whole
from kvlesson.serving.chats import Chat, as_chats


@dataclass(frozen=True)
class Request(Chat):
    """A chat that arrives `arrives` seconds into the run and starts with the `shared` texts."""

    arrives: float = 0.0
    shared: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("arrives", self.arrives, zero_ok=True)
        if not isinstance(self.shared, tuple):
            raise TypeError(f"shared must be a tuple of (name, tokens) pairs, got {self.shared!r}")
        low = 1
        for level in self.shared:
            if not (isinstance(level, tuple) and len(level) == 2 and isinstance(level[0], str)):
                raise TypeError(f"each shared text must be a (name, tokens) pair, got {level!r}")
            whole(f"tokens of shared text {level[0]!r}", level[1], low, self.tokens)
            low = level[1] + 1


def as_requests(chats: Iterable) -> list[Chat]:
    """The chats as the servers take them: a Request as it is, a Chat as it is (it waits
    from time zero and shares nothing), a (prompt, reply) pair as a Chat."""
    if type(chats) is list and chats and all(type(chat) is Chat for chat in chats):
        return chats  # the sweep's case: checked already (a Chat checks itself when made)
    return as_chats(chats)


def poisson_arrivals(chats: Iterable, rate: float, seed: int = 0) -> list[Request]:
    """The chats, in order, arriving at `rate` chats a second on average (a Poisson process:
    independent gaps drawn from an exponential distribution with `random.Random(seed)`)."""
    chats = as_chats(chats)
    rate = positive("rate", rate)
    rng = random.Random(whole("seed", seed, 0))
    clock, out = 0.0, []
    for chat in chats:
        clock += rng.expovariate(rate)
        out.append(Request(chat.prompt, chat.reply, clock))
    return out


def burst_arrivals(chats: Iterable, size: int, every: float) -> list[Request]:
    """The chats, in order, in bursts of `size` that arrive together every `every` seconds
    (the first burst at time 0)."""
    chats = as_chats(chats)
    size = whole("size", size, 1)
    every = positive("every", every)
    return [Request(chat.prompt, chat.reply, (i // size) * every) for i, chat in enumerate(chats)]


def office_day(
    people: int = 30,
    turns: int = 8,
    system: int = 400,
    seed: int = 0,
    think: float = 60.0,
    message: tuple[int, int] = (20, 400),
    reply: tuple[int, int] = (40, 400),
) -> list[Request]:
    """Multi-turn conversations: `people` users, each sending `turns` messages.

    Every user starts at a random moment of the first `think` seconds and sends
    the next turn `think` seconds (on average, exponential) after the last one
    was sent. A turn's prompt is the app's system prompt (`system` tokens), the
    whole conversation so far (earlier messages and replies) and a new message;
    messages and replies are log-uniform in their ranges, from `random.Random(seed)`.
    """
    people = whole("people", people, 1)
    turns = whole("turns", turns, 1)
    system = whole("system", system, 1)
    think = positive("think", think)
    rng = random.Random(whole("seed", seed, 0))

    def log_uniform(low: int, high: int) -> int:
        return round(math.exp(rng.uniform(math.log(low), math.log(high))))

    out = []
    for person in range(people):
        clock, history = rng.uniform(0, think), system
        for _ in range(turns):
            prompt = history + log_uniform(*message)
            answer = log_uniform(*reply)
            out.append(
                Request(
                    prompt, answer, clock, (("system", system), (f"user {person}", prompt + answer))
                )
            )
            history = prompt + answer
            clock += rng.expovariate(1 / think)
    return sorted(out, key=lambda request: request.arrives)


def agents(
    count: int = 6,
    requests: int = 6,
    seed: int = 0,
    prompt: tuple[int, int] = (4_000, 28_000),
    reply: tuple[int, int] = (200, 1_500),
    every: float = 20.0,
) -> list[Request]:
    """Coding agents (seed 001): `count` agents, each sending `requests` long requests, the
    first within 5 s, then `every` seconds apart on average (exponential); prompt and reply
    lengths uniform in their ranges, from `random.Random(seed)`."""
    count = whole("count", count, 1)
    requests = whole("requests", requests, 1)
    every = positive("every", every)
    rng = random.Random(whole("seed", seed, 0))
    out = []
    for _ in range(count):
        clock = rng.uniform(0, 5)
        for _ in range(requests):
            out.append(Request(rng.randint(*prompt), rng.randint(*reply), clock))
            clock += rng.expovariate(1 / every)
    return sorted(out, key=lambda request: request.arrives)
