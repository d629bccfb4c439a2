"""What a run reports: the lesson's figures, per chat when its tokens came,
and, step by step, what each step of a trace did.

`latency` turns the per-chat times into TTFT, TPOT and end-to-end time, and
the gaps between tokens into ITL, with their percentiles; this module keeps
what both engines measure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvlesson.serving.settings import Setup
from kvlesson.serving.token_gaps import Stretch, TokenGaps


@dataclass(frozen=True)
class ServeResult:
    """What a run reports. Times in seconds unless the name says ms.

    `first_token_s` and `last_token_s` give, per chat in the order the chats
    were given, when its first and last tokens came (None for a refused chat);
    `arrives_s` when it was first sent, `replies` its reply length.
    `proxy_refusals` counts 503 answers (tries, not chats), `hit_tokens` the
    prompt tokens found in the prefix cache out of `lookup_tokens` looked up
    (every join, rejoins too), and `queue` holds (time, waiting, running)
    each time either count changed; `outside` holds (time, clients retrying
    after a 503) each time that count changed (empty without a proxy);
    `longest_step_s` is the longest step: every running reply waits that long
    for its next token (a freeze when a step reads a long prompt at once).
    `gaps` holds every gap between two tokens of one chat (vLLM's ITL).
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
    arrives_s: tuple[float, ...] = ()
    replies: tuple[int, ...] = ()
    proxy_refusals: int = 0
    hit_tokens: int = 0
    lookup_tokens: int = 0
    queue: tuple[tuple[float, int, int], ...] = ()
    outside: tuple[tuple[float, int], ...] = ()
    longest_step_s: float = 0.0
    gaps: TokenGaps = TokenGaps()

    @property
    def tokens_per_s(self) -> float:
        """Reply tokens written per second, all chats together."""
        return self.tokens / self.seconds

    @property
    def hit_rate(self) -> float:
        """Share of the tokens looked up at joins that the prefix cache already held."""
        return self.hit_tokens / self.lookup_tokens if self.lookup_tokens else 0.0


@dataclass
class Tally:
    """The counts a run keeps as it goes (both engines keep the same ones)."""

    clock: float = 0.0
    busy: float = 0.0  # the sum of step time x chats running
    steps: int = 0
    pauses: int = 0
    rebuilt: int = 0
    hits: int = 0
    lookups: int = 0
    refusals: int = 0
    longest_step: float = 0.0
    gaps: dict[float, int] = field(default_factory=dict)  # a gap between tokens: how many
    stretches: list[Stretch] = field(default_factory=list)  # the fast engine's calm stretches


def note_queue(
    queue: list[tuple[float, int, int]], clock: float, waiting: int, running: int
) -> None:
    """Add (clock, waiting, running) to the queue's history if either count changed."""
    if not queue or queue[-1][1:] != (waiting, running):
        queue.append((clock, waiting, running))


def summarize(
    setup: Setup,
    replies: list[int],
    arrives: list[float],
    tally: Tally,
    first: list,
    last: list,
    queue: list,
    outside: list = (),
) -> ServeResult:
    """The reported figures of a finished run, chat i given by its reply length and arrival.

    The wait between words is worked out per chat, (last - first) / (reply - 1),
    then averaged over chats (chats of one token have no gap and are left out;
    with none left it is NaN).
    """
    served = [i for i, t in enumerate(first) if t is not None]
    gaps = [(last[i] - first[i]) / (replies[i] - 1) for i in served if replies[i] > 1]
    wait = 1000 * sum(gaps) / len(gaps) if gaps else float("nan")
    return ServeResult(
        cap=setup.cap,
        blocks=setup.blocks,
        tokens=sum([replies[i] for i in served]),
        seconds=tally.clock,
        steps=tally.steps,
        pauses=tally.pauses,
        rebuilt_tokens=tally.rebuilt,
        avg_running=tally.busy / tally.clock,
        wait_ms=wait,
        refused=len(replies) - len(served),
        first_token_s=tuple(first),
        last_token_s=tuple(last),
        arrives_s=tuple(arrives),
        replies=tuple(replies),
        proxy_refusals=tally.refusals,
        hit_tokens=tally.hits,
        lookup_tokens=tally.lookups,
        queue=tuple(queue),
        outside=tuple(outside),
        longest_step_s=tally.longest_step,
        gaps=TokenGaps(tuple(tally.gaps.items()), tuple(tally.stretches), setup.roofline),
    )


@dataclass(frozen=True)
class Step:
    """One step of a trace: who ran, the blocks each held and the tokens in its cache
    while the step ran, the free blocks, and who joined, was paused or finished.

    `slices` gives the tokens each computed chat read this step, `wrote` who
    wrote a token (read the last of its context); `private` the
    blocks each chat holds alone (the rest of `held` are named blocks it shares,
    `shared` of them in use in all); `waiting` the queue's length; `start` the
    clock when the step began (after any jump over idle time).
    """

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
    slices: dict[int, int] = field(default_factory=dict)
    wrote: tuple[int, ...] = ()
    private: dict[int, int] = field(default_factory=dict)
    shared: int = 0
    waiting: int = 0
    start: float = 0.0
