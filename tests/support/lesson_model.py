"""The lesson's server as docs/model.md writes it down, written apart from the package.

The package's server now also knows arrivals, a token budget, prefix caching
and a proxy; with all of them off it must give exactly this (every count
equal, every float equal to the last digit). This file is that reference:
plain, short and independent of `kvlesson.serving.server`.
"""

from __future__ import annotations

import math
from collections import deque

BLOCK = 16


def blocks_for(tokens: int) -> int:
    return -(-tokens // BLOCK)


def lesson_serve(
    chats, cap, blocks, longest, reserved, params, peak, weights, per_token, bandwidth
) -> dict:
    """Serve (prompt, reply) pairs, all waiting at time zero, as docs/model.md's four steps say."""
    limit = longest if longest is not None else blocks * BLOCK
    waiting = deque(i for i, (p, r) in enumerate(chats) if p + r <= limit)
    refused = len(chats) - len(waiting)
    running, made, held = [], [0] * len(chats), [0] * len(chats)
    first, last = [None] * len(chats), [None] * len(chats)
    free, clock, busy, steps, pauses, rebuilt = blocks, 0.0, 0.0, 0, 0, 0

    def context(i):
        return chats[i][0] + made[i]

    while waiting or running:
        paused = False
        k = 0
        while k < len(running):  # 1. grow
            i = running[k]
            if not reserved and context(i) % BLOCK == 0:
                if free == 0:
                    j = running.pop()
                    free += held[j]
                    held[j] = 0
                    waiting.appendleft(j)
                    pauses += 1
                    rebuilt += context(j)
                    paused = True
                    continue
                free -= 1
                held[i] += 1
            k += 1
        joined = []
        while not paused and waiting and len(running) < cap:  # 2. join
            i = waiting[0]
            need = blocks_for(longest) if reserved else blocks_for(context(i) + 1)
            if need > free:
                break
            waiting.popleft()
            free -= need
            held[i] = need
            running.append(i)
            joined.append(i)
        read = sum(context(i) for i in joined) + len(running) - len(joined)  # 3. time
        cache = sum(context(i) for i in running)
        seconds = max(2 * params * read / peak, (weights + per_token * cache) / bandwidth)
        clock += seconds
        busy += seconds * len(running)
        steps += 1
        for i in running:  # 4. write
            made[i] += 1
            first[i] = clock if first[i] is None else first[i]
            last[i] = clock
            if made[i] == chats[i][1]:
                free += held[i]
        running = [i for i in running if made[i] < chats[i][1]]
    gaps = [
        (last[i] - first[i]) / (chats[i][1] - 1)
        for i in range(len(chats))
        if first[i] is not None and chats[i][1] > 1
    ]
    return dict(
        steps=steps,
        pauses=pauses,
        rebuilt_tokens=rebuilt,
        refused=refused,
        seconds=clock,
        avg_running=busy / clock,
        wait_ms=1000 * sum(gaps) / len(gaps) if gaps else math.nan,
        first_token_s=tuple(first),
        last_token_s=tuple(last),
    )
