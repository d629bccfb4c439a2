"""The capstone: size a deployment for three kinds of user.

Each user comes with a workload (seeded, so a hidden test can draw another
day of the same kind) and a target. A choice sets the share, the ceiling, the
cap, the token budget and the proxy's admission cap (prefix caching is on,
vLLM V1's default). A choice passes when the server starts, serves every chat
(none passes the ceiling), meets the target, and writes at least 90% of the
tokens/s of the best choice a grid search finds among those that meet it.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from kvlesson.arguments import whole
from kvlesson.memory.floor import ServerWontStart
from kvlesson.memory.specs import QWEN25_7B, RTX_3090
from kvlesson.serving.arrivals import Request, burst_arrivals, office_day
from kvlesson.serving.chats import Chat
from kvlesson.serving.fast_engine import serve_fast
from kvlesson.serving.latency import Latency, latency
from kvlesson.serving.settings import past_the_ceiling

NEAR_BEST = 0.90  # a choice must reach 90% of the best tokens/s (the 10%)
SHOWN_SEED = 1  # the day the notebook shows; hidden tests draw others
HIDDEN_SEEDS = (2, 3)
# The office's own card and model, as in seeds 001 and 002: a 24 GB RTX 3090 and Qwen2.5 7B.
HARDWARE = {"gpu": RTX_3090, "model": QWEN25_7B}
# The grid the grader searches: every combination (3 x 3 x 3 x 3 x 2 = 162 runs a user and day).
GRID = {
    "share": (85, 90, 95),
    "longest": (8_000, 16_000, 32_000),
    "cap": (4, 16, 64),
    "budget": (256, 1_024, None),
    "admission": (None, 16),
}


@dataclass(frozen=True)
class Choice:
    """Settings for one deployment (None: no budget, or no proxy)."""

    share: int
    longest: int
    cap: int
    budget: int | None
    admission: int | None


@dataclass(frozen=True)
class User:
    """A kind of user: what they send, and what they need (seconds; None: no target)."""

    name: str
    about: str
    ttft_p95_s: float | None = None
    ttft_p99_s: float | None = None
    tpot_p95_s: float | None = None

    def workload(self, seed: int = SHOWN_SEED) -> list[Request]:
        return WORKLOADS[self.name](whole("seed", seed, 0))

    def misses(self, report: Latency) -> list[str]:
        """The targets a run missed, each with by how much."""
        checks = [
            ("p95 TTFT", report.ttft.p95, self.ttft_p95_s),
            ("p99 TTFT", report.ttft.p99, self.ttft_p99_s),
            ("p95 TPOT", report.tpot.p95, self.tpot_p95_s),
        ]
        return [
            f"{label} is {seconds(got)}, over the target of {seconds(target)} by "
            f"{seconds(got - target)}"
            for label, got, target in checks
            if target is not None and not got <= target
        ]


def seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def assistant_day(seed: int) -> list[Request]:
    """One person: 20 long documents (2,000..20,000 tokens, log-uniform) about 2 minutes apart."""
    rng = random.Random(seed)
    clock, out = 0.0, []
    for _ in range(20):
        prompt = round(math.exp(rng.uniform(math.log(2_000), math.log(20_000))))
        out.append(Request(prompt, rng.randint(100, 800), clock))
        clock += rng.expovariate(1 / 120)
    return out


def office(seed: int) -> list[Request]:
    """30 people, 8 turns each about 30 s apart, a 1,000-token system prompt, messages of
    50..1,500 tokens (some pasted text) and replies of 100..600: history grows every turn."""
    return office_day(
        people=30,
        turns=8,
        system=1_000,
        seed=seed,
        think=30.0,
        message=(50, 1_500),
        reply=(100, 600),
    )


def app_day(seed: int) -> list[Request]:
    """Customers in bursts: 10 bursts of 16 chats, 15 s apart, prompts 600..3,000 tokens,
    replies 40..400, all starting with the app's 600-token system prompt."""
    rng = random.Random(seed)
    chats = [Chat(rng.randint(600, 3_000), rng.randint(40, 400)) for _ in range(10 * 16)]
    return [
        Request(r.prompt, r.reply, r.arrives, (("app", 600),))
        for r in burst_arrivals(chats, size=16, every=15.0)
    ]


WORKLOADS = {"assistant": assistant_day, "office": office, "app": app_day}
USERS = {
    "assistant": User(
        "assistant",
        "a personal assistant: one person who pastes long "
        "documents; the first words within 5 s (p95 TTFT)",
        ttft_p95_s=5.0,
    ),
    "office": User(
        "office",
        "an office tool for 30 people in long threads; answers start within 1 s (p95 TTFT)",
        ttft_p95_s=1.0,
    ),
    "app": User(
        "app",
        "a customer app with bursts of 16 customers; the slowest first words "
        "within 8 s (p99 TTFT) and a steady typing speed (p95 TPOT within 60 ms)",
        ttft_p99_s=8.0,
        tpot_p95_s=0.060,
    ),
}


def user(name: str) -> User:
    if name not in USERS:
        raise ValueError(f"user must be one of {', '.join(USERS)}, got {name!r}")
    return USERS[name]


def as_choice(choice: Choice | dict) -> Choice:
    """A Choice, from a Choice or a dict with the five settings."""
    if isinstance(choice, Choice):
        return choice
    if not isinstance(choice, dict) or set(choice) != set(GRID):
        raise TypeError(
            f"a choice must be a dict with exactly the keys {', '.join(GRID)}, got {choice!r}"
        )
    return Choice(**choice)


@functools.lru_cache(maxsize=4_096)
def run(name: str, choice: Choice, seed: int) -> tuple[Latency | None, str]:
    """The user's day served with `choice`: its latency report, or None and why it failed."""
    day = user(name).workload(seed)
    try:
        traffic = dict(budget=choice.budget, prefix_caching=True, admission=choice.admission)
        result = serve_fast(day, choice.cap, choice.share, choice.longest, **traffic, **HARDWARE)
    except ServerWontStart as error:
        return None, f"the server does not start: {error}"
    except (TypeError, ValueError) as error:  # a setting of the wrong kind or out of range
        return None, str(error)
    if result.refused:
        longest = max(chat.tokens for chat in day)
        refused = "it" if result.refused == 1 else "them"
        return None, (
            f"{past_the_ceiling(result.refused)} of {choice.longest:,} tokens (the "
            f"longest is {longest:,}): the server refuses {refused}"
        )
    return latency(result), ""


def best(name: str, seed: int = SHOWN_SEED) -> tuple[Choice, float]:
    """The grid's choice with the most tokens/s among those that meet the target, and its
    tokens/s: the grid search (the answer a student must find; the grader's table of them
    lives with its key, not here)."""
    return search(name, seed)


def best_tokens_per_s(name: str, seed: int = SHOWN_SEED) -> float:
    """The tokens/s of the grid's best choice for the user on that day: what a choice must
    reach 90% of. Stored for the days the course uses (no choice with them), searched for
    any other day."""
    stored = BEST_TOKENS_PER_S.get((user(name).name, whole("seed", seed, 0)))
    return stored if stored is not None else search(name, seed)[1]


@functools.lru_cache(maxsize=64)
def search(name: str, seed: int = SHOWN_SEED) -> tuple[Choice, float]:
    """The grid search: the choice with the most tokens/s among those that meet the target
    (the first in the grid's order when two tie). A ceiling shorter than the day's longest
    chat refuses it, so that choice is not served; and the ceiling changes a run only by
    whether the server starts and what it refuses (`reserved` is off here), so settings
    that differ only in a ceiling that starts and refuses nothing share one run."""
    day = user(name).workload(seed)
    longest_chat = max(chat.tokens for chat in day)
    found, served = [], {}
    for values in itertools.product(*GRID.values()):
        choice = Choice(*values)
        if choice.longest < longest_chat:
            continue
        same = (choice.share, choice.cap, choice.budget, choice.admission)
        report = served[same] if same in served else run(name, choice, seed)[0]
        if report is not None:
            served[same] = report
            if not user(name).misses(report):
                found.append((report.tokens_per_s, values))
    if not found:
        raise ValueError(f"no choice in the grid meets the {name} target")
    tokens_per_s, values = max(found, key=lambda pair: pair[0])
    return Choice(*values), tokens_per_s


# The best tokens/s for the shown day and the hidden days (search(name, seed)[1], which
# tests/serving/test_capstone.py checks against the grader's key, keys/06_traffic.json,
# where the build writes the best choices themselves).
BEST_TOKENS_PER_S = {
    ("assistant", 1): 3.4032367254286986,
    ("assistant", 2): 3.8142171268648664,
    ("assistant", 3): 4.971687986297083,
    ("office", 1): 205.91641376954178,
    ("office", 2): 133.4573488607806,
    ("office", 3): 205.09077029300695,
    ("app", 1): 248.16693218876725,
    ("app", 2): 243.15121259226166,
    ("app", 3): 243.00123643617792,
}


@dataclass(frozen=True)
class Verdict:
    """A choice for a user on one day: does it pass, and if not, why."""

    passes: bool
    report: Latency | None
    best_tokens_per_s: float
    problems: tuple[str, ...]

    def __str__(self) -> str:
        if self.passes:
            return (
                f"Meets the target at {self.report.tokens_per_s:,.1f} tokens/s "
                f"(the best in the grid: {self.best_tokens_per_s:,.1f})."
            )
        return "Not yet: " + "; ".join(self.problems) + "."


def verdict(name: str, choice: Choice | dict, seed: int = SHOWN_SEED) -> Verdict:
    """Run `choice` on the user's day and judge it against the target and the grid's best; a
    choice that is not one (a missing key, a setting of the wrong kind) fails with the reason,
    in the same words whether the notebook prints it or a self-check asks (walk item 22)."""
    top = best_tokens_per_s(name, seed)
    try:
        choice = as_choice(choice)
    except TypeError as error:
        return Verdict(False, None, top, (str(error),))
    report, failure = run(name, choice, seed)
    if report is None:
        return Verdict(False, None, top, (failure,))
    problems = user(name).misses(report)
    if report.tokens_per_s < NEAR_BEST * top:
        problems.append(
            f"{report.tokens_per_s:,.1f} tokens/s is "
            f"{report.tokens_per_s / top:.0%} of the best choice's {top:,.1f} "
            f"(needs {NEAR_BEST:.0%})"
        )
    return Verdict(not problems, report, top, tuple(problems))


def explain(name: str, get_choice: Callable[[], Choice | dict]) -> str:
    """What a self-check prints above its verdict: the verdict on the shown day with its
    reasons, or, when the student's answer did not run or is not a choice, what is wrong
    (the self-check under it then says "Not yet:")."""
    try:
        return str(verdict(name, get_choice()))
    except NameError as error:
        return f"{error}: run your answer cell first."
    except (TypeError, ValueError) as error:
        return str(error)


def meets(name: str, choice: Choice | dict, seed: int = SHOWN_SEED) -> bool:
    """True if `choice` passes for this user on the day drawn with `seed`."""
    return verdict(name, choice, seed).passes
