"""Properties of the server on random small workloads.

Whatever the chats, pool, cap and ceiling: blocks are never lost or made up,
nothing goes negative, every chat is served to its last token or refused,
and the same input gives the same result. `workload` draws one case from any
source of whole numbers, so hypothesis and a seeded generator draw the same
kind of case; the seeded one checks that pauses do happen in them.
"""

from __future__ import annotations

import math
import random

from hypothesis import given, settings, strategies as st

import kvlesson as kv
from support.engines import workload
from support.examples import examples


@st.composite
def workloads(draw) -> dict:
    return workload(lambda low, high: draw(st.integers(low, high)))


def served(case: dict) -> list[int]:
    """Indices of the chats the case serves: those within the ceiling (or the pool)."""
    limit = case["longest"] or 16 * case["blocks"]
    return [i for i, (prompt, reply) in enumerate(case["chats"]) if prompt + reply <= limit]


@settings(max_examples=examples(200), deadline=None)
@given(workloads())
def test_blocks_are_never_lost_or_made_up(case):
    for step in kv.trace(**case):
        assert sum(step.held.values()) + step.free == case["blocks"]
        assert step.free >= 0
        assert all(held > 0 for held in step.held.values())
        assert set(step.held) == set(step.running)
        assert 1 <= len(step.running) <= case["cap"]


@settings(max_examples=examples(200), deadline=None)
@given(workloads())
def test_every_chat_finishes_once_or_is_refused(case):
    steps = kv.trace(**case)
    finished = [i for step in steps for i in step.finished]
    assert sorted(finished) == served(case)
    replies = sum(case["chats"][i][1] for i in served(case))
    assert sum(len(step.running) for step in steps) == replies  # one token per chat per step
    r = kv.serve(**case)
    assert r.tokens == replies
    assert r.refused == len(case["chats"]) - len(served(case))


@settings(max_examples=examples(200), deadline=None)
@given(workloads())
def test_reserved_chats_hold_the_full_ceiling_and_never_pause(case):
    steps = kv.trace(**case)
    if case["reserved"]:
        need = kv.blocks_for(case["longest"])
        assert all(held == need for step in steps for held in step.held.values())
        assert not any(step.paused for step in steps)


@settings(max_examples=examples(200), deadline=None)
@given(workloads())
def test_same_input_same_result(case):
    assert repr(kv.serve(**case)) == repr(kv.serve(**case))


@settings(max_examples=examples(200), deadline=None)
@given(workloads())
def test_reported_figures_are_sane_and_match_the_trace(case):
    r = kv.serve(**case)
    steps = kv.trace(**case)
    assert (r.steps, r.pauses) == (len(steps), sum(len(s.paused) for s in steps))
    assert r.seconds == steps[-1].clock
    assert math.isfinite(r.seconds) and r.seconds > 0
    assert math.isfinite(r.avg_running) and 0 < r.avg_running <= case["cap"]
    assert r.rebuilt_tokens >= 0 and r.pauses >= 0
    if any(case["chats"][i][1] > 1 for i in served(case)):
        assert math.isfinite(r.wait_ms) and r.wait_ms >= 0
    else:  # every served reply is one token: no gap between words to average
        assert math.isnan(r.wait_ms)


def test_the_workloads_do_pause():
    """The properties are not vacuous: pauses happen in a good share of cases."""
    cases = [workload(random.Random(seed).randint) for seed in range(200)]
    paused = sum(kv.serve(**case).pauses > 0 for case in cases)
    assert paused >= 0.25 * len(cases)
    assert any(case["reserved"] for case in cases)
    assert any(kv.serve(**case).refused for case in cases)
