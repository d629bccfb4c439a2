"""The toy server, one step at a time: continuous batching with a pool of blocks.

Each step, in this order:

1. Grow.  Every running chat, oldest first, whose next token starts a new
   block takes one. If none is free, the newest running chat is paused: it
   gives back all its blocks, keeps what it wrote and goes to the front of
   the queue (its cache will be rebuilt when it rejoins).
2. Join.  If nobody was paused, waiting chats join in order while fewer than
   `cap` run and the free blocks cover the next token (no skipping ahead).
3. Time.  The step reads the weights and every running chat's cache, and
   does the arithmetic for one token per chat, or for the whole context of a
   chat that joined now: step time = max(arithmetic / peak, bytes / bandwidth).
4. Write. Every running chat writes one token; a chat that reaches its reply
   length finishes and frees its blocks.

This module is the reference the course shows: plain and slow. `fast.py`
gives the same results for the sliders and sweeps.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable

from kvlesson.chats import Chat, as_chats
from kvlesson.floor import (BLOCK_TOKENS, RESERVE_BYTES, ServerWontStart, blocks_for,
                            check_starts, memory_parts)
from kvlesson.specs import A100_80GB, LLAMA_31_8B, GPU, Model
from kvlesson.valid import flag, of_type, positive, whole

LESSON_SHARE = 90  # the lesson's memory share, in percent
LESSON_LONGEST = 8_000  # the lesson's ceiling, in tokens


@dataclass(frozen=True)
class Setup:
    """What a run is served with: the pool, the ceiling, the cap and the hardware.

    `longest` is None for no ceiling. `reserved` holds the full ceiling for
    every chat from the moment it joins, instead of handing out blocks as it grows.
    """

    cap: int
    blocks: int
    longest: int | None
    reserved: bool
    gpu: GPU
    model: Model

    def refuses(self, chat: Chat) -> bool:
        """True for a chat turned away before the run: it passes the ceiling,
        or (with no ceiling) it could not fit in the whole pool."""
        if self.longest is not None:
            return chat.tokens > self.longest
        return chat.tokens > self.blocks * BLOCK_TOKENS

    def join_need(self, context: int) -> int:
        """Blocks a chat takes when it joins with `context` tokens already written."""
        return blocks_for(self.longest) if self.reserved else blocks_for(context + 1)

    def step_seconds(self, tokens_read: int, cache_tokens: int) -> float:
        """One step: the arithmetic for the tokens read, or the bytes moved (weights
        and every running chat's cache), whichever takes longer."""
        model, gpu = self.model, self.gpu
        compute = 2 * model.params * tokens_read / gpu.peak_flops
        memory = (model.weights_bytes + model.bytes_per_token * cache_tokens) / gpu.bandwidth
        return max(compute, memory)


def make_setup(cap: int, share: int | None = None, longest: int | None = LESSON_LONGEST,
               reserved: bool = False, blocks: int | None = None, gpu: GPU = A100_80GB,
               model: Model = LLAMA_31_8B, reserve_bytes: float = RESERVE_BYTES) -> Setup:
    """Check the settings and size the pool; raise ServerWontStart if it cannot start.

    The pool comes from `share` (default 90%) or, instead, straight from `blocks`.
    """
    cap = whole("cap", cap, 1)
    reserved = flag("reserved", reserved)
    of_type("gpu", gpu, GPU)
    of_type("model", model, Model)
    if longest is not None:
        longest = whole("longest", longest, 1)
    elif reserved:
        raise ValueError("reserved=True needs a ceiling: give longest (tokens, 1 or more)")
    if blocks is None:
        parts = memory_parts(LESSON_SHARE if share is None else share, gpu, model, reserve_bytes)
        if longest is not None:
            check_starts(parts, longest)
        blocks = parts.blocks
    else:
        if share is not None:
            raise ValueError("give the pool as share (percent) or as blocks, not both")
        blocks = whole("blocks", blocks, 1)
        positive("reserve_bytes", reserve_bytes, zero_ok=True)  # unused here, but still checked
        if longest is not None and blocks < blocks_for(longest):
            raise ServerWontStart(
                f"blocks must be at least {blocks_for(longest):,} to hold one chat of the "
                f"longest length ({longest:,} tokens), got {blocks:,}")
    return Setup(cap, blocks, longest, reserved, gpu, model)


@dataclass(frozen=True)
class ServeResult:
    """What a run reports. Times in seconds unless the name says ms.

    `first_token_s` and `last_token_s` give, per chat in the order the chats
    were given, when its first and last tokens came (None for a refused chat).
    """

    cap: int
    blocks: int
    tokens: int
    seconds: float
    steps: int
    pauses: int
    rebuilt_tokens: int
    avg_running: float
    wait_ms: float
    refused: int
    first_token_s: tuple[float | None, ...]
    last_token_s: tuple[float | None, ...]

    @property
    def tokens_per_s(self) -> float:
        """Reply tokens written per second, all chats together."""
        return self.tokens / self.seconds


def summarize(setup: Setup, chats: list[Chat], seconds: float, steps: int, pauses: int,
              rebuilt: int, busy: float, first: list, last: list) -> ServeResult:
    """The reported figures of a finished run; `busy` is the sum of step time x chats running.

    The wait between words is worked out per chat, (last - first) / (reply - 1),
    then averaged over chats (chats of one token have no gap and are left out;
    with none left it is NaN).
    """
    served = [i for i, t in enumerate(first) if t is not None]
    gaps = [(last[i] - first[i]) / (chats[i].reply - 1) for i in served if chats[i].reply > 1]
    wait = 1000 * sum(gaps) / len(gaps) if gaps else float("nan")
    return ServeResult(
        cap=setup.cap, blocks=setup.blocks, tokens=sum(chats[i].reply for i in served),
        seconds=seconds, steps=steps, pauses=pauses, rebuilt_tokens=rebuilt,
        avg_running=busy / seconds, wait_ms=wait, refused=len(chats) - len(served),
        first_token_s=tuple(first), last_token_s=tuple(last))


def accepted(setup: Setup, chats: list[Chat]) -> list[int]:
    """Indices of the chats that are served; the rest are refused (and counted)."""
    ids = [i for i, chat in enumerate(chats) if not setup.refuses(chat)]
    if not ids:
        ceiling = f"{setup.longest:,} tokens" if setup.longest else f"the pool of {setup.blocks:,} blocks"
        raise ValueError(f"every chat passes the ceiling ({ceiling}); nothing to serve")
    return ids


@dataclass(frozen=True)
class Step:
    """One step of a trace: who ran, the blocks each held and the tokens in its cache
    while the step ran, the free blocks, and who joined, was paused or finished."""

    step: int
    running: tuple[int, ...]
    held: dict[int, int]
    context: dict[int, int]
    free: int
    joined: tuple[int, ...]
    paused: tuple[int, ...]
    finished: tuple[int, ...]
    seconds: float
    clock: float


class Server:
    """The reference server's state, advanced one step by `step()`."""

    def __init__(self, chats: list[Chat], setup: Setup):
        self.chats = chats
        self.setup = setup
        self.waiting = deque(accepted(setup, chats))
        self.running: list[int] = []
        self.made = [0] * len(chats)
        self.held = [0] * len(chats)
        self.free = setup.blocks
        self.first: list[float | None] = [None] * len(chats)
        self.last: list[float | None] = [None] * len(chats)
        self.clock = 0.0
        self.steps = self.pauses = self.rebuilt = 0
        self.busy = 0.0

    @property
    def done(self) -> bool:
        return not self.waiting and not self.running

    def context(self, i: int) -> int:
        """Tokens in chat i's cache so far: its prompt and what it wrote."""
        return self.chats[i].prompt + self.made[i]

    def step(self, record: bool = False) -> Step | None:
        """Grow, join, time, write. With `record`, return what the step did,
        the blocks as they stood while it ran."""
        paused = self.grow()
        joined = [] if paused else self.join()
        seconds = self.time(joined)
        if record:
            running, free = tuple(self.running), self.free
            held = {i: self.held[i] for i in running}
            context = {i: self.context(i) for i in running}
        finished = self.write()
        if record:
            return Step(self.steps, running, held, context, free, tuple(joined), tuple(paused),
                        tuple(finished), seconds, self.clock)
        return None

    def grow(self) -> list[int]:
        """Hand a block to each running chat whose next token starts one; pause to make room."""
        paused = []
        k = 0
        while k < len(self.running):
            i = self.running[k]
            if not self.setup.reserved and self.context(i) % BLOCK_TOKENS == 0:
                if self.free == 0:
                    newest = self.running.pop()
                    self.free += self.held[newest]
                    self.held[newest] = 0
                    self.waiting.appendleft(newest)
                    self.pauses += 1
                    self.rebuilt += self.context(newest)
                    paused.append(newest)
                    continue  # look at the same position again
                self.free -= 1
                self.held[i] += 1
            k += 1
        return paused

    def join(self) -> list[int]:
        """Let waiting chats in, in order, while the cap and the free blocks allow."""
        joined = []
        while self.waiting and len(self.running) < self.setup.cap:
            i = self.waiting[0]
            need = self.setup.join_need(self.context(i))
            if need > self.free:
                break
            self.waiting.popleft()
            self.free -= need
            self.held[i] = need
            self.running.append(i)
            joined.append(i)
        return joined

    def time(self, joined: list[int]) -> float:
        """Advance the clock by this step's time."""
        read = sum(self.context(i) for i in joined) + len(self.running) - len(joined)
        cache = sum(self.context(i) for i in self.running)
        seconds = self.setup.step_seconds(read, cache)
        self.clock += seconds
        self.busy += seconds * len(self.running)
        self.steps += 1
        return seconds

    def write(self) -> list[int]:
        """Every running chat writes a token; finished chats free their blocks."""
        finished = []
        for i in self.running:
            self.made[i] += 1
            if self.first[i] is None:
                self.first[i] = self.clock
            self.last[i] = self.clock
            if self.made[i] == self.chats[i].reply:
                finished.append(i)
                self.free += self.held[i]
                self.held[i] = 0
        if finished:
            self.running = [i for i in self.running if self.made[i] < self.chats[i].reply]
        return finished

    def result(self) -> ServeResult:
        return summarize(self.setup, self.chats, self.clock, self.steps, self.pauses,
                         self.rebuilt, self.busy, self.first, self.last)


def serve(chats: Iterable[Chat], cap: int, share: int | None = None,
          longest: int | None = LESSON_LONGEST, reserved: bool = False, *,
          blocks: int | None = None, gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B,
          reserve_bytes: float = RESERVE_BYTES) -> ServeResult:
    """Serve `chats` step by step with at most `cap` running at once.

    The pool comes from `share` (percent, default 90) or from `blocks`;
    `longest` is the ceiling in tokens (None: no ceiling). Raises
    ServerWontStart if the pool cannot hold one chat of the ceiling.
    """
    chats = as_chats(chats)
    server = Server(chats, make_setup(cap, share, longest, reserved, blocks, gpu, model,
                                      reserve_bytes))
    while not server.done:
        server.step()
    return server.result()


def trace(chats: Iterable[Chat], cap: int, share: int | None = None,
          longest: int | None = None, reserved: bool = False, *, blocks: int | None = None,
          gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B,
          reserve_bytes: float = RESERVE_BYTES, max_steps: int = 10_000) -> list[Step]:
    """The run step by step: who runs, the blocks each holds, pauses and joins.

    For small cases (the hand case: two chats, four blocks, no ceiling, which
    is why `longest` defaults to None here); stops with an error past `max_steps`.
    """
    chats = as_chats(chats)
    max_steps = whole("max_steps", max_steps, 1)
    server = Server(chats, make_setup(cap, share, longest, reserved, blocks, gpu, model,
                                      reserve_bytes))
    steps = []
    while not server.done:
        if server.steps >= max_steps:
            raise ValueError(f"trace is for small cases: the run passed max_steps={max_steps:,}; "
                             "use serve() for large runs")
        steps.append(server.step(record=True))
    return steps
