"""The server step by step: the hand case, the ceiling, reserving, who is paused.

`trace` records each step as it ran: the chats running (oldest first), the
blocks each holds after growing and joining, the free blocks, and who joined,
was paused or finished in it.
"""

from __future__ import annotations

import pytest

import kvlesson as kv
from kvlesson.serving.settings import make_setup

HAND = [(30, 10), (30, 10)]  # two chats of 30 prompt tokens and 10 reply tokens


@pytest.fixture(scope="module")
def tight() -> list[kv.Step]:
    """The hand case in a pool of 4 blocks: one pause, 18 steps."""
    return kv.trace(HAND, cap=10, blocks=4, longest=None)


def at(steps: list[kv.Step], n: int) -> kv.Step:
    """Step n (numbered from 1, as the trace numbers them)."""
    step = steps[n - 1]
    assert step.step == n
    return step


def test_both_join_at_step_1_with_2_blocks_each(tight):
    step = at(tight, 1)
    assert step.joined == (0, 1)
    assert step.held == {0: 2, 1: 2}
    assert step.free == 0


def test_step_2_runs_both_without_change(tight):
    step = at(tight, 2)
    assert (step.running, step.held, step.free) == ((0, 1), {0: 2, 1: 2}, 0)
    assert step.joined == step.paused == ()


def test_step_3_pauses_the_newer_chat_to_grow_the_older(tight):
    step = at(tight, 3)
    assert step.paused == (1,)
    assert step.running == (0,)
    assert step.held == {0: 3}
    assert step.free == 1
    assert step.joined == ()  # nobody joins in a step that paused


def test_the_paused_chat_waits_until_the_older_one_finishes(tight):
    for n in range(4, 11):
        assert at(tight, n).running == (0,)
    assert at(tight, 10).finished == (0,)


def test_chat_1_rejoins_at_step_11_and_reads_its_32_tokens_again(tight):
    step = at(tight, 11)
    assert step.joined == (1,)
    assert step.held == {1: 3}  # blocks_for(32 + 1)
    setup = make_setup(10, blocks=4, longest=None)
    assert step.seconds == setup.step_seconds(32, 32)


def test_chat_1_finishes_at_step_18(tight):
    assert at(tight, 18).finished == (1,)
    assert len(tight) == 18
    assert sum(len(step.paused) for step in tight) == 1


def test_clock_is_the_sum_of_step_times(tight):
    clock = 0.0
    for step in tight:
        clock += step.seconds
        assert step.clock == clock


def test_trace_agrees_with_serve(tight):
    r = kv.serve(HAND, cap=10, blocks=4, longest=None)
    assert (r.steps, r.pauses, r.rebuilt_tokens) == (18, 1, 32)
    assert r.seconds == tight[-1].clock


def test_with_room_for_both_10_steps_and_no_pause():
    steps = kv.trace(HAND, cap=10, blocks=100, longest=None)
    assert len(steps) == 10
    assert all(step.paused == () for step in steps)
    assert steps[-1].finished == (0, 1)


# --- The ceiling ----------------------------------------------------------------


def test_a_chat_of_exactly_the_longest_length_is_served():
    r = kv.serve([(30, 10)], cap=1, longest=40, blocks=3)
    assert (r.refused, r.tokens) == (0, 10)


def test_a_chat_one_token_longer_is_refused_and_counted():
    r = kv.serve([(30, 10), (30, 11)], cap=2, longest=40, blocks=3)
    assert (r.refused, r.tokens) == (1, 10)
    assert r.first_token_s[1] is None
    steps = kv.trace([(30, 10), (30, 11)], cap=2, longest=40, blocks=3)
    assert all(1 not in step.running for step in steps)


def test_a_chat_too_big_for_the_whole_pool_is_refused_without_a_ceiling():
    r = kv.serve([(30, 10), (60, 10)], cap=2, longest=None, blocks=3)  # 70 tokens need 5 blocks
    assert (r.refused, r.tokens) == (1, 10)


# --- Reserving the ceiling --------------------------------------------------------


def test_reserved_mode_holds_the_full_ceiling_per_chat():
    steps = kv.trace(HAND, cap=10, longest=64, reserved=True, blocks=8)  # 4 blocks each
    assert steps[0].held == {0: 4, 1: 4}
    for step in steps:
        assert all(held == kv.blocks_for(64) for held in step.held.values())
        assert step.paused == ()
    assert len(steps) == 10


def test_reserved_mode_lets_fewer_chats_in():
    steps = kv.trace(HAND, cap=10, longest=64, reserved=True, blocks=7)  # room for one ceiling
    assert all(len(step.running) == 1 for step in steps)
    assert len(steps) == 20
    assert at(steps, 11).joined == (1,)


# --- The newest chat is paused, even the one being looked at ----------------------


def test_the_newest_chat_pauses_itself_when_it_needs_the_block():
    # Chat 0 joins with 21 tokens to come (2 blocks), chat 1 with 16 (1 block): the
    # pool of 3 is full. At step 2 chat 0 (context 21) needs nothing, chat 1
    # (context 16) needs a new block: it is the newest, so it pauses itself.
    steps = kv.trace([(20, 5), (15, 5)], cap=10, blocks=3, longest=None)
    assert at(steps, 1).held == {0: 2, 1: 1}
    step = at(steps, 2)
    assert step.paused == (1,)
    assert step.running == (0,)
    assert step.held == {0: 2}
    assert step.free == 1


def test_a_newer_chat_is_paused_before_an_older_one():
    # Three chats of 16-token prompts fill 6 blocks; at step 17 all three need a block.
    # The newest (2) gives its two back; the other two grow.
    steps = kv.trace([(16, 30), (16, 30), (16, 30)], cap=10, blocks=6, longest=None)
    paused = [(step.step, step.paused) for step in steps if step.paused]
    assert paused[0] == (17, (2,))
    assert at(steps, 17).held == {0: 3, 1: 3}
