"""The toy server, one step at a time: continuous batching with a pool of blocks.

Each step, in this order:

0. Arrive. Requests whose time has come enter the queue, through the proxy if
   there is one (see `admission`). If nothing runs or waits, the clock first
   jumps to the next arrival.
1. Grow.  Every running chat with one token to read (the one it just wrote),
   oldest first, takes one token of the step's budget, and a new block if the
   token it writes this step starts one (vLLM takes it a step later, for the
   token it reads). If none is free, the newest running chat is paused: it
   gives back its blocks, keeps what it wrote and goes to the front of the
   queue (its cache is rebuilt when it rejoins).
2. Read on. With a token budget, running chats still reading their prompt,
   oldest first, take the budget that is left, a slice at a time (chunked
   prefill), with blocks for the slice; short of blocks, the newest is paused.
3. Join.  If nobody was paused, waiting chats join in order while fewer than
   `cap` run, budget is left and the free blocks cover the chat's whole
   context (vLLM >= 0.19; with `admit_rule="first chunk"`, as before 0.19,
   only the slice it reads now) and what it reads now; no skipping ahead.
   With prefix caching a joining chat first looks its leading full blocks
   up in the pool and reads only from the first miss.
4. Time.  The step reads the weights and the cache of every chat it computes,
   and does the arithmetic for the tokens it reads:
   step time = max(arithmetic / peak, bytes / bandwidth).
5. Write. Every chat that read the last of its context this step writes one
   token; a chat that reaches its reply length finishes and frees its blocks.

With every chat at time zero, no budget, no prefix caching and no proxy this
is the lesson's server, to the last digit (docs/traffic.md: the rules and a
worked example). `fast_engine.py` gives the same results, faster.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

from kvlesson.memory.floor import BLOCK_TOKENS, blocks_for
from kvlesson.serving.arrivals import Request
from kvlesson.serving.block_pool import BlockPool, block_names
from kvlesson.serving.proxy import Door
from kvlesson.serving.results import ServeResult, Step, Tally, note_queue, summarize
from kvlesson.serving.settings import Settings, Setup, accepted, start, takes_settings


class Server:
    """The reference server's state, advanced one step by `step()`."""

    def __init__(self, chats: list[Request], setup: Setup):
        self.chats = chats
        self.setup = setup
        n = len(chats)
        self.door = Door([(chats[i].arrives, i) for i in accepted(setup, chats)], setup.admission)
        self.waiting: deque[int] = deque()
        self.running: list[int] = []
        self.prompt = [chat.prompt for chat in chats]
        self.reply = [chat.reply for chat in chats]
        self.made = [0] * n
        self.read = [0] * n  # tokens of the context whose cache is computed
        self.slots: list[list] = [[] for _ in range(n)]  # per block: its name if named, else None
        self.named: dict[int, list] = {}  # with prefix caching: names(i) of chats not finished
        self.pool = BlockPool(setup.blocks)
        self.reserved_blocks = blocks_for(setup.longest) if setup.reserved else 0
        self.first: list[float | None] = [None] * n
        self.last: list[float | None] = [None] * n
        self.tally = Tally()
        self.queue: list[tuple[float, int, int]] = []
        self.slices: dict[int, int] = {}  # this step: tokens each chat reads
        self.left: int | None = None  # this step: budget left (None: no budget)
        self.freed = False  # the last step paused or finished a chat

    @property
    def done(self) -> bool:
        return not self.waiting and not self.running and not self.door

    def context(self, i: int) -> int:
        """Tokens in chat i's cache so far: its prompt and what it wrote."""
        return self.prompt[i] + self.made[i]

    def names(self, i: int) -> list:
        """What each of chat i's blocks holds (block_names), kept while it is unfinished."""
        if i not in self.named:
            blocks = -(-(self.prompt[i] + self.reply[i]) // BLOCK_TOKENS)
            self.named[i] = block_names(i, self.chats[i].shared, blocks)
        return self.named[i]

    def need(self, upto: int) -> int:
        """Blocks for `upto` tokens (the ceiling's if reserved): blocks_for, unchecked (hot)."""
        return self.reserved_blocks or -(-upto // BLOCK_TOKENS)

    def portion(self, to_read: int) -> int:
        """The slice of `to_read` tokens the budget left allows."""
        return to_read if self.left is None else min(to_read, self.left)

    def step(self, record: Callable | None = None) -> Step | None:
        """Arrive, grow, read on, join, time, write. With `record` (trace's `snapshot`), return
        what the step did, the blocks as they stood while it ran."""
        self.arrive()
        self.slices = {}
        self.left = self.setup.budget
        paused = self.grow()
        paused += self.read_on()
        joined = [] if paused else self.join()
        start = self.tally.clock
        note_queue(self.queue, start, len(self.waiting), len(self.running))
        seconds = self.time()
        if record:
            snapshot = record(self, joined, paused, start, seconds)
        wrote, finished = self.write()
        note_queue(self.queue, self.tally.clock, len(self.waiting), len(self.running))
        self.freed = bool(paused or finished)  # blocks or a slot came free: the next step may join
        return snapshot(tuple(wrote), tuple(finished)) if record else None

    def arrive(self) -> None:
        """Let in the requests whose time has come; jump over idle time first."""
        idle = not self.waiting and not self.running
        if idle and self.door and self.door.next_time > self.tally.clock:
            self.tally.clock = self.door.next_time
        self.waiting.extend(
            self.door.let_in(self.tally.clock, len(self.waiting) + len(self.running))
        )
        self.tally.refusals = self.door.refusals

    def grow(self) -> list[int]:
        """Each chat with one token to read takes it, and a block if it starts one;
        pause the newest to make room."""
        paused = []
        running, prompt, made = self.running, self.prompt, self.made
        read, slots = self.read, self.slots
        k = 0
        while k < len(running):
            i = running[k]
            context = prompt[i] + made[i]
            if context - read[i] == 1:
                new = self.need(context + 1) - len(slots[i])
                if new > self.pool.free:
                    paused.append(self.pause_newest())
                    continue  # look at the same position again
                self.take(i, new, 1)
            k += 1
        return paused

    def read_on(self) -> list[int]:
        """Chats part way through their prompt read the next slice, oldest first."""
        paused = []
        k = 0
        while k < len(self.running) and self.left != 0:
            i = self.running[k]
            to_read = self.context(i) - self.read[i]
            if to_read > 1:
                part = self.portion(to_read)
                new = self.need(self.read[i] + part + (part == to_read)) - len(self.slots[i])
                if new > self.pool.free:
                    paused.append(self.pause_newest())
                    continue
                self.take(i, new, part)
            k += 1
        return paused

    def take(self, i: int, new: int, part: int) -> None:
        """Chat i takes `new` blocks and reads `part` tokens this step."""
        if new:
            self.pool.take(new)
            self.slots[i].extend([None] * new)
        self.slices[i] = part
        if self.left is not None:
            self.left -= part

    def pause_newest(self) -> int:
        """The newest running chat gives back its blocks (and any budget it took this
        step) and goes to the front of the queue, keeping what it wrote."""
        j = self.running.pop()
        if j in self.slices and self.left is not None:
            self.left += self.slices[j]
        self.slices.pop(j, None)
        self.pool.give_back(self.slots[j])
        self.slots[j] = []
        self.read[j] = 0
        self.waiting.appendleft(j)
        self.tally.pauses += 1
        self.tally.rebuilt += self.context(j)
        return j

    def join(self) -> list[int]:
        """Let waiting chats in, in order, while the cap, the budget and the blocks allow."""
        joined = []
        whole = self.setup.whole_prompt
        while self.waiting and len(self.running) < self.setup.cap and self.left != 0:
            i = self.waiting[0]
            context = self.context(i)
            hits = []
            if self.setup.caching:
                hits = self.pool.hits(self.names(i), (context - 1) // BLOCK_TOKENS)
            start = BLOCK_TOKENS * len(hits)
            part = self.portion(context - start)
            new = self.need(start + part + (part == context - start)) - len(hits)
            # vLLM >= 0.19 admits only if its whole context fits; it takes the slice's blocks
            check = max(new, self.need(context) - len(hits)) if whole else new
            if check > self.pool.free - self.pool.cached_among(hits):
                break
            self.waiting.popleft()
            self.pool.reuse(hits)
            self.slots[i] = list(hits)
            self.read[i] = start
            self.running.append(i)
            self.take(i, new, part)
            self.tally.lookups += context
            self.tally.hits += start
            joined.append(i)
        return joined

    def time(self) -> float:
        """Advance the clock by this step's time."""
        read = sum(self.slices.values())
        cache = sum(self.read[i] + part for i, part in self.slices.items())
        seconds = self.setup.step_seconds(read, cache)
        tally = self.tally
        tally.clock += seconds
        tally.busy += seconds * len(self.running)
        tally.steps += 1
        tally.longest_step = max(tally.longest_step, seconds)
        return seconds

    def write(self) -> tuple[list[int], list[int]]:
        """Chats that read their whole context write a token; finished chats free their blocks.
        Returns who wrote and who finished."""
        wrote, finished = [], []
        prompt, reply, made, read, first, last = (
            self.prompt,
            self.reply,
            self.made,
            self.read,
            self.first,
            self.last,
        )
        clock, slices, caching = self.tally.clock, self.slices, self.setup.caching
        gaps = self.tally.gaps
        for i in self.running:
            part = slices.get(i)
            if part is None:
                continue
            if caching:
                self.name_filled(i, read[i], read[i] + part)
            read[i] += part
            if read[i] < prompt[i] + made[i]:
                continue
            made[i] += 1
            wrote.append(i)
            if first[i] is None:
                first[i] = clock
            else:  # the gap since its last token (vLLM's ITL)
                gaps[clock - last[i]] = gaps.get(clock - last[i], 0) + 1
            last[i] = clock
            if made[i] == reply[i]:
                finished.append(i)
                self.pool.give_back(self.slots[i])
                self.slots[i] = []
                self.named.pop(i, None)
        if finished:
            self.running = [i for i in self.running if made[i] < reply[i]]
        return wrote, finished

    def name_filled(self, i: int, before: int, after: int) -> None:
        """With prefix caching: chat i's cache went from `before` to `after` tokens; the
        blocks it filled get names (unless a block of that content is in the pool)."""
        names, slots = self.names(i), self.slots[i]
        for j in range(before // BLOCK_TOKENS, after // BLOCK_TOKENS):
            if slots[j] is None and self.pool.name(names[j]):
                slots[j] = names[j]

    def result(self) -> ServeResult:
        return summarize(
            self.setup,
            self.reply,
            [chat.arrives for chat in self.chats],
            self.tally,
            self.first,
            self.last,
            self.queue,
            self.door.outside,
        )


@takes_settings()
def serve(chats: Iterable, settings: Settings) -> ServeResult:
    """Serve `chats` step by step with at most `cap` running at once.

    The settings are `Settings`' (the pool from `share`, percent, default 90, or from
    `blocks`; `longest` the ceiling in tokens, None for none; notebook 6's `budget`,
    `prefix_caching`, `admission` and `admit_rule`). Raises ServerWontStart if the pool cannot
    hold one chat of the ceiling; chats may be Requests.
    """
    server = Server(*start(chats, settings))
    while not server.done:
        server.step()
    return server.result()
