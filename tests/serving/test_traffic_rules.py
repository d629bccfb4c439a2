"""The new rules on cases small enough to check by hand.

docs/traffic.md's worked example step by step; chunked prefill keeping the
replies going; prefix hits and the cache's order of eviction; the proxy and
its retries; arrivals and idle time; the percentile method; the workload
generators; and bad settings refused with a message that names the range.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import kvlesson as kv
from kvlesson.serving.block_pool import BlockPool
from kvlesson.serving.proxy import RETRY_AFTER_S

EXAMPLE = [
    kv.Request(20, 3, 0.0, (("system", 16),)),
    kv.Request(40, 3, 0.0),
    kv.Request(18, 2, 0.015, (("system", 16),)),
]
EXAMPLE_SETTINGS = dict(cap=4, blocks=10, budget=16, prefix_caching=True, longest=None)


# --- the worked example of docs/traffic.md ----------------------------------------


def test_worked_example_step_by_step():
    steps = kv.trace(EXAMPLE, **EXAMPLE_SETTINGS)
    table = [(s.slices, s.wrote, s.held, s.free, s.joined, s.finished) for s in steps]
    assert table == [
        ({0: 16}, (), {0: 1}, 9, (0,), ()),
        ({0: 4, 1: 12}, (0,), {0: 2, 1: 1}, 7, (1,), ()),
        ({0: 1, 1: 15}, (0,), {0: 2, 1: 2}, 6, (), ()),
        ({0: 1, 1: 13, 2: 2}, (0, 1, 2), {0: 2, 1: 3, 2: 2}, 4, (2,), (0,)),
        ({1: 1, 2: 1}, (1, 2), {1: 3, 2: 2}, 5, (), (2,)),
        ({1: 1}, (1,), {1: 3}, 7, (), (1,)),
    ]
    assert steps[2].waiting == 1 and steps[3].waiting == 0  # chat 2 waits a step for budget
    assert steps[3].private == {0: 1, 1: 2, 2: 1} and steps[3].shared == 2


def test_worked_example_figures():
    result = kv.serve(EXAMPLE, **EXAMPLE_SETTINGS)
    assert (result.hit_tokens, result.lookup_tokens) == (16, 78)
    assert round(result.hit_rate, 3) == 0.205
    ttft = kv.chat_times(result)["ttft_s"]
    assert [round(t * 1000, 1) for t in ttft] == [15.8, 31.5, 16.5]


# --- chunked prefill ---------------------------------------------------------------

DOCUMENT = [kv.Request(100, 60, 0.0), kv.Request(8_000, 5, 0.05)]  # a reply, then a pasted document


def test_without_a_budget_the_document_freezes_the_reply_for_a_step():
    times = [s.clock for s in kv.trace(DOCUMENT, cap=4, blocks=1_000, longest=None) if 0 in s.wrote]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert max(gaps) > 5 * min(gaps)  # the step that reads 8,000 tokens at once


def test_with_a_budget_the_reply_keeps_going_and_the_document_comes_later():
    whole = kv.serve(DOCUMENT, 4, blocks=1_000, longest=None)
    sliced_steps = kv.trace(DOCUMENT, cap=4, blocks=1_000, longest=None, budget=512)
    sliced = kv.serve(DOCUMENT, 4, blocks=1_000, longest=None, budget=512)

    def worst_gap(steps):
        times = [s.clock for s in steps if 0 in s.wrote]
        return max(b - a for a, b in zip(times, times[1:]))

    whole_steps = kv.trace(DOCUMENT, cap=4, blocks=1_000, longest=None)
    assert worst_gap(sliced_steps) < worst_gap(whole_steps) / 10  # slower steps, no freeze
    reads = [s.slices[1] for s in sliced_steps if 1 in s.slices and 1 not in s.wrote]
    assert len(reads) == math.ceil(8_000 / 511) - 1 and set(reads) == {511}  # 511 + the reply's 1
    assert sliced.first_token_s[1] > whole.first_token_s[1]  # the document's first word later
    assert kv.latency(sliced).itl.worst < kv.latency(whole).itl.worst


def test_a_bigger_budget_brings_the_first_token_sooner():
    ttft = [
        kv.serve(DOCUMENT, 4, blocks=1_000, longest=None, budget=b).first_token_s[1]
        for b in (256, 1_024, 4_096)
    ]
    assert ttft[0] > ttft[1] > ttft[2]


# --- prefix caching ------------------------------------------------------------------


def test_a_shared_system_prompt_is_read_once():
    chats = [kv.Request(500, 10, 0.0, (("system", 480),)) for _ in range(4)]
    result = kv.serve(chats, 4, blocks=1_000, longest=None, prefix_caching=True)
    assert result.hit_tokens == 0  # all four join in the same step: nothing computed yet
    later = [kv.Request(500, 10, 0.1 * i, (("system", 480),)) for i in range(4)]
    result = kv.serve(later, 4, blocks=1_000, longest=None, prefix_caching=True)
    assert result.hit_tokens == 3 * 480  # 30 full blocks each for the last three


def test_a_conversation_finds_its_history():
    turn_1 = kv.Request(100, 50, 0.0, (("alice", 150),))
    turn_2 = kv.Request(180, 20, 5.0, (("alice", 200),))  # history of 150 + a new message
    result = kv.serve([turn_1, turn_2], 2, blocks=100, longest=None, prefix_caching=True)
    assert result.hit_tokens == 144  # the 9 full blocks of turn 1's 150 tokens


def test_the_cache_empties_plain_blocks_first_then_the_oldest():
    pool = BlockPool(4)
    pool.take(3)
    for name in ("a", "b"):
        assert pool.name(name)
    pool.give_back(["a", "b", None])  # last block first: None, then b, then a
    assert (pool.plain, list(pool.cached)) == (2, ["b", "a"])
    pool.take(3)  # two plain, then the oldest cached
    assert list(pool.cached) == ["a"] and pool.free == 1
    assert pool.hits(["a", "b"]) == ["a"]


# --- the proxy --------------------------------------------------------------------------


def test_the_proxy_refuses_over_the_cap_and_the_client_retries():
    chats = [kv.Request(100, 20, 0.0)] * 3
    result = kv.serve(chats, 8, blocks=100, longest=None, admission=2)
    assert result.proxy_refusals == 1  # chat 2 is turned away once, then gets in
    assert result.first_token_s[2] >= RETRY_AFTER_S  # its TTFT counts from the first try
    assert kv.chat_times(result)["ttft_s"][2] == result.first_token_s[2]
    open_door = kv.serve(chats, 8, blocks=100, longest=None)
    assert open_door.first_token_s[2] < 0.1


def test_the_clients_retrying_outside_are_counted_over_time():
    """The chart of section 4 shows them: refused at 0 s, let in at its retry a second later."""
    chats = [kv.Request(100, 20, 0.0)] * 3
    assert kv.serve(chats, 8, blocks=100, longest=None, admission=2).outside == (
        (0.0, 1),
        (RETRY_AFTER_S, 0),
    )
    assert kv.serve(chats, 8, blocks=100, longest=None).outside == ()  # no proxy, nobody outside
    crowd = [kv.Request(100, 300, 0.0)] * 5
    result = kv.serve(crowd, 8, blocks=100, longest=None, admission=2)
    assert result.outside[0] == (0.0, 3) and result.outside[-1][1] == 0
    assert max(count for _, count in result.outside) == 3


def test_the_proxy_counts_waiting_requests_too():
    chats = [kv.Request(100, 300, 0.0)] * 4
    result = kv.serve(chats, 1, blocks=100, longest=None, admission=2)
    assert max(waiting + running for _, waiting, running in result.queue) == 2
    assert result.proxy_refusals > 2


# --- arrivals -----------------------------------------------------------------------------


def test_an_idle_server_waits_for_the_next_arrival():
    result = kv.serve([kv.Request(10, 2, 0.0), kv.Request(10, 2, 3.0)], 2, blocks=10, longest=None)
    assert result.first_token_s[1] == 3.0 + result.first_token_s[0]  # the same step, 3 s later
    assert result.steps == 4
    assert result.queue[1:3] == ((result.last_token_s[0], 0, 0), (3.0, 0, 1))


def test_poisson_and_bursts_are_seeded_and_keep_the_chats():
    chats = kv.lesson_chats(n=2_000)
    day = kv.poisson_arrivals(chats, rate=2.0, seed=7)
    assert day == kv.poisson_arrivals(chats, rate=2.0, seed=7)
    assert [(r.prompt, r.reply) for r in day] == [(c.prompt, c.reply) for c in chats]
    assert 0.95 < day[-1].arrives / 2_000 * 2.0 < 1.05  # mean gap 1/rate
    bursts = kv.burst_arrivals(chats[:7], size=3, every=10)
    assert [r.arrives for r in bursts] == [0, 0, 0, 10, 10, 10, 20]
    assert kv.lesson_chats()[0] == kv.Chat(429, 127)


def test_office_day_turns_resend_the_history():
    day = kv.office_day(people=3, turns=4, seed=1)
    assert len(day) == 12 and day == sorted(day, key=lambda r: r.arrives)
    for person in range(3):
        turns = [r for r in day if r.shared[1][0] == f"user {person}"]
        for before, after in zip(turns, turns[1:]):
            assert after.prompt > before.tokens  # the whole conversation so far, and more
            assert after.arrives > before.arrives


# --- the admission rule (vLLM 0.19 on: the whole prompt must fit) -------------------

# A reply is running in 7 of 10 blocks when a 60-token prompt arrives, with a budget of
# 32 tokens a step: its first slice needs 2 blocks, its whole prompt 4.
SQUEEZE = [kv.Request(100, 20, 0.0), kv.Request(60, 5, 0.05)]
SQUEEZE_SETTINGS = dict(cap=4, blocks=10, budget=32, longest=None)


def test_today_a_chat_waits_until_its_whole_prompt_fits():
    steps = kv.trace(SQUEEZE, **SQUEEZE_SETTINGS)
    joined = next(s for s in steps if 1 in s.joined)
    assert joined.running == (1,)  # it waited for the reply to finish and free its blocks
    assert not any(s.paused for s in steps)
    first_chunk = kv.trace(SQUEEZE, admit_rule="first chunk", **SQUEEZE_SETTINGS)
    early = next(s for s in first_chunk if 1 in s.joined)
    assert early.step < joined.step  # before 0.19 it joined on its first slice's 2 blocks
    assert early.running == (0, 1) and early.held == {0: 7, 1: 2}
    assert any(s.paused for s in first_chunk)  # and the two outgrew the pool: a pause


def test_without_a_budget_the_rules_give_the_same_run():
    for chats in (SQUEEZE, kv.agents(count=3, requests=2, seed=1)):
        runs = [
            kv.serve(chats, 4, blocks=6_000, longest=None, admit_rule=rule)
            for rule in ("whole prompt", "first chunk")
        ]
        assert runs[0] == runs[1]


# --- TPOT and ITL ----------------------------------------------------------------------


def test_a_frozen_step_shows_in_itl_not_in_tpot():
    """Bob's document read in one step freezes chat 0's reply once: one long gap (ITL),
    while its TPOT, the average over its 59 gaps, moves a little."""
    frozen = kv.latency(kv.serve(DOCUMENT, 4, blocks=1_000, longest=None))
    sliced = kv.latency(kv.serve(DOCUMENT, 4, blocks=1_000, longest=None, budget=256))
    assert frozen.itl.worst > 20 * sliced.itl.worst
    assert frozen.itl.worst == frozen.longest_step_s  # the gap is the step that froze
    assert frozen.tpot.worst < 3 * sliced.tpot.worst


def test_tpot_is_vllms_per_request_formula():
    """vllm bench serve: TPOT = (latency - TTFT) / (output tokens - 1), per request."""
    result = kv.serve(EXAMPLE, **EXAMPLE_SETTINGS)
    times = kv.chat_times(result)
    for i, row in times.iterrows():
        latency_minus_ttft = row["e2e_s"] - row["ttft_s"]
        assert row["tpot_s"] == pytest.approx(latency_minus_ttft / (row["reply"] - 1), rel=1e-12)


def test_report_percentiles_are_vllm_bench_serves():
    """vllm bench serve takes np.percentile (linear interpolation) over the values."""
    result = kv.serve_fast(kv.poisson_arrivals(kv.lesson_chats(n=60), 2.0, seed=3), 16, budget=512)
    report = kv.latency(result)
    ttft = kv.chat_times(result)["ttft_s"].to_numpy()
    assert (report.ttft.p50, report.ttft.p95, report.ttft.p99) == tuple(
        float(x) for x in np.percentile(ttft, [50, 95, 99])
    )
    gaps = result.gaps.values()
    assert report.itl.p99 == float(np.percentile(gaps, 99)) and report.itl.worst == gaps.max()


# --- percentiles ------------------------------------------------------------------------


def test_nearest_rank_percentiles():
    assert [kv.percentile(range(1, 11), p) for p in (50, 95, 99, 100)] == [5, 10, 10, 10]
    assert [kv.percentile(range(1, 101), p) for p in (50, 95, 99)] == [50, 95, 99]
    assert kv.percentile([3.0], 99) == 3.0
    assert kv.percentile([5, 1, 4, 2, 3], 40) == 2  # rank ceil(0.4 x 5) = 2, sorted


def test_nearest_rank_is_exact_where_floats_round():
    """ceil(7/100 x 100) in floats is 8 (0.07 x 100 = 7.000000000000001); the rank is 7."""
    assert kv.percentile(list(range(1, 101)), 7) == 7
    assert kv.percentile(list(range(1, 1001)), 99.9) == 999
    assert kv.percentile(list(range(1, 3)), 50) == 1


def exact_rank(n: int, p: Fraction) -> int:
    """ceil(p/100 x n) in exact arithmetic: the smallest whole r with 100 r >= p n."""
    return -(-(p * n) // 100)


@pytest.mark.parametrize("n", list(range(1, 401)) + [997, 1_000, 4_096, 10_007, 100_000])
def test_nearest_rank_against_exact_arithmetic(n):
    values = list(range(1, n + 1))  # the value at rank r is r
    whole = [Fraction(p) for p in range(1, 101)]
    decimals = [
        Fraction(text) for text in ("0.1", "2.5", "12.34", "33.3", "66.7", "99.5", "99.9", "99.99")
    ]
    for p in whole + decimals:
        given = int(p) if p.denominator == 1 else float(p)
        assert kv.percentile(values, given) == exact_rank(n, p), (n, p)


@pytest.mark.parametrize("p", [0, -1, 100.5, float("nan")])
def test_percentile_out_of_range(p):
    with pytest.raises(ValueError, match="p must"):
        kv.percentile([1, 2], p)


def test_percentile_of_nothing():
    with pytest.raises(ValueError, match="at least one"):
        kv.percentile([], 50)


# --- bad settings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings_, message",
    [
        (dict(cap=8, budget=4), r"budget must be in 8 or more, got 4"),
        (dict(cap=8, budget=0.5), r"budget must be a whole number"),
        (dict(cap=8, admission=0), r"admission must be in 1 or more, got 0"),
        (dict(cap=8, prefix_caching="yes"), r"prefix_caching must be True or False"),
        (dict(cap=8, reserved=True, prefix_caching=True), r"prefix_caching needs blocks"),
        (
            dict(cap=8, admit_rule="whole"),
            r"admit_rule must be one of 'whole prompt', 'first chunk'",
        ),
        (dict(cap=8, admit_rule=True), r"admit_rule must be one of .*, not bool"),
    ],
)
def test_bad_settings_are_named(settings_, message):
    for engine in (kv.serve, kv.serve_fast):
        with pytest.raises((ValueError, TypeError), match=message):
            engine(kv.lesson_chats(n=5), **settings_)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: kv.Request(10, 5, -1.0), r"arrives must be >= 0"),
        (
            lambda: kv.Request(10, 5, 0.0, (("a", 20),)),
            r"tokens of shared text 'a' must be in 1\.\.15",
        ),
        (lambda: kv.Request(10, 5, 0.0, (("a", 8), ("b", 8))), r"must be in 9\.\.15"),
        (lambda: kv.Request(10, 5, 0.0, [("a", 8)]), r"shared must be a tuple"),
        (lambda: kv.poisson_arrivals(kv.lesson_chats(n=3), rate=0), r"rate must be > 0"),
        (lambda: kv.burst_arrivals(kv.lesson_chats(n=3), size=0, every=1), r"size must be in 1"),
    ],
)
def test_bad_requests_are_named(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()
