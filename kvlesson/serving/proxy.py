"""The door: requests reach the server as they arrive, through an optional proxy.

Seed 001's proxy lets at most N generation requests inside the server,
running or waiting. One more is refused at once with HTTP 503 and
`Retry-After: 1`; its client tries again one second later. Time to first
token is still counted from the first try.

The server picks up new requests between steps (as vLLM's engine loop
does), so the proxy answers then: at the start of the first step that
begins at or after the request's time, with what is inside at that moment.
Requests that come at the same time are taken in the order they were given.
"""

from __future__ import annotations

import heapq

RETRY_AFTER_S = 1.0  # seed 001: the proxy answers 503 with Retry-After: 1


class Door:
    """Requests not yet inside: (time of the next try, chat) in a heap; the refusals; and
    the clients retrying outside, a history of (time, how many) each time the count changed."""

    def __init__(self, arrivals: list[tuple[float, int]], admission: int | None):
        self.tries = sorted(arrivals)
        heapq.heapify(self.tries)
        self.admission = admission
        self.refusals = 0
        self.turned_away: set[int] = set()  # refused at least once, not let in yet
        self.outside: list[tuple[float, int]] = []

    def __bool__(self) -> bool:
        return bool(self.tries)

    @property
    def next_time(self) -> float:
        """When the next request comes (there must be one)."""
        return self.tries[0][0]

    def let_in(self, clock: float, inside: int) -> list[int]:
        """The chats let in at `clock`, in order, with `inside` requests already in the server;
        the ones over the admission cap are refused and will try again."""
        come = []
        while self.tries and self.tries[0][0] <= clock:
            come.append(heapq.heappop(self.tries)[1])
        if self.admission is None:
            return come
        room = max(self.admission - inside, 0)
        for i in come[room:]:
            self.refusals += 1
            self.turned_away.add(i)
            heapq.heappush(self.tries, (clock + RETRY_AFTER_S, i))
        self.turned_away.difference_update(come[:room])
        self.note_outside(clock)
        return come[:room]

    def note_outside(self, clock: float) -> None:
        """Add (clock, clients retrying) to the history if the count changed."""
        count = len(self.turned_away)
        if (self.outside[-1][1] if self.outside else 0) != count:
            self.outside.append((clock, count))
