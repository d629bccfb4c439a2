"""The fast engine for traffic: the reference's own steps, calm stretches skipped.

With arrivals, a token budget, prefix caching or a proxy, `serve_fast` runs
the reference server (`server.Server`) for every step in which something
happens, and jumps over the calm stretches between them in one go. A step
after which nothing can change for a while starts a calm stretch when

* no chat was paused or finished in it (nothing freed blocks or a slot),
* every running chat wrote a token in it (nobody is part way through a prompt),
* the queue cannot move: it is empty, the cap or the budget is full, or the
  front chat needs more blocks than are free (for its whole context, or for
  its first slice under the older rule: blocks only get fewer in a stretch;
  with prefix caching its hits could change, so it walks instead).

The stretch ends before the next finish, before the step whose growth the
pool cannot cover, and before the first step that starts at or after the
next request's arrival. Its blocks come from the 16 block phases, and the
blocks the chats fill in it are named in the order the reference names them.
Its time is added step by step (see `time_stretch`): cheap, and it keeps the
clock equal to the reference's to the last bit, so that ties between an
arrival and a step's start (a retry comes exactly 1 s after a step started,
and an idle server starts a step exactly at an arrival) break the same way.
"""

from __future__ import annotations

from kvlesson.memory.floor import BLOCK_TOKENS
from kvlesson.serving.server import Server


class SkippingServer(Server):
    """The reference server, run with calm stretches skipped."""

    def run(self) -> None:
        while not self.done:
            self.step()
            k = self.calm_steps()
            if k:
                self.skip(self.time_stretch(k))

    def queue_stuck(self, n: int) -> bool:
        """True if no waiting chat can join in a stretch step with these n chats running."""
        setup = self.setup
        if not self.waiting or n >= setup.cap:
            return True
        left = None if setup.budget is None else setup.budget - n
        if left == 0:
            return True
        if setup.caching:
            return False
        context = self.context(self.waiting[0])
        part = context if left is None else min(context, left)
        need = self.need(part + (part == context))
        if setup.whole_prompt:
            need = max(need, self.need(context))
        return need > self.pool.free

    def calm_steps(self) -> int:
        """How many steps from here are calm (0 if the next one may not be)."""
        running = self.running
        n = len(running)
        if self.freed or not n:
            return 0
        clock = self.tally.clock
        if any(self.last[i] != clock for i in running):  # one has not written: it reads its prompt
            return 0
        if not self.queue_stuck(n):
            return 0
        k = min(self.chats[i].reply - self.made[i] for i in running) - 1
        if not self.setup.reserved:
            k = min(k, self.steps_with_room(n))
        return k

    def due(self) -> list[int]:
        """Running chats counted by the stretch step (1..16, mod 16) at which each next
        takes a block: step t for a chat whose context then, c + t - 1, is a multiple of 16."""
        count = [0] * BLOCK_TOKENS
        for i in self.running:
            count[(1 - self.context(i)) % BLOCK_TOKENS] += 1
        return count

    def steps_with_room(self, n: int) -> int:
        """The most stretch steps whose growth the free blocks cover."""
        count = self.due()
        rounds, left = divmod(self.pool.free, n)
        for t in range(1, BLOCK_TOKENS + 1):
            need = count[t % BLOCK_TOKENS]
            if need > left:
                return BLOCK_TOKENS * rounds + t - 1
            left -= need
        return BLOCK_TOKENS * (rounds + 1)  # not reached: the round's needs add up to n > left

    def time_stretch(self, k: int) -> int:
        """Advance the clock over up to k calm steps, stopping before a step that would
        start at or after the next arrival; return how many steps ran.

        The step times are added one by one, as the reference adds them (a few float
        operations a step, no Python objects), so the clock is the reference's to the
        last bit and an arrival that falls on a step's start is seen alike. The stretch is
        kept (chats, cache, steps, clock at its start), so that its gaps between tokens,
        differences of those clocks, can be replayed to the last bit too (`token_gaps`).
        """
        n = len(self.running)
        cache = sum(self.context(i) for i in self.running)
        # Setup.step_seconds, its terms taken out of the loop but computed the same way
        flops_per_token, peak, weights, per_token, bandwidth = self.setup.roofline
        compute = flops_per_token * n / peak
        arrival = self.door.next_time if self.door else float("inf")
        start = clock = self.tally.clock
        busy, longest = self.tally.busy, self.tally.longest_step
        ran = 0
        while ran < k and clock < arrival:
            memory = (weights + per_token * (cache + n * ran)) / bandwidth
            seconds = compute if compute >= memory else memory
            clock += seconds
            busy += seconds * n
            longest = seconds if seconds > longest else longest
            ran += 1
        if ran:  # every chat's gaps in it: the clock's steps, replayed only if a report asks
            self.tally.stretches.append((n, cache, ran, start))
        self.tally.clock, self.tally.busy, self.tally.longest_step = clock, busy, longest
        return ran

    def skip(self, k: int) -> None:
        """Take stock of k calm steps whose time has been counted: every running chat
        read one token and wrote one a step."""
        if not k:
            return
        running, setup, tally = self.running, self.setup, self.tally
        grow = {i: self.need(self.context(i) + k) - len(self.slots[i]) for i in running}
        named = self.names_filled(k) if setup.caching else []
        self.pool.take(sum(grow.values()))
        tally.steps += k
        for i in running:
            self.slots[i].extend([None] * grow[i])
            self.made[i] += k
            self.read[i] += k
            self.last[i] = tally.clock
        for i, j, name in named:
            self.pool.name(name)
            self.slots[i][j] = name

    def names_filled(self, k: int) -> list[tuple[int, int, object]]:
        """The blocks the stretch fills that get a name, as the reference decides it step by
        step: a block is named unless a block of that content is in use or still cached
        when it fills (a cached one may be emptied by the growth of the steps before)."""
        count = self.due()
        fills = []
        for position, i in enumerate(self.running):
            first = (1 - self.context(i)) % BLOCK_TOKENS or BLOCK_TOKENS
            for t in range(first, k + 1, BLOCK_TOKENS):
                j = (self.context(i) + t - 1) // BLOCK_TOKENS - 1
                fills.append((t, position, i, j))
        fills.sort()
        named, taken_names = [], set()
        n = len(self.running)
        for t, _, i, j in fills:
            name = self.names(i)[j]
            if name in taken_names or name in self.pool.users:
                continue
            taken = (t // BLOCK_TOKENS) * n + sum(count[1 : t % BLOCK_TOKENS + 1])
            if name in self.pool.cached and not self.pool.evicted_by(name, taken):
                continue
            taken_names.add(name)
            named.append((i, j, name))
        return named
