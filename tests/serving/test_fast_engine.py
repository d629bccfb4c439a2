"""The fast engine against the reference: the same counts, the same times.

`serve_fast` must give exactly what `serve` gives: every count equal, every
time (the run's, each chat's first and last token, every gap between two
tokens) within 1e-9 relative.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

import kvlesson as kv
from kvlesson.serving.calm_stretch import stretch_seconds
from kvlesson.serving.fast_engine import serve_fast
from kvlesson.serving.server import serve
from kvlesson.serving.settings import make_setup
from support.engines import TOY_GPUS, TOY_MODEL, assert_same
from support.examples import examples

LESSON_CHATS = kv.lesson_chats()
CAPS = [2**k for k in range(10)]  # the sweep: 1, 2, 4, ..., 512


def check(chats, cap, **settings_) -> kv.ServeResult:
    """Run both engines on the same settings, compare, and return the reference's result."""
    ref = serve(chats, cap, **settings_)
    assert_same(serve_fast(chats, cap, **settings_), ref)
    return ref


# --- the lesson's settings -------------------------------------------------


@pytest.mark.parametrize("cap", CAPS)
def test_lesson_sweep(cap):
    check(LESSON_CHATS, cap, share=90, longest=8_000)


def test_lesson_sweep_figures():
    """The figures the lesson quotes at cap 256: 11 pauses, 21,333 tokens rebuilt."""
    result = serve_fast(LESSON_CHATS, 256)
    assert (result.pauses, result.rebuilt_tokens) == (11, 21_333)
    assert round(result.tokens_per_s) == 1_284 and round(result.avg_running, 1) == 194.9


@pytest.mark.parametrize("longest", [8_000, 32_000])
def test_lesson_reserved(longest):
    check(LESSON_CHATS, 512, share=90, longest=longest, reserved=True)


@pytest.mark.parametrize("share", [50, 35])
@pytest.mark.parametrize("cap", [32, 64, 128, 256, 512])
def test_lesson_lower_shares(share, cap):
    check(LESSON_CHATS, cap, share=share, longest=8_000)


@pytest.mark.parametrize("cap", [1, 8, 64, 512])
def test_lesson_unlimited_pool(cap):
    check(LESSON_CHATS, cap, blocks=10**9, longest=None)


def test_lesson_pauses_at_low_shares():
    """The comparisons above include runs with pauses (35%: 4 at cap 32, 39 from cap 64)."""
    assert serve_fast(LESSON_CHATS, 32, share=35).pauses == 4
    assert serve_fast(LESSON_CHATS, 64, share=35).pauses == 39


# --- the hand case ---------------------------------------------------------


def test_hand_case():
    """Two chats of 30 + 10 tokens in 4 blocks: one pause, 18 steps; with room: 10 steps."""
    tight = check([(30, 10), (30, 10)], 10, blocks=4, longest=None)
    assert (tight.steps, tight.pauses) == (18, 1)
    roomy = check([(30, 10), (30, 10)], 10, blocks=100, longest=None)
    assert (roomy.steps, roomy.pauses) == (10, 0)


# --- same checks, same refusals ---------------------------------------------


@pytest.mark.parametrize(
    "settings_",
    [
        dict(cap=0),
        dict(cap=1.5),
        dict(cap=8, share=10),  # the pool cannot hold one chat of 8,000 tokens
        dict(cap=8, share=90, blocks=100),
        dict(cap=8, blocks=10),  # fewer blocks than one chat of the ceiling
        dict(cap=8, longest=None, reserved=True),
        dict(cap=8, longest=100),  # every lesson chat passes the ceiling
        dict(cap=8, reserved="yes"),
    ],
)
def test_same_errors(settings_):
    with pytest.raises(Exception) as ref:
        serve(LESSON_CHATS, **settings_)
    with pytest.raises(Exception) as fast:
        serve_fast(LESSON_CHATS, **settings_)
    assert type(fast.value) is type(ref.value)
    assert str(fast.value) == str(ref.value)


def test_bad_chats():
    for chats in ([], "chats", [(1, 0)], [(1, 2, 3)]):
        with pytest.raises(Exception) as ref:
            serve(chats, 4)
        with pytest.raises(Exception) as fast:
            serve_fast(chats, 4)
        assert (type(fast.value), str(fast.value)) == (type(ref.value), str(ref.value))


# --- random small workloads ------------------------------------------------


@st.composite
def workloads(draw) -> dict:
    """Settings for `serve`: 1..40 chats, pools from tight to roomy, refusals and reservations.

    The pool starts at just enough for the chat it is sized on: the ceiling, or
    with no ceiling one of the chats. Half the time that is the largest chat;
    otherwise the larger chats are refused. Then it adds 0..4 blocks (tight,
    three runs in five: chats that joined side by side outgrow it and pause),
    up to 200, or a million. One run in five reserves the ceiling (no pauses).
    """
    size = draw(st.integers(1, 40))
    chats = draw(
        st.lists(st.tuples(st.integers(1, 200), st.integers(1, 60)), min_size=size, max_size=size)
    )
    sizes = sorted(prompt + reply for prompt, reply in chats)
    refusing = draw(st.booleans())
    sized_on = draw(st.sampled_from(sizes) if refusing else st.just(sizes[-1]))
    reserved = draw(st.sampled_from([False, False, False, False, True]))
    longest = None
    if reserved or draw(st.booleans()):
        longest = sized_on = sized_on + draw(st.integers(0, 20))
    room = draw(st.sampled_from(["tight", "tight", "tight", "some", "roomy"]))
    extra = draw(
        {"tight": st.integers(0, 4), "some": st.integers(0, 200), "roomy": st.just(10**6)}[room]
    )
    cap = draw(st.integers(1, 50))
    hardware = draw(
        st.one_of(
            st.just({}), st.sampled_from(TOY_GPUS).map(lambda gpu: {"gpu": gpu, "model": TOY_MODEL})
        )
    )
    return dict(
        chats=chats,
        cap=cap,
        longest=longest,
        reserved=reserved,
        blocks=kv.blocks_for(sized_on) + extra,
        **hardware,
    )


@settings(max_examples=examples(1000), deadline=None)
@given(workloads())
def test_random_workloads(workload):
    check(**workload)


def test_random_workloads_are_not_vacuous():
    """Over a fixed, seeded set of drawn workloads, pauses, refusals and reservations all occur."""
    runs = []

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(workloads())
    def collect(workload):
        runs.append((workload, serve(**workload)))

    collect()
    with_pauses = [result for _, result in runs if result.pauses]
    assert len(with_pauses) >= len(runs) // 4  # 86 of 200 when written
    assert sum(result.pauses for result in with_pauses) >= 200  # 344
    assert any(result.refused for _, result in runs)
    assert any(workload["reserved"] for workload, _ in runs)


# --- the closed form of a stretch -------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(
    cache=st.integers(1, 20_000),
    n=st.integers(1, 200),
    k=st.integers(1, 500),
    gpu=st.sampled_from(TOY_GPUS + [kv.A100_80GB]),
)
def test_stretch_seconds(cache, n, k, gpu):
    """k alike steps in closed form = the steps one by one, memory line and arithmetic floor alike."""
    model = TOY_MODEL if gpu is not kv.A100_80GB else kv.LLAMA_31_8B
    setup = make_setup(1, blocks=1, longest=None, gpu=gpu, model=model)
    one_by_one = sum(setup.step_seconds(n, cache + n * j) for j in range(k))
    assert math.isclose(stretch_seconds(setup, cache, n, k), one_by_one, rel_tol=1e-12)


def test_stretch_crosses_inside():
    """A stretch that starts compute-bound and ends memory-bound: the crossing is inside it."""
    setup = make_setup(1, blocks=1, longest=None, gpu=TOY_GPUS[1], model=TOY_MODEL)
    first, last = setup.step_seconds(10, 500), setup.step_seconds(10, 500 + 10 * 399)
    compute = setup.step_seconds(10, 0)
    assert first == compute < last  # the arithmetic floor first, the memory line last
    one_by_one = sum(setup.step_seconds(10, 500 + 10 * j) for j in range(400))
    assert math.isclose(stretch_seconds(setup, 500, 10, 400), one_by_one, rel_tol=1e-12)
