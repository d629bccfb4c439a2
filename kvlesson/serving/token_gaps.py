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

# (chats, cache tokens read by the stretch's first step, steps, the clock when it began or
# None): every chat writes a token at every step, so each step is one gap for each of them.
# With the clock, the gaps are the differences of the clocks the engine added up step by
# step (the reference's own floats); without it (the lesson's closed form), the step times.
Stretch = tuple[int, int, int, "float | None"]


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
        for n, cache, k, start in self.stretches:
            parts.append(np.repeat(self.stretch_gaps(n, cache, k, start), n))
        return np.concatenate(parts) if parts else np.array([], dtype=float)

    def stretch_gaps(self, n: int, cache: int, k: int, start: float | None) -> np.ndarray:
        """The gaps of a stretch's k steps: its step times as `Setup.step_seconds` gives them,
        or, from the clock at its start, the differences of the clocks they add up to
        (numpy adds them one after another, as the engine did)."""
        flops_per_token, peak, weights, per_token, bandwidth = self.roofline
        compute = flops_per_token * n / peak
        memory = (weights + per_token * (cache + n * np.arange(k, dtype=np.int64))) / bandwidth
        steps = np.where(compute >= memory, compute, memory)
        if start is None:
            return steps
        clocks = np.add.accumulate(np.concatenate(([start], steps)))
        return np.diff(clocks)
