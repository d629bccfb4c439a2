"""The server's settings: the pool, the ceiling, the cap, and the traffic knobs.

`make_setup` checks every setting and sizes the pool once; both engines
(`server` step by step, `fast_engine` event to event) run on the `Setup` it returns.
The lesson's settings are the cap, the share (or the blocks) and the ceiling;
notebook 6 adds the token budget, prefix caching and the admission cap, each
off by default, which gives the lesson's server, and the rule by which a
waiting chat joins when prompts are read in slices (`admit_rule`).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import KW_ONLY, dataclass, fields
from typing import Callable, Iterable

from kvlesson.arguments import flag, of_type, one_of, positive, whole
from kvlesson.memory.floor import (
    BLOCK_TOKENS,
    RESERVE_BYTES,
    ServerWontStart,
    blocks_for,
    check_starts,
    memory_parts,
)
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.memory.units import counted
from kvlesson.serving.arrivals import Request, as_requests
from kvlesson.serving.chats import Chat

LESSON_SHARE = 90  # the lesson's memory share, in percent
LESSON_LONGEST = 8_000  # the lesson's ceiling, in tokens
# How a waiting chat is admitted when its prompt is read in slices (chunked prefill):
# vLLM >= 0.19 checks that its whole prompt fits in the free blocks
# (SchedulerConfig.scheduler_reserve_full_isl = True, vllm/config/scheduler.py; applied in
# KVCacheManager.allocate_slots, vllm/v1/core/kv_cache_manager.py, v0.33.0); before 0.19,
# or with --no-scheduler-reserve-full-isl, only the first slice had to fit.
WHOLE_PROMPT, FIRST_CHUNK = "whole prompt", "first chunk"
ADMIT_RULES = (WHOLE_PROMPT, FIRST_CHUNK)


@dataclass(frozen=True)
class Setup:
    """What a run is served with: the pool, the ceiling, the cap and the hardware.

    `longest` is None for no ceiling. `reserved` holds the full ceiling for
    every chat from the moment it joins, instead of handing out blocks as it grows.
    `budget` is the most tokens one step reads (vLLM's max_num_batched_tokens;
    None: no limit, the lesson's server). `caching` turns prefix caching on.
    `admission` is the proxy's cap on requests inside the server (None: no proxy).
    `admit_rule` is WHOLE_PROMPT (vLLM >= 0.19: a waiting chat joins only if the blocks
    for its whole context are free) or FIRST_CHUNK (before 0.19: the blocks for the
    slice it reads now). Without a budget a chat reads its whole context at once, so
    the two rules agree.
    """

    cap: int
    blocks: int
    longest: int | None
    reserved: bool
    gpu: GPU
    model: Model
    budget: int | None = None
    caching: bool = False
    admission: int | None = None
    admit_rule: str = WHOLE_PROMPT

    @property
    def whole_prompt(self) -> bool:
        """True when a waiting chat must find room for its whole context to join (vLLM >= 0.19)."""
        return self.admit_rule == WHOLE_PROMPT

    @property
    def lesson(self) -> bool:
        """True when none of notebook 6's settings is on (arrivals are the chats' business)."""
        return self.budget is None and not self.caching and self.admission is None

    @functools.cached_property
    def roofline(self) -> tuple[int, float, int, int, float]:
        """The step time's terms, looked up once: 2 x params, peak, weight bytes,
        cache bytes a token, bandwidth."""
        model, gpu = self.model, self.gpu
        return (
            2 * model.params,
            gpu.peak_flops,
            model.weights_bytes,
            model.bytes_per_token,
            gpu.bandwidth,
        )

    def step_seconds(self, tokens_read: int, cache_tokens: int) -> float:
        """One step: the arithmetic for the tokens read, or the bytes moved (weights
        and every running chat's cache), whichever takes longer."""
        flops_per_token, peak, weights, per_token, bandwidth = self.roofline
        compute = flops_per_token * tokens_read / peak
        memory = (weights + per_token * cache_tokens) / bandwidth
        return max(compute, memory)


@dataclass(frozen=True)
class Settings:
    """A run's settings as a caller gives them, before any check: the one list of them that
    `serve`, `serve_fast`, `trace` and `make_setup` all take (a new setting is added here, and
    checked in `setup`).

    The first four may be given by position (`serve(chats, 64, 90, 8000)`), the rest by name.
    The pool comes from `share` (percent, default 90) or, instead, straight from `blocks`;
    `longest` is the ceiling in tokens (None: no ceiling); `reserved` holds the full ceiling
    for every chat. `budget`, `prefix_caching`, `admission` and `admit_rule` are notebook 6's.
    """

    cap: int
    share: int | None = None
    longest: int | None = LESSON_LONGEST
    reserved: bool = False
    _: KW_ONLY
    blocks: int | None = None
    gpu: GPU = A100_80GB
    model: Model = LLAMA_31_8B
    reserve_bytes: float = RESERVE_BYTES
    budget: int | None = None
    prefix_caching: bool = False
    admission: int | None = None
    admit_rule: str = WHOLE_PROMPT

    def setup(self) -> Setup:
        """Check the settings and size the pool; raise ServerWontStart if it cannot start.

        The budget must cover one token for each of `cap` chats, as vLLM requires
        (max_num_batched_tokens >= max_num_seqs).
        """
        cap, share, longest, reserved = self.cap, self.share, self.longest, self.reserved
        blocks, gpu, model, reserve_bytes = self.blocks, self.gpu, self.model, self.reserve_bytes
        budget, prefix_caching = self.budget, self.prefix_caching
        admission, admit_rule = self.admission, self.admit_rule
        cap = whole("cap", cap, 1)
        reserved = flag("reserved", reserved)
        prefix_caching = flag("prefix_caching", prefix_caching)
        admit_rule = one_of("admit_rule", admit_rule, ADMIT_RULES)
        of_type("gpu", gpu, GPU)
        of_type("model", model, Model)
        if budget is not None:
            budget = whole("budget", budget, cap)
        if admission is not None:
            admission = whole("admission", admission, 1)
        if longest is not None:
            longest = whole("longest", longest, 1)
        elif reserved:
            raise ValueError("reserved=True needs a ceiling: give longest (tokens, 1 or more)")
        if reserved and prefix_caching:
            raise ValueError(
                "prefix_caching needs blocks handed out as chats grow: use it with reserved=False"
            )
        if blocks is None:
            parts = memory_parts(
                LESSON_SHARE if share is None else share, gpu, model, reserve_bytes
            )
            if longest is not None:
                check_starts(parts, longest)
            blocks = parts.blocks
        else:
            if share is not None:
                raise ValueError("give the pool as share (percent) or as blocks, not both")
            blocks = whole("blocks", blocks, 1)
            positive("reserve_bytes", reserve_bytes, zero_ok=True)  # unused here, but still checked
            if longest is not None and blocks < blocks_for(longest):
                raise ServerWontStart(
                    f"blocks must be at least {blocks_for(longest):,} to hold one chat of the "
                    f"longest length ({longest:,} tokens), got {blocks:,}"
                )
        return Setup(
            cap,
            blocks,
            longest,
            reserved,
            gpu,
            model,
            budget,
            prefix_caching,
            admission,
            admit_rule,
        )


SETTINGS = frozenset(f.name for f in fields(Settings))
POSITIONAL = ("cap", "share", "longest", "reserved")  # the settings a caller may give by position


def settings_of(caller: str, args: tuple, named: dict, defaults: dict | None = None) -> Settings:
    """The Settings a call such as `serve(chats, *args, **named)` gives, with `defaults` where
    the caller differs from Settings (`trace` has no ceiling by default); a wrong argument is
    named as Python names it, for `caller`."""
    if len(args) > len(POSITIONAL):
        raise TypeError(
            f"{caller}() takes the chats and at most {len(POSITIONAL)} settings by position "
            f"({', '.join(POSITIONAL)}), got {len(args)}: give the rest by name"
        )
    given = dict(zip(POSITIONAL, args))
    twice = sorted(given.keys() & named.keys())
    if twice:
        raise TypeError(f"{caller}() got multiple values for argument {twice[0]!r}")
    unknown = sorted(named.keys() - SETTINGS)
    if unknown:
        raise TypeError(
            f"{caller}() got an unexpected keyword argument {unknown[0]!r}; "
            f"the settings are {', '.join(sorted(SETTINGS))}"
        )
    if "cap" not in given and "cap" not in named:
        raise TypeError(f"{caller}() missing 1 required argument: 'cap'")
    return Settings(**{**(defaults or {}), **given, **named})


def make_setup(*args, **named) -> Setup:
    """Check the settings (those of `Settings`) and size the pool; raise ServerWontStart if the
    server cannot start."""
    return settings_of("make_setup", args, named).setup()


def takes_settings(**defaults) -> Callable:
    """Give an engine `run(chats, settings, **own)` the front door every engine shares:
    `run(chats, cap, share=None, longest=8000, reserved=False, *, blocks=..., gpu=..., ...)`,
    the fields of `Settings` (with `defaults` where this engine differs) and its own keyword
    arguments; its signature and help show them all."""

    def wrap(run: Callable) -> Callable:
        own = [p for p in inspect.signature(run).parameters.values()][2:]

        @functools.wraps(run)
        def front(chats, *args, **named):
            mine = {p.name: named.pop(p.name) for p in own if p.name in named}
            return run(chats, settings_of(run.__name__, args, named, defaults), **mine)

        shown = [
            inspect.Parameter(
                f.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD
                if f.name in POSITIONAL
                else inspect.Parameter.KEYWORD_ONLY,
                default=defaults.get(f.name, f.default),
                annotation=f.type,
            )
            for f in fields(Settings)
        ]
        chats = inspect.Parameter("chats", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        shown[0] = shown[0].replace(default=inspect.Parameter.empty)  # cap: required
        front.__signature__ = inspect.Signature([chats, *shown, *own])
        return front

    return wrap


def accepted(setup: Setup, chats: list[Chat]) -> list[int]:
    """Indices of the chats that are served; the rest are refused (and counted): a chat that
    passes the ceiling, or (with no ceiling) one that could not fit in the whole pool."""
    limit = setup.longest if setup.longest is not None else setup.blocks * BLOCK_TOKENS
    ids = [i for i, chat in enumerate(chats) if chat.prompt + chat.reply <= limit]
    if not ids:
        ceiling = (
            f"{setup.longest:,} tokens" if setup.longest else f"the pool of {setup.blocks:,} blocks"
        )
        raise ValueError(f"every chat passes the ceiling ({ceiling}); nothing to serve")
    return ids


def past_the_ceiling(refused: int) -> str:
    """How many chats the ceiling turns away, as a sentence starts: '1 chat passes the
    ceiling', '3 chats pass the ceiling'."""
    return f"{counted(refused, 'chat')} {'passes' if refused == 1 else 'pass'} the ceiling"


def start(chats: Iterable, settings: Settings) -> tuple[list[Request], Setup]:
    """The chats as Requests and the checked settings, for either engine."""
    return as_requests(chats), settings.setup()
