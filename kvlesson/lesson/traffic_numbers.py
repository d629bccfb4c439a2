"""Notebook 6's quoted numbers: vLLM's defaults on the card, and the proxy's day under
vLLM's two admission rules.

Section 4 serves seed 001's six coding agents on a pool of two and a half
full-length requests, with and without a proxy, once as vLLM admits a waiting
request since 0.19 (its whole prompt must fit) and once as before (its first
chunk must fit); then a day of agents whose replies outgrow the pool, which
still fills it today. Every figure the text quotes is made here, so a test can
run the same days and hold the text to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from kvlesson.lesson import quote
from kvlesson.lesson.quote import Figure
from kvlesson.lesson.tables import captioned
from kvlesson.memory.floor import BLOCK_TOKENS, blocks_for
from kvlesson.memory.specs import GPU, H100_80GB
from kvlesson.memory.vllm_defaults import VLLM_RELEASE, WHOLE_PROMPT_SINCE, v1_defaults
from kvlesson.serving.arrivals import Request, agents
from kvlesson.serving.fast_engine import serve_fast
from kvlesson.serving.latency import latency
from kvlesson.serving.results import ServeResult
from kvlesson.serving.settings import ADMIT_RULES, FIRST_CHUNK, WHOLE_PROMPT

RIG_LONGEST = 32_000  # the agents' ceiling, tokens
RIG_POOL = 2.5  # full-length requests the rig's pool holds (seed 001: "2.49x")
RIG_BUDGET = 2_048  # max_num_batched_tokens: vLLM's default for vllm serve on such a card
SERVER_CAP = 256  # max_num_seqs: vLLM's default on such a card
PROXY_CAPS = (None, 6, 4, 2)  # the proxy's admission caps tried (None: no proxy)
LONG_REPLY_CAPS = (None, 8, 4)
AGENTS_SEED = 4
# A page of prose, in tokens: about 375 words at OpenAI's rule of thumb of 0.75 words a
# token (help.openai.com, "What are tokens and how to count them?").
TOKENS_PER_PAGE = 500


def pages(tokens: int) -> int:
    """About how many pages of prose `tokens` tokens are (Bob's document in section 2)."""
    return round(tokens / TOKENS_PER_PAGE)


def rig() -> dict:
    """The rig's server: a pool of 2.5 requests of 32,000 tokens, a 2,048-token budget."""
    return dict(
        longest=RIG_LONGEST, blocks=int(RIG_POOL * blocks_for(RIG_LONGEST)), budget=RIG_BUDGET
    )


def rig_summary() -> str:
    """The rig of section 4 in one line, with the numbers its text quotes."""
    server = rig()
    full = server["blocks"] * BLOCK_TOKENS / RIG_LONGEST
    return (
        f"The pool: {server['blocks']:,} blocks, {full:.2f} requests of {RIG_LONGEST:,} tokens; "
        f"a budget of {RIG_BUDGET:,} tokens a step; a cap of {SERVER_CAP} requests."
    )


def six_agents() -> list[Request]:
    """Seed 001's six coding agents, six long requests each (prompts of 4K to 28K tokens)."""
    return agents(count=6, seed=AGENTS_SEED)


def reasoning_agents() -> list[Request]:
    """Twelve agents whose requests are short but whose replies run to 8K-30K tokens: the
    prompts fit at once, the replies then outgrow the pool."""
    return agents(
        count=12,
        requests=3,
        seed=AGENTS_SEED,
        prompt=(500, 2_000),
        reply=(8_000, 30_000),
        every=10.0,
    )


@dataclass(frozen=True)
class ProxyRun:
    """One day served with one admission rule and one proxy cap."""

    rule: str
    admission: int | None
    result: ServeResult

    @property
    def label(self) -> str:
        return f"{self.rule}, proxy {self.admission or 'none'}"


def proxy_runs(
    chats: list[Request],
    rules: Iterable[str] = ADMIT_RULES,
    caps: Iterable[int | None] = PROXY_CAPS,
) -> list[ProxyRun]:
    """The day on the rig under each admission rule and proxy cap."""
    return [
        ProxyRun(rule, cap, serve_fast(chats, SERVER_CAP, admission=cap, admit_rule=rule, **rig()))
        for rule in rules
        for cap in caps
    ]


def proxy_table(runs: list[ProxyRun]) -> pd.DataFrame:
    """One row a run: the rule, the proxy's cap, TTFT's p50 and p95, 503s, pauses, tokens
    rebuilt, the most requests waiting inside, tokens/s."""
    rows = []
    for run in runs:
        r, report = run.result, latency(run.result)
        rows.append(
            {
                "vLLM admits on": run.rule,
                "proxy cap": run.admission or "none",
                "p50 TTFT (s)": round(report.ttft.p50, 1),
                "p95 TTFT (s)": round(report.ttft.p95, 1),
                "503s": r.proxy_refusals,
                "pauses": r.pauses,
                "tokens rebuilt": r.rebuilt_tokens,
                "most waiting": report.most_waiting,
                "tokens/s": round(r.tokens_per_s),
            }
        )
    return captioned(
        pd.DataFrame(rows),
        f"The same day served {len(runs)} ways, one row a run: "
        "the rule vLLM admits on, the proxy's cap, TTFT, the proxy's 503s, pauses, "
        "tokens rebuilt, the most requests waiting inside and tokens/s",
    )


def _run(runs: list[ProxyRun], rule: str, cap: int | None) -> ServeResult:
    return next(run.result for run in runs if run.rule == rule and run.admission == cap)


def proxy_numbers(runs: list[ProxyRun]) -> dict[str, Figure]:
    """The figures section 4 quotes about the six agents: pauses and p95 TTFT with no proxy
    and with a cap of two, under each rule, and the old rule's cap of six."""
    figures = {}
    for rule, key in ((FIRST_CHUNK, "old"), (WHOLE_PROMPT, "now")):
        for cap, name in ((None, "open"), (2, "cap2")):
            result = _run(runs, rule, cap)
            p95 = latency(result).ttft.p95
            figures[f"{key}_{name}_pauses"] = Figure(
                result.pauses, quote.count(result.pauses), f"{rule}, proxy {cap or 'none'}: pauses"
            )
            figures[f"{key}_{name}_p95"] = Figure(
                p95, f"{p95:,.0f} s", f"{rule}, proxy {cap or 'none'}: p95 TTFT"
            )
    loose = _run(runs, FIRST_CHUNK, 6)  # a cap above what the pool holds
    figures["old_cap6_refusals"] = Figure(
        loose.proxy_refusals, quote.count(loose.proxy_refusals), f"{FIRST_CHUNK}, proxy 6: 503s"
    )
    figures["old_cap6_pauses"] = Figure(
        loose.pauses, quote.count(loose.pauses), f"{FIRST_CHUNK}, proxy 6: pauses"
    )
    p95 = latency(loose).ttft.p95
    figures["old_cap6_p95"] = Figure(p95, f"{p95:,.0f} s", f"{FIRST_CHUNK}, proxy 6: p95 TTFT")
    worse = figures["now_cap2_p95"].value / figures["now_open_p95"].value
    figures["now_cap2_worse"] = Figure(
        worse, f"{worse:.1f} times", f"{WHOLE_PROMPT}: p95 TTFT with a cap of 2, over none"
    )
    return figures


def long_reply_numbers(runs: list[ProxyRun]) -> dict[str, Figure]:
    """The figures section 4 quotes about replies that outgrow the pool (today's rule)."""
    figures = {}
    for cap, name in ((None, "open"), (4, "cap4")):
        result = _run(runs, WHOLE_PROMPT, cap)
        p95 = latency(result).ttft.p95
        label = f"long replies, proxy {cap or 'none'}"
        figures[f"long_{name}_pauses"] = Figure(
            result.pauses, quote.count(result.pauses), f"{label}: pauses"
        )
        figures[f"long_{name}_rebuilt"] = Figure(
            result.rebuilt_tokens, quote.count(result.rebuilt_tokens), f"{label}: tokens rebuilt"
        )
        figures[f"long_{name}_p95"] = Figure(p95, f"{p95:,.0f} s", f"{label}: p95 TTFT")
        figures[f"long_{name}_rate"] = Figure(
            result.tokens_per_s, f"{result.tokens_per_s:,.0f} tokens/s", f"{label}: tokens/s"
        )
    return figures


def defaults_numbers(gpu: GPU) -> dict[str, Figure]:
    """vLLM's defaults on this notebook's card and on an H100, and the release they are from."""
    here, h100 = v1_defaults(gpu), v1_defaults(H100_80GB)
    return {
        "release": Figure(VLLM_RELEASE, VLLM_RELEASE, "the vLLM release the rules are read from"),
        "whole_prompt_since": Figure(
            WHOLE_PROMPT_SINCE,
            WHOLE_PROMPT_SINCE,
            "a waiting request joins only if its whole prompt fits, since",
        ),
        "budget_here": Figure(
            here.max_num_batched_tokens,
            quote.count(here.max_num_batched_tokens),
            f"max_num_batched_tokens on the {gpu.name}, vllm serve",
        ),
        "budget_h100": Figure(
            h100.max_num_batched_tokens,
            quote.count(h100.max_num_batched_tokens),
            "the same on an H100",
        ),
        "seqs_here": Figure(
            here.max_num_seqs, quote.count(here.max_num_seqs), f"max_num_seqs on the {gpu.name}"
        ),
        "caching_default": Figure(
            here.prefix_caching,
            "on" if here.prefix_caching else "off",
            "prefix caching, by default",
        ),
        "chunked_default": Figure(
            here.chunked_prefill,
            "on" if here.chunked_prefill else "off",
            "chunked prefill, by default",
        ),
    }
