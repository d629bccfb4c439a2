"""The toy server, fast: the reference's results without walking every step.

`server.serve` walks the run one step at a time; at cap 1 the lesson's 600
chats take 94,117 steps. Most of those steps are alike. Between two events
(a chat joins, finishes or is paused) the same n chats run, so every step
reads n tokens (the same arithmetic time) and n more tokens of cache than the
step before (a memory time that rises in a straight line). The time of such a
stretch of steps has a closed form, and so do the blocks the chats take in it.
`serve_fast` jumps from event to event and gives the reference's results:
the same counts, and the same times up to float rounding.

What it keeps per chat, instead of updating every chat every step:

* context: a running chat's context (prompt + what it wrote) at step t is
  `offset + t`, fixed from the step it joins; the server keeps the sum of the
  offsets, so the cache a step reads is `sum of offsets + n x t`.
* block phase: a chat starts a new block at the steps t where `offset + t` is
  a multiple of 16, the steps with t % 16 equal to its phase. The server counts
  the running chats in each of the 16 phases, so the blocks taken over any
  stretch come from 16 counts, not from every chat.
* finish: the step a chat writes its last token, in a heap of finishes.

The rare steps in which the pool runs short (pauses) are replayed exactly, in
the order of `running`, oldest first, as the reference does.

It does the lesson's work and no more: notebook 6's bookkeeping (budget,
prefix caching, proxy) is the traffic engine's, and a calm stretch's gaps
between tokens are kept as one entry (chats, cache, steps), timed only if a
report asks (`token_gaps`). benchmarks/bench_serve.py holds it to at least 25
times docs/model.md's plain step loop (tests/support/lesson_model.py) on the lesson's sweep.

Why it stays whole, past the package's ~300 lines a module and ~60 a function: `FastServer.run`
is the hot loop behind every slider of the sweep explorer, one pass over the run's events with
its state in local variables (a method call or an attribute per event is what it saves); its
phases (grow, join, time, the calm stretch, write) are marked in it by comments instead.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Iterable

from kvlesson.memory.floor import BLOCK_TOKENS
from kvlesson.serving.arrivals import Request
from kvlesson.serving.calm_stretch import stretch_seconds
from kvlesson.serving.fast_traffic_engine import SkippingServer
from kvlesson.serving.results import ServeResult, Tally, summarize
from kvlesson.serving.settings import Settings, Setup, accepted, start, takes_settings

# The phase of a chat whose blocks were all reserved when it joined: it never
# takes a block as it grows, so it is counted apart from the 16 real phases.
NEVER_GROWS = BLOCK_TOKENS


class FastServer:
    """The server's state, kept so that a stretch of alike steps costs O(16), not O(steps x chats).

    `running` keeps the reference's order (oldest first) as the insertion order
    of a dict; `phase[i]` is chat i's block phase and `count[p]` how many running
    chats are in phase p (the rare pause replay picks a phase's chats out of
    `running`, in order).
    """

    def __init__(self, chats: list[Request], setup: Setup):
        self.setup = setup
        self.prompt = [chat.prompt for chat in chats]
        self.reply = [chat.reply for chat in chats]
        self.waiting = deque(accepted(setup, chats))
        self.context = self.prompt.copy()  # a waiting chat's context
        self.running: dict[int, None] = {}
        self.offset = [0] * len(chats)  # a running chat's context at step t is offset + t
        self.phase = [NEVER_GROWS] * len(chats)
        self.count = [0] * (BLOCK_TOKENS + 1)
        self.offsets = 0  # sum of the running chats' offsets
        self.finish_at = [-1] * len(chats)  # -1 once paused: its heap entry is stale
        self.finishes: list[tuple[int, int]] = []  # (step of the last token, chat)
        self.free = setup.blocks
        self.first: list[float | None] = [None] * len(chats)
        self.last: list[float | None] = [None] * len(chats)
        self.tally = Tally()
        self.queue: list[tuple[float, int, int]] = []
        self.last_before_pause: dict[int, float] = {}  # a paused chat: when its last token came

    def run(self) -> None:
        """Serve every chat: each pass is one event step and the calm stretch after it.

        The event step (grow, join, time) is done as the reference does it. The
        stretch runs to the next finish, or to the step before the pool runs
        short; its steps have no join, because nothing freed blocks or a slot
        (a queue that stopped once stops again). The chats that finish at the
        stretch's last step then free their blocks.

        This is the hot loop, so it keeps the state in local variables; the
        rare pause path works on the object (`self.free`, `self.offsets`).
        """
        setup = self.setup
        flops_per_token = 2 * setup.model.params
        peak = setup.gpu.peak_flops
        weights = setup.model.weights_bytes
        per_token = setup.model.bytes_per_token
        bandwidth = setup.gpu.bandwidth
        cap = setup.cap
        reserved_need = -(-setup.longest // BLOCK_TOKENS) if setup.reserved else 0
        prompt, reply, context, offset, phase = (
            self.prompt,
            self.reply,
            self.context,
            self.offset,
            self.phase,
        )
        running, waiting, count = self.running, self.waiting, self.count
        finish_at, finishes, first, last = self.finish_at, self.finishes, self.first, self.last
        queue, lookups, longest = self.queue, 0, 0.0
        noted_waiting = noted_running = -1  # the queue's counts when last noted (note_queue)
        gaps, stretches = self.tally.gaps, self.tally.stretches
        last_before_pause = self.last_before_pause
        heappush, heappop = heapq.heappush, heapq.heappop
        B = BLOCK_TOKENS  # noqa: N806 (a local: the loop reads it at every event)

        step = 0
        free, offsets, clock, busy = self.free, self.offsets, 0.0, 0.0
        join_pending = True  # something freed blocks or a slot (or it is the start): try to join
        while running or waiting:
            # Grow: the chats in this step's phase take a block each.
            need = count[step % B]
            paused = need > free
            if paused:
                self.free, self.offsets = free, offsets
                self.pause_for_room(step, clock)
                free, offsets = self.free, self.offsets
                join_pending = True
            else:
                free -= need

            # Join: only after something freed blocks or a slot, and not in a step with a pause.
            n = len(running)
            read = n  # tokens read this step: one per chat, a joiner's whole context
            joined = ()
            if join_pending and not paused:
                join_pending = False
                joined = []
                while waiting and n < cap:
                    i = waiting[0]
                    tokens = context[i]
                    # the ceiling's blocks if reserved, else blocks_for(tokens + 1)
                    need = reserved_need or (tokens + B) // B
                    if need > free:
                        break
                    waiting.popleft()
                    free -= need
                    running[i] = None
                    offset[i] = tokens - step
                    offsets += tokens - step
                    # it starts a block at the steps t with (offset + t) % 16 == 0
                    p = NEVER_GROWS if reserved_need else (step - tokens) % B
                    phase[i] = p
                    count[p] += 1
                    finish_at[i] = end = step + prompt[i] + reply[i] - tokens - 1
                    heappush(finishes, (end, i))
                    joined.append(i)
                    n += 1
                    read += tokens
                    lookups += tokens
            if n != noted_running or len(waiting) != noted_waiting:  # note_queue, inlined
                noted_waiting, noted_running = len(waiting), n
                queue.append((clock, noted_waiting, n))
            # Time: the step as the reference times it (see Setup.step_seconds).
            compute = flops_per_token * read / peak
            memory = (weights + per_token * (offsets + n * step)) / bandwidth
            seconds = compute if compute > memory else memory
            clock += seconds
            busy += seconds * n
            longest = seconds if seconds > longest else longest
            # the gaps between tokens: this step, for those that wrote the step before
            if joined:
                gaps[seconds] = gaps.get(seconds, 0) + n - len(joined)
                for i in joined:
                    if first[i] is None:
                        first[i] = clock
                    else:  # a paused chat's next token, after its wait and its rebuild
                        gap = clock - last_before_pause[i]
                        gaps[gap] = gaps.get(gap, 0) + 1
            else:
                gaps[seconds] = gaps.get(seconds, 0) + n

            # The calm stretch, steps step+1 .. end: no join, no finish before end, no pause.
            end = step
            if not join_pending and finishes:
                end = finishes[0][0]  # (a paused chat's stale entry just ends it early)
                # Each chat takes one block per 16 steps, so the pool can run short
                # before `end` only if free // n whole rounds of 16 steps end before it.
                if not reserved_need and step + 1 + B * (free // n) <= end:
                    end = self.last_step_with_room(step, end, free, n)
                if end > step:
                    k = end - step
                    cache = offsets + n * (step + 1)
                    stretches.append((n, cache, k, None))
                    compute = flops_per_token * n / peak
                    if (weights + per_token * cache) / bandwidth >= compute:
                        # memory-bound from its first step: an arithmetic series (stretch_seconds)
                        seconds = (
                            k * weights + per_token * (k * cache + n * (k * (k - 1) // 2))
                        ) / bandwidth
                    else:
                        seconds = stretch_seconds(setup, cache, n, k)
                    clock += seconds
                    busy += seconds * n
                    # its steps only get longer: the last is the longest (Setup.step_seconds)
                    memory = (weights + per_token * (cache + n * (k - 1))) / bandwidth
                    longest = memory if memory > longest else longest
                    longest = compute if compute > longest else longest
                    if not reserved_need:  # the blocks the k steps take: whole rounds, then a part
                        rounds, rest = divmod(k, B)
                        first_phase = (step + 1) % B
                        stop = first_phase + rest
                        if stop <= B:
                            free -= rounds * n + sum(count[first_phase:stop])
                        else:
                            free -= rounds * n + sum(count[first_phase:B]) + sum(count[: stop - B])

            # Write: the chats whose last token came at `end` finish and free their blocks.
            while finishes and finishes[0][0] == end:
                i = heappop(finishes)[1]
                if finish_at[i] != end:
                    continue  # paused since it joined
                del running[i]
                offsets -= offset[i]
                count[phase[i]] -= 1
                # the ceiling's blocks if reserved, else blocks_for(prompt + reply)
                free += reserved_need or (prompt[i] + reply[i] + B - 1) // B
                last[i] = clock
                join_pending = True
            if len(running) != noted_running or len(waiting) != noted_waiting:
                noted_waiting, noted_running = len(waiting), len(running)
                queue.append((clock, noted_waiting, noted_running))
            step = end + 1

        self.free, self.offsets = free, offsets
        tally = self.tally
        tally.clock, tally.busy, tally.steps, tally.lookups = clock, busy, step, lookups
        tally.longest_step = longest

    def pause_for_room(self, step: int, clock: float) -> None:
        """Replay a grow phase in which the pool runs short, chat by chat.

        The chats of this step's phase take a block, oldest first. When none is
        free, the newest running chat is paused (possibly the one asking); the
        newest is never one that already took its block this step, so it gives
        back `blocks_for(context)`. A paused chat of this phase is the newest
        one still asking, so it drops off the end of `asking`.
        """
        p = step % BLOCK_TOKENS
        asking = [i for i in self.running if self.phase[i] == p]  # oldest first
        served, left = 0, len(asking)
        while served < left:
            if self.free:
                self.free -= 1
                served += 1
                continue
            newest = next(reversed(self.running))
            if self.phase[newest] == p:
                left -= 1
            self.pause(newest, step)
            self.last_before_pause[newest] = clock  # it wrote at the end of the step before

    def pause(self, i: int, step: int) -> None:
        """Chat i gives back its blocks and goes to the front of the queue, keeping what it wrote."""
        tokens = self.offset[i] + step
        del self.running[i]
        self.offsets -= self.offset[i]
        self.count[self.phase[i]] -= 1
        self.finish_at[i] = -1
        self.free += -(-tokens // BLOCK_TOKENS)  # blocks_for(tokens): none taken this step
        self.context[i] = tokens
        self.waiting.appendleft(i)
        self.tally.pauses += 1
        self.tally.rebuilt += tokens

    def last_step_with_room(self, step: int, end: int, free: int, n: int) -> int:
        """The last step in step+1 .. end before the pool runs short (end if it never does).

        Over any 16 steps in a row each of the n chats takes exactly one block.
        So while `free` covers n, a whole round of 16 steps passes: the first
        free // n rounds are safe, and the pool runs short within the round
        after, with `free % n` blocks left when it starts.
        """
        rounds, left = divmod(free, n)
        start = step + 1 + BLOCK_TOKENS * rounds
        count = self.count
        for t in range(start, min(start + BLOCK_TOKENS, end + 1)):
            need = count[t % BLOCK_TOKENS]
            if need > left:
                return t - 1
            left -= need
        return end


@takes_settings()
def serve_fast(chats: Iterable, settings: Settings) -> ServeResult:
    """`server.serve`, event to event: the same settings, checks and results, much faster.

    The lesson's runs (every chat at time zero, none of notebook 6's settings)
    take the closed form above; the others skip calm stretches on the
    reference's own state (`fast_traffic_engine`).
    """
    chats, setup = start(chats, settings)
    arrives = [chat.arrives for chat in chats]
    if setup.lesson and not any(arrives):
        server = FastServer(chats, setup)
    else:
        server = SkippingServer(chats, setup)
    server.run()
    outside = server.door.outside if isinstance(server, SkippingServer) else []  # no proxy
    return summarize(
        setup, server.reply, arrives, server.tally, server.first, server.last, server.queue, outside
    )
