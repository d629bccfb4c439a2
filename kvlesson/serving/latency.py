"""What users feel: time to first token, time per output token, the gaps
between tokens, and the tails, named and computed as `vllm bench serve` does
(vllm/benchmarks/serve.py, v0.33.0).

Per served chat:

* TTFT (time to first token): first token - the moment it was first sent
  (with a proxy, the first try counts: refusals and retries are in it).
* TPOT (time per output token): (last token - first token) / (reply - 1),
  the average gap over its reply, the lesson's wait between words for one
  chat; none for a one-token reply (vLLM leaves such requests out too).
* end to end: last token - first sent.

And over every gap between two tokens of one chat, all chats pooled:

* ITL (inter-token latency): one value per gap. A step that freezes every
  reply shows here as one long gap per reply, where a chat's TPOT, an
  average over hundreds of gaps, hardly moves.

Across chats (or gaps), p50 / p95 / p99 as `vllm bench serve` prints them:
numpy's percentile with linear interpolation between the two nearest ranks,
so a p95 need not be one of the values. `percentile` below is the other
common method, the nearest rank (always one of the values), the one
Exercise 6.1 asks for; the two differ on small samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np
import pandas as pd

from kvlesson.arguments import of_type, positive
from kvlesson.serving.results import ServeResult

TAILS = (50, 95, 99)  # the percentiles a report gives (vllm bench serve: --metric-percentiles)
COLUMNS = ["sent_s", "first_s", "last_s", "reply", "ttft_s", "tpot_s", "e2e_s"]


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank p-th percentile (0 < p <= 100) of `values` (not empty): the value at
    rank ceil(p/100 x n) of the sorted values, rank 1 the smallest.

    The rank is worked out exactly, with `p` read as the decimal it is written as, so
    float rounding never moves it: percentile(range(1, 101), 7) is 7, not 8.
    """
    p = positive("p", p)
    if p > 100:
        raise ValueError(f"p must be in (0, 100], got {p!r}")
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values: give at least one")
    return ordered[math.ceil(Fraction(str(p)) * len(ordered) / 100) - 1]


@dataclass(frozen=True)
class Spread:
    """One measure across chats (or gaps), in seconds: p50, p95, p99 (as vllm bench serve
    computes them), the mean and the worst."""

    p50: float
    p95: float
    p99: float
    mean: float
    worst: float

    @classmethod
    def of(cls, values: np.ndarray | Sequence[float]) -> "Spread":
        values = np.asarray(values, dtype=float)
        if not len(values):
            nan = float("nan")
            return cls(nan, nan, nan, nan, nan)
        p50, p95, p99 = (float(x) for x in np.percentile(values, TAILS))
        return cls(p50, p95, p99, float(values.mean()), float(values.max()))


@dataclass(frozen=True)
class Latency:
    """A run as its users feel it: TTFT, TPOT and end to end across chats, ITL across
    every gap between tokens, and the counts."""

    ttft: Spread
    tpot: Spread
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
    its first and last tokens came, and its TTFT, TPOT (NaN for a one-token reply) and end
    to end, in seconds."""
    of_type("result", result, ServeResult)
    rows = {}
    for i, (sent, first, last, reply) in enumerate(
        zip(result.arrives_s, result.first_token_s, result.last_token_s, result.replies)
    ):
        if first is None:
            continue
        tpot = (last - first) / (reply - 1) if reply > 1 else float("nan")
        rows[i] = {
            "sent_s": sent,
            "first_s": first,
            "last_s": last,
            "reply": reply,
            "ttft_s": first - sent,
            "tpot_s": tpot,
            "e2e_s": last - sent,
        }
    return pd.DataFrame.from_dict(rows, orient="index", columns=COLUMNS)


def latency(result: ServeResult) -> Latency:
    """The run's TTFT, TPOT, ITL and end-to-end spreads, and its counts."""
    times = chat_times(result)
    return Latency(
        ttft=Spread.of(times["ttft_s"]),
        tpot=Spread.of(times["tpot_s"].dropna()),
        itl=Spread.of(result.gaps.values()),
        e2e=Spread.of(times["e2e_s"]),
        served=len(times),
        refused=result.refused,
        proxy_refusals=result.proxy_refusals,
        hit_rate=result.hit_rate,
        tokens_per_s=result.tokens_per_s,
        pauses=result.pauses,
        most_waiting=max((waiting for _, waiting, _ in result.queue), default=0),
        longest_step_s=result.longest_step_s,
    )


def queue_frame(result: ServeResult) -> pd.DataFrame:
    """The queue over time: a row each time the waiting or running count changed."""
    of_type("result", result, ServeResult)
    return pd.DataFrame(list(result.queue), columns=["time_s", "waiting", "running"])
