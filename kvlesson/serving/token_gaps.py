"""Every gap between two tokens of one chat: what `vllm bench serve` calls ITL.

`vllm bench serve` times every streamed chunk; the gap between two chunks of
one request is an inter-token latency (ITL), and it pools the gaps of all
requests into one list before it takes percentiles
(vllm/benchmarks/serve.py, v0.33.0). One frozen step shows in that list as one
long gap for every reply it held up, where a request's TPOT, the average gap
over its reply, hardly moves.

The engines collect the gaps as they run, in a form that costs them nothing
per token: a gap and how many chats saw it, and, for the fast engine's calm
stretches, the stretch itself (n chats, k steps), whose step times are worked
out only when a report asks for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (chats, cache tokens read by the stretch's first step, steps): every chat writes a token
# at every step, so each step's time is one gap for each of them.
Stretch = tuple[int, int, int]


@dataclass(frozen=True)
class TokenGaps:
    """The gaps of a run: (seconds, how many) pairs and calm stretches.

    `roofline` is the step time's terms (`Setup.roofline`), to time the stretches.
    """

    counts: tuple[tuple[float, int], ...] = ()
    stretches: tuple[Stretch, ...] = ()
    roofline: tuple = ()

    def values(self) -> np.ndarray:
        """Every gap, once per chat that waited it, in seconds (not sorted)."""
        parts = []
        if self.counts:
            gaps, times = zip(*self.counts)
            parts.append(np.repeat(np.array(gaps, dtype=float), times))
        for n, cache, k in self.stretches:
            parts.append(np.repeat(self.stretch_steps(n, cache, k), n))
        return np.concatenate(parts) if parts else np.array([], dtype=float)

    def stretch_steps(self, n: int, cache: int, k: int) -> np.ndarray:
        """The times of a stretch's k steps, as `Setup.step_seconds` gives them."""
        flops_per_token, peak, weights, per_token, bandwidth = self.roofline
        compute = flops_per_token * n / peak
        memory = (weights + per_token * (cache + n * np.arange(k, dtype=np.int64))) / bandwidth
        return np.maximum(compute, memory)


def add_gap(gaps: dict[float, int], seconds: float, chats: int = 1) -> None:
    """Count `chats` gaps of `seconds` (an engine's running tally)."""
    if chats:
        gaps[seconds] = gaps.get(seconds, 0) + chats
