"""The extended server (arrivals, budget, prefix caching, proxy) on random workloads.

1. With all of notebook 6's settings off, both engines give the lesson's
   server (`lesson_model`, written apart from the package) to the last digit.
2. The fast engine equals the reference on traffic: counts equal, times 1e-9.
3. Properties: the budget is never exceeded, no chat starts before it
   arrives, every token is written once, blocks are conserved with the
   cache, percentiles are ordered.
`traffic` draws one case from any source of whole numbers, so hypothesis and
a seeded generator draw the same kind of case; the seeded one checks the
cases do chunk, hit the cache, refuse and pause.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import kvlesson as kv
from kvlesson.serving.arrivals import Request
from kvlesson.serving.fast_engine import serve_fast
from kvlesson.serving.fast_traffic_engine import SkippingServer
from kvlesson.serving.latency import latency
from kvlesson.serving.server import serve
from kvlesson.serving.settings import ADMIT_RULES, FIRST_CHUNK, WHOLE_PROMPT, Settings, start
from support.engines import TOY_GPUS, TOY_MODEL, assert_same, workload
from support.examples import examples
from support.lesson_model import lesson_serve

TEXTS = ("system", "alice", "bob")


def traffic(pick: Callable[[int, int], int]) -> dict:
    """One case: 1..25 chats arriving over 0..0.4 s (or all at 0), some starting with shared
    texts; a pool from tight to roomy; a cap, a budget, prefix caching and a proxy, each
    on or off; vLLM's admission rule of today (whole prompt) or before 0.19 (first chunk);
    the lesson's card or a toy one."""
    chats = []
    at_zero = pick(0, 3) == 0
    for _ in range(pick(1, 25)):
        prompt, reply = pick(1, 150), pick(1, 40)
        shared = ()
        if pick(0, 1):
            first = pick(1, prompt + reply)
            shared = ((TEXTS[0], first),)
            if pick(0, 1) and first < prompt + reply:
                shared += ((TEXTS[pick(1, 2)], pick(first + 1, prompt + reply)),)
        arrives = 0.0 if at_zero else pick(0, 400) / 1000
        chats.append(Request(prompt, reply, arrives, shared))
    need = kv.blocks_for(max(chat.tokens for chat in chats))
    blocks = need + [0, pick(0, 4), pick(0, 40), 10**6][pick(0, 3)]
    cap = pick(1, 12)
    budget = [None, cap, cap + pick(0, 60), cap + pick(0, 300)][pick(0, 3)]
    admission = [None, None, pick(1, 8)][pick(0, 2)]
    return dict(
        chats=chats,
        cap=cap,
        blocks=blocks,
        longest=None,
        budget=budget,
        prefix_caching=bool(pick(0, 1)),
        admission=admission,
        admit_rule=ADMIT_RULES[pick(0, 1)],
        **hardware_of(pick),
    )


@st.composite
def traffics(draw) -> dict:
    return traffic(lambda low, high: draw(st.integers(low, high)))


def hardware_of(pick) -> dict:
    """The lesson's card half the time, else a toy card on which some steps are compute-bound."""
    return {} if pick(0, 1) else {"gpu": TOY_GPUS[pick(0, 2)], "model": TOY_MODEL}


def lesson_figures(case: dict) -> dict:
    """The lesson model's figures for a case of test_properties' kind, on its hardware."""
    gpu, model = case.get("gpu", kv.A100_80GB), case.get("model", kv.LLAMA_31_8B)
    return lesson_serve(
        case["chats"],
        case["cap"],
        case["blocks"],
        case["longest"],
        case["reserved"],
        model.params,
        gpu.peak_flops,
        model.weights_bytes,
        model.bytes_per_token,
        gpu.bandwidth,
    )


def exactly_the_lesson(result: kv.ServeResult, lesson: dict) -> None:
    for name, value in lesson.items():
        assert repr(getattr(result, name)) == repr(value), name  # to the last digit


# --- 1. the reduction to the lesson -----------------------------------------


@pytest.mark.parametrize("seed", range(300))
def test_reference_is_the_lesson_on_seeded_settings(seed):
    rng = random.Random(seed)
    case = dict(workload(rng.randint), **hardware_of(rng.randint))
    lesson = lesson_figures(case)
    exactly_the_lesson(serve(**case), lesson)
    assert_same(serve_fast(**case), serve(**case))


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_settings_that_never_bind_change_nothing(data):
    """A budget no step reaches and a proxy cap above the chats give the lesson exactly."""
    case = dict(workload(lambda low, high: data.draw(st.integers(low, high))))
    lesson = lesson_figures(case)
    idle = dict(budget=10**9, admission=len(case["chats"]))
    exactly_the_lesson(serve(**case, **idle), lesson)
    assert_same(serve_fast(**case, **idle), serve(**case))


@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_prefix_caching_without_shared_texts_or_pauses_changes_nothing(data):
    case = dict(workload(lambda low, high: data.draw(st.integers(low, high))))
    if case["reserved"]:
        return  # prefix caching needs blocks handed out as chats grow
    lesson = lesson_figures(case)
    if not lesson["pauses"]:  # a paused chat finds its own blocks again: that is a change
        exactly_the_lesson(serve(**case, prefix_caching=True), lesson)


def test_the_lesson_sweep_is_unchanged():
    chats = kv.lesson_chats()
    a100, llama = kv.A100_80GB, kv.LLAMA_31_8B
    for cap in (1, 64, 256):
        lesson = lesson_serve(
            [(c.prompt, c.reply) for c in chats],
            cap,
            25_720,
            8_000,
            False,
            llama.params,
            a100.peak_flops,
            llama.weights_bytes,
            llama.bytes_per_token,
            a100.bandwidth,
        )
        exactly_the_lesson(serve(chats, cap), lesson)


# --- 2. the fast engine on traffic --------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(traffics())
def test_fast_equals_reference_on_traffic(case):
    assert_same(serve_fast(**case), serve(**case))


@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_the_skipping_engine_on_the_lessons_workloads(data):
    """serve_fast sends the lesson's runs to the closed form; the engine for traffic must
    give them right too (its stretches, pauses and reservations without arrivals)."""
    case = dict(workload(lambda low, high: data.draw(st.integers(low, high))))
    run = Settings(
        case["cap"], longest=case["longest"], reserved=case["reserved"], blocks=case["blocks"]
    )
    chats, setup = start(case["chats"], run)
    server = SkippingServer(chats, setup)
    server.run()
    assert_same(server.result(), serve(**case))


# --- 3. properties --------------------------------------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(traffics())
def test_budget_never_exceeded_and_nobody_starts_before_arriving(case):
    arrives = [chat.arrives for chat in case["chats"]]
    for step in kv.trace(**case):
        assert sum(step.slices.values()) <= (case["budget"] or float("inf"))
        assert all(part >= 1 for part in step.slices.values())
        assert all(arrives[i] <= step.start for i in step.joined)
        assert step.start + step.seconds == step.clock


@settings(max_examples=examples(200), deadline=None)
@given(traffics())
def test_every_token_written_once(case):
    steps = kv.trace(**case)
    written = [0] * len(case["chats"])
    for step in steps:
        for i in step.wrote:
            written[i] += 1
    result = serve(**case)
    for i, chat in enumerate(case["chats"]):
        served = result.first_token_s[i] is not None
        assert written[i] == (chat.reply if served else 0)
        assert not served or result.first_token_s[i] >= chat.arrives


@settings(max_examples=examples(200), deadline=None)
@given(traffics())
def test_blocks_are_conserved_with_the_cache(case):
    for step in kv.trace(**case):
        assert sum(step.private.values()) + step.shared + step.free == case["blocks"]
        assert step.free >= 0 and step.shared >= 0
        assert all(0 <= step.private[i] <= step.held[i] for i in step.running)
        assert 0 <= len(step.running) <= case["cap"]


@settings(max_examples=examples(200), deadline=None)
@given(traffics())
def test_percentiles_are_ordered(case):
    report = latency(serve_fast(**case))
    for spread in (report.ttft, report.itl, report.e2e):
        if spread.p50 == spread.p50:  # NaN when no chat has a gap
            assert 0 <= spread.p50 <= spread.p95 <= spread.p99 <= spread.worst
    assert 0 <= report.hit_rate < 1


@settings(max_examples=examples(200), deadline=None)
@given(traffics())
def test_the_two_admission_rules_agree_without_a_budget(case):
    """With no budget a joining chat reads its whole context at once, so the first chunk
    is the whole prompt: vLLM's rule of today and its rule before 0.19 are the same."""
    case["budget"] = None
    rules = [serve(**dict(case, admit_rule=rule)) for rule in (WHOLE_PROMPT, FIRST_CHUNK)]
    assert_same(*rules)


def joins_without_room(case: dict) -> int:
    """Joins in the case's trace whose whole context did not fit in the free blocks left
    when the chat joined (prefix caching off, so a chat's blocks are all its own)."""
    short = 0
    for step in kv.trace(**case):
        free = step.free + sum(step.held[i] for i in step.joined)  # free when the joins began
        for i in step.joined:
            short += kv.blocks_for(step.context[i]) > free
            free -= step.held[i]
    return short


@settings(max_examples=examples(200), deadline=None)
@given(traffics())
def test_whole_prompt_admission_never_admits_a_chat_that_does_not_fit(case):
    """Under today's rule a chat joins only when the free blocks cover its whole context."""
    case.update(admit_rule=WHOLE_PROMPT, prefix_caching=False)
    assert joins_without_room(case) == 0


def test_the_first_chunk_rule_did_admit_chats_that_did_not_fit():
    """Before 0.19 a chat whose first slice fitted joined anyway: seeded cases show it."""
    cases = [traffic(random.Random(seed).randint) for seed in range(200)]
    short = sum(
        joins_without_room(dict(case, admit_rule=FIRST_CHUNK, prefix_caching=False))
        for case in cases[:80]
    )
    assert short >= 5


@settings(max_examples=examples(200), deadline=None)
@given(traffics())
def test_every_gap_between_tokens_is_in_the_report(case):
    """ITL is every gap between two tokens of one chat: the trace's clocks give them."""
    steps = kv.trace(**case)
    times: dict[int, list[float]] = {}
    for step in steps:
        for i in step.wrote:
            times.setdefault(i, []).append(step.clock)
    gaps = sorted(b - a for clocks in times.values() for a, b in zip(clocks, clocks[1:]))
    assert sorted(serve(**case).gaps.values()) == gaps
    fast = np.sort(serve_fast(**case).gaps.values())
    closed_form = (
        case["budget"] is None
        and not case["prefix_caching"]
        and case["admission"] is None
        and not any(chat.arrives for chat in case["chats"])
    )
    if closed_form:  # the lesson's engine sums stretches in closed form: float rounding apart
        assert np.allclose(fast, gaps, rtol=1e-9, atol=0)
    else:  # the traffic engine replays the reference's clocks: to the last bit
        assert list(fast) == gaps


def test_the_traffic_cases_are_not_vacuous():
    """Over seeded cases: prompts read in slices, cache hits, 503s, pauses with caching
    on, and time jumping over idle stretches all occur."""
    cases = [traffic(random.Random(seed).randint) for seed in range(200)]
    results = [serve(**case) for case in cases]
    assert sum(r.hit_tokens > 0 for r in results) >= 20
    assert sum(r.proxy_refusals > 0 for r in results) >= 10
    assert sum(r.pauses > 0 and c["prefix_caching"] for r, c in zip(results, cases)) >= 10
    chunked = 0
    for case in cases[:60]:
        steps = kv.trace(**case)
        chunked += any(
            part > 1 and i not in step.wrote for step in steps for i, part in step.slices.items()
        )
    assert chunked >= 5
    # the server emptied, then more came
    idle = sum(any(q[1:] == (0, 0) for q in r.queue[:-1]) for r in results)
    assert idle >= 10
