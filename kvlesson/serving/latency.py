"""What users feel: time to first token, the gap between tokens, and the tails.

Per served chat:

* TTFT (time to first token): first token - the moment it was first sent
  (with a proxy, the first try counts: refusals and retries are in it).
* ITL (the gap between tokens, the model's typing speed as this user sees
  it): (last token - first token) / (reply - 1), the lesson's wait between
  words for one chat; none for a one-token reply.
* end to end: last token - first sent.

Across chats, p50 / p95 / p99 by the nearest-rank method: the p-th percentile
of n values is the value at rank ceil(p/100 x n) in the sorted list (rank 1 is
the smallest). It is always one of the values, and p50 <= p95 <= p99 <= max.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from kvlesson.arguments import of_type, positive
from kvlesson.serving.results import ServeResult

TAILS = (50, 95, 99)  # the percentiles a report gives
COLUMNS = ["sent_s", "first_s", "last_s", "reply", "ttft_s", "itl_s", "e2e_s"]


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank p-th percentile (0 < p <= 100) of `values` (not empty)."""
    p = positive("p", p)
    if p > 100:
        raise ValueError(f"p must be in (0, 100], got {p!r}")
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values: give at least one")
    return ordered[math.ceil(p / 100 * len(ordered)) - 1]


@dataclass(frozen=True)
class Spread:
    """One measure across chats, in seconds: p50, p95, p99, the mean and the worst."""

    p50: float
    p95: float
    p99: float
    mean: float
    worst: float

    @classmethod
    def of(cls, values: Sequence[float]) -> "Spread":
        if not values:
            nan = float("nan")
            return cls(nan, nan, nan, nan, nan)
        p50, p95, p99 = (percentile(values, p) for p in TAILS)
        return cls(p50, p95, p99, sum(values) / len(values), max(values))


@dataclass(frozen=True)
class Latency:
    """A run as its users feel it: TTFT, ITL and end to end across chats, and the counts."""

    ttft: Spread
    itl: Spread
    e2e: Spread
    served: int
    refused: int
    proxy_refusals: int
    hit_rate: float
    tokens_per_s: float
    pauses: int
    most_waiting: int
    longest_step_s: float


def chat_times(result: ServeResult) -> pd.DataFrame:
    """One row per served chat (index: its position in the chats given): when it was sent,
    its first and last tokens came, and its TTFT, ITL (NaN for a one-token reply) and end
    to end, in seconds."""
    of_type("result", result, ServeResult)
    rows = {}
    for i, (sent, first, last, reply) in enumerate(zip(
            result.arrives_s, result.first_token_s, result.last_token_s, result.replies)):
        if first is None:
            continue
        itl = (last - first) / (reply - 1) if reply > 1 else float("nan")
        rows[i] = {"sent_s": sent, "first_s": first, "last_s": last, "reply": reply,
                   "ttft_s": first - sent, "itl_s": itl, "e2e_s": last - sent}
    return pd.DataFrame.from_dict(rows, orient="index", columns=COLUMNS)


def latency(result: ServeResult) -> Latency:
    """The run's TTFT, ITL and end-to-end spreads across served chats, and its counts."""
    times = chat_times(result)
    return Latency(
        ttft=Spread.of(list(times["ttft_s"])), itl=Spread.of(list(times["itl_s"].dropna())),
        e2e=Spread.of(list(times["e2e_s"])), served=len(times), refused=result.refused,
        proxy_refusals=result.proxy_refusals, hit_rate=result.hit_rate,
        tokens_per_s=result.tokens_per_s, pauses=result.pauses,
        most_waiting=max((waiting for _, waiting, _ in result.queue), default=0),
        longest_step_s=result.longest_step_s)


def queue_frame(result: ServeResult) -> pd.DataFrame:
    """The queue over time: a row each time the waiting or running count changed."""
    of_type("result", result, ServeResult)
    return pd.DataFrame(list(result.queue), columns=["time_s", "waiting", "running"])
