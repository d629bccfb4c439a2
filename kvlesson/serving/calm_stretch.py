"""The time of a calm stretch: k alike steps in closed form.

Between two events (a chat joins, finishes or is paused)
the same n chats run and each reads one token a step: every step has the
same arithmetic time and reads n more tokens of cache than the step before,
a memory time that rises in a straight line. The fast engine sums such a
stretch here instead of step by step (the lesson's engine in `fast_engine`).
"""

from __future__ import annotations

from kvlesson.serving.settings import Setup


def stretch_seconds(setup: Setup, cache: int, n: int, k: int) -> float:
    """Time of k alike steps with n chats running, the first reading `cache` tokens of cache.

    Step j (0 .. k-1) reads n tokens, arithmetic time `compute`, and
    `cache + n j` tokens of cache, memory time (weights + c (cache + n j)) / bandwidth,
    a straight line that rises with j. So the step time is `compute` up to
    the step `cross` where the line reaches it, and the line after: the sum
    is compute x cross plus an arithmetic series,
    (m weights + c (m cache + n (cross + ... + k-1))) / bandwidth, m = k - cross.
    """
    flops_per_token, peak, weights, per_token, bandwidth = setup.roofline
    compute = flops_per_token * n / peak
    cross = 0
    if (weights + per_token * cache) / bandwidth < compute:
        cross = crossing(setup, cache, n, k, compute)
    m = k - cross
    line_bytes = m * weights + per_token * (m * cache + n * ((cross + k - 1) * m // 2))
    return compute * cross + line_bytes / bandwidth


def crossing(setup: Setup, cache: int, n: int, k: int, compute: float) -> int:
    """The first step j in 1 .. k whose memory time reaches `compute` (k if none does),
    compared in floats exactly as the reference compares them."""
    _, _, weights, per_token, bandwidth = setup.roofline

    def memory(j: int) -> float:
        return (weights + per_token * (cache + n * j)) / bandwidth

    # where the line crosses, give or take a rounding; then settle it
    estimate = (compute * bandwidth - weights - per_token * cache) / (per_token * n)
    cross = min(max(int(estimate), 1), k)
    while cross > 1 and memory(cross - 1) >= compute:
        cross -= 1
    while cross < k and memory(cross) < compute:
        cross += 1
    return cross
