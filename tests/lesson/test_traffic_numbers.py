"""Notebook 6's section 4, rerun: the proxy's day under vLLM's two admission rules.

The text quotes what `kvlesson.lesson.traffic_numbers` computes with the fast
engine. Here the same days are served again with the reference engine, under
the rule of vLLM 0.19 on (the whole prompt must fit) and the one before (the
first chunk must), and every figure the text quotes must come out the same and
appear in the text as the text writes it.
"""

from __future__ import annotations

import nbformat
import pytest

import kvlesson as kv
from kvlesson.lesson import traffic_numbers as tn
from kvlesson.serving.settings import FIRST_CHUNK, WHOLE_PROMPT
from support.paths import ROOT

NOTEBOOK = ROOT / "solutions" / "06_traffic" / "traffic.ipynb"

# What section 4 says, figure by figure (pinned: a change of the model shows here first).
QUOTED = {
    "old_open_pauses": "1,218",
    "old_open_p95": "397 s",
    "old_cap2_p95": "81 s",
    "now_open_pauses": "2",
    "now_open_p95": "29 s",
    "now_cap2_p95": "81 s",
    "now_cap2_worse": "2.8 times",
    "old_cap6_refusals": "6,979",
    "old_cap6_pauses": "1,377",
    "old_cap6_p95": "433 s",
    "long_open_pauses": "134",
    "long_open_rebuilt": "775,369",
    "long_open_p95": "750 s",
    "long_open_rate": "479 tokens/s",
    "long_cap4_pauses": "0",
    "long_cap4_p95": "1,619 s",
    "long_cap4_rate": "352 tokens/s",
}


@pytest.fixture(scope="module")
def figures() -> dict:
    runs = tn.proxy_runs(tn.six_agents())
    long_runs = tn.proxy_runs(tn.reasoning_agents(), rules=[WHOLE_PROMPT], caps=tn.LONG_REPLY_CAPS)
    return {**tn.proxy_numbers(runs), **tn.long_reply_numbers(long_runs)}


def section_4() -> str:
    """Section 4's prose, from its heading to section 5's."""
    text = "\n".join(
        cell.source
        for cell in nbformat.read(NOTEBOOK, as_version=4).cells
        if cell.cell_type == "markdown"
    )
    return text[text.index("## 4 · The proxy") : text.index("## 5 · ")]


@pytest.mark.parametrize("key, text", QUOTED.items())
def test_the_figures_section_4_quotes(figures, key, text):
    assert figures[key].text == text


def test_the_text_quotes_them_as_computed(figures):
    prose = " ".join(section_4().split())
    for key, text in QUOTED.items():
        number = text.split()[0]
        assert number in prose, (key, text)


@pytest.mark.parametrize("rule", [FIRST_CHUNK, WHOLE_PROMPT])
@pytest.mark.parametrize("cap", tn.PROXY_CAPS)
def test_the_reference_engine_serves_the_six_agents_alike(rule, cap):
    """The fast engine's runs behind the table, against the reference step loop."""
    fast = next(run.result for run in tn.proxy_runs(tn.six_agents(), [rule], [cap]))
    ref = kv.serve(tn.six_agents(), tn.SERVER_CAP, admission=cap, admit_rule=rule, **tn.rig())
    assert (fast.pauses, fast.rebuilt_tokens, fast.proxy_refusals, fast.steps) == (
        ref.pauses,
        ref.rebuilt_tokens,
        ref.proxy_refusals,
        ref.steps,
    )
    assert kv.latency(fast).ttft.p95 == pytest.approx(kv.latency(ref).ttft.p95, rel=1e-9)


def test_the_lesson_of_section_4():
    """Before 0.19 a cap of two cut the tail and every pause; since 0.19 the server holds back
    what does not fit, and the same cap only makes the tail worse."""

    def run(rule, cap):
        return kv.serve(tn.six_agents(), tn.SERVER_CAP, admission=cap, admit_rule=rule, **tn.rig())

    old_open, old_cap, now_open, now_cap = (
        run(FIRST_CHUNK, None),
        run(FIRST_CHUNK, 2),
        run(WHOLE_PROMPT, None),
        run(WHOLE_PROMPT, 2),
    )
    p95 = {
        name: kv.latency(result).ttft.p95
        for name, result in (
            ("old open", old_open),
            ("old cap", old_cap),
            ("now open", now_open),
            ("now cap", now_cap),
        )
    }
    assert old_open.pauses > 100 * max(now_open.pauses, 1) and old_cap.pauses == 0
    assert p95["old cap"] < p95["old open"] / 4
    assert p95["now cap"] > 2 * p95["now open"]
    assert now_open.tokens_per_s > now_cap.tokens_per_s


@pytest.mark.heavy  # seconds of a core: CI runs it, the quick tier does not
def test_long_replies_still_fill_the_pool_and_a_cap_only_moves_the_wait():
    days = {
        cap: kv.serve(tn.reasoning_agents(), tn.SERVER_CAP, admission=cap, **tn.rig())
        for cap in (None, 4)
    }
    assert days[None].pauses > 100 and days[4].pauses == 0
    assert kv.latency(days[4]).ttft.p95 > 2 * kv.latency(days[None]).ttft.p95
    assert days[4].tokens_per_s < days[None].tokens_per_s


def test_the_defaults_the_text_quotes():
    figures = tn.defaults_numbers(kv.A100_80GB)
    assert [
        figures[key].text
        for key in ("release", "whole_prompt_since", "budget_here", "budget_h100", "seqs_here")
    ] == ["0.33.0", "0.19.0", "2,048", "8,192", "256"]
