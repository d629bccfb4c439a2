"""Shared by the engines' tests: a toy setting that exercises the closed form's crossing,
the comparison of a fast engine's result with the reference's, and a random small workload."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import kvlesson as kv

COUNTS = (
    "cap",
    "blocks",
    "tokens",
    "steps",
    "pauses",
    "rebuilt_tokens",
    "refused",
    "proxy_refusals",
    "hit_tokens",
    "lookup_tokens",
    "replies",
    "arrives_s",
)
TIMES = ("seconds", "avg_running", "wait_ms", "longest_step_s")

# A toy model on slow arithmetic: its steps turn from memory-bound to
# compute-bound inside a stretch, so the closed form's crossing is exercised.
TOY_MODEL = kv.Model("toy", params=1_000, layers=1, kv_heads=1, head_size=64)
TOY_GPUS = [kv.GPU(f"toy {peak:.0e}", 80 * 10**9, peak, 1e12) for peak in (2.5e11, 7.7e10, 2.5e10)]


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def assert_same(fast: kv.ServeResult, ref: kv.ServeResult) -> None:
    """Counts equal; times, per run, per chat and in the queue's history, within 1e-9 relative."""
    for name in COUNTS:
        assert getattr(fast, name) == getattr(ref, name), name
    for name in TIMES:
        assert close(getattr(fast, name), getattr(ref, name)), (
            name,
            getattr(fast, name),
            getattr(ref, name),
        )
    for name in ("first_token_s", "last_token_s"):
        ours, theirs = getattr(fast, name), getattr(ref, name)
        assert len(ours) == len(theirs)
        bad = [i for i, (a, b) in enumerate(zip(ours, theirs)) if not close(a, b)]
        assert not bad, (name, bad[:5])
    assert [q[1:] for q in fast.queue] == [q[1:] for q in ref.queue]  # (time, waiting, running)
    assert all(close(a[0], b[0]) for a, b in zip(fast.queue, ref.queue))
    assert [q[1] for q in fast.outside] == [q[1] for q in ref.outside]  # clients retrying
    assert all(close(a[0], b[0]) for a, b in zip(fast.outside, ref.outside))
    ours, theirs = np.sort(fast.gaps.values()), np.sort(ref.gaps.values())  # every ITL gap
    assert len(ours) == len(theirs) == ref.tokens - (len(ref.replies) - ref.refused)
    assert np.allclose(ours, theirs, rtol=1e-9, atol=0.0)


MAX_CHATS, MAX_PROMPT, MAX_REPLY, MAX_CAP = 30, 120, 40, 20


def workload(pick: Callable[[int, int], int]) -> dict:
    """One case: chats, a pool from just enough for the longest chat to roomy, a cap,
    a ceiling (None: none) that may turn some chats away, reserved (a third) or not."""
    chats = [(pick(1, MAX_PROMPT), pick(1, MAX_REPLY)) for _ in range(pick(1, MAX_CHATS))]
    tokens = [prompt + reply for prompt, reply in chats]
    reserved = pick(0, 2) == 0
    longest = pick(min(tokens), max(tokens)) if reserved or pick(0, 1) else None
    need = kv.blocks_for(longest or max(tokens))
    roomy = sum(kv.blocks_for(t) for t in tokens)
    blocks = pick(need, pick(need, max(need, roomy)))  # tight pools more often than roomy ones
    return dict(
        chats=chats, cap=pick(1, MAX_CAP), blocks=blocks, longest=longest, reserved=reserved
    )
