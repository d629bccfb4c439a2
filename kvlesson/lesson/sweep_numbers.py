"""Notebook 3's quoted numbers: the lesson's chats, the cap sweep and where it stops paying,
reserving the ceiling at the top cap, smaller pools that move the knee, the prefill floor.

`sweep_numbers` gives them all, section 3 of `kvlesson numbers` (lesson/numbers.py), each part
from a function named for what it quotes.
"""

from __future__ import annotations

import pandas as pd

from kvlesson.lesson import quote
from kvlesson.lesson.quote import Figure
from kvlesson.memory.floor import ServerWontStart, memory_parts
from kvlesson.memory.specs import GPU, Model
from kvlesson.serving.chats import Chat
from kvlesson.serving.sweep import (
    CAPS,
    cap_for_wait,
    cap_sweep,
    knee,
    prefill_floor,
    prefill_seconds,
)

SMALL_SHARES = (50, 35)  # smaller pools that move the knee
WAIT_TARGETS_MS = (30, 50)  # wait targets that pick a cap


def chat_sizes(chats: list[Chat]) -> dict[str, Figure]:
    """The shortest, longest, total and mean prompt and reply of the lesson's chats."""
    out = {}
    for part, sizes in (("prompt", [c.prompt for c in chats]), ("reply", [c.reply for c in chats])):
        mean = sum(sizes) / len(chats)
        out[f"{part}_min"] = Figure(min(sizes), quote.count(min(sizes)), f"shortest {part}")
        out[f"{part}_max"] = Figure(max(sizes), quote.count(max(sizes)), f"longest {part}")
        out[f"{part}_total"] = Figure(sum(sizes), quote.count(sum(sizes)), f"{part} tokens in all")
        out[f"{part}_mean"] = Figure(mean, quote.count(mean), f"mean {part}")
    return out


def per_cap(sweep: pd.DataFrame) -> dict[str, Figure]:
    """Tokens/s, the wait and the pauses at every cap of the sweep, and its top row."""
    out = {}
    for row in sweep.itertuples():
        out[f"tps_{row.cap}"] = Figure(
            row.tokens_per_s, quote.count(row.tokens_per_s), f"tokens/s at cap {row.cap}"
        )
        out[f"wait_{row.cap}"] = Figure(
            row.wait_ms, quote.one(row.wait_ms) + " ms", f"wait between words at cap {row.cap}"
        )
        out[f"pauses_{row.cap}"] = Figure(
            row.pauses, quote.count(row.pauses), f"pauses at cap {row.cap}"
        )
    top = sweep.iloc[-1]
    out["rebuilt_top"] = Figure(
        int(top.rebuilt_tokens),
        quote.count(top.rebuilt_tokens),
        f"tokens of cache rebuilt at cap {int(top.cap)}",
    )
    out["running_top"] = Figure(
        top.avg_running,
        quote.one(top.avg_running),
        f"chats running on average at cap {int(top.cap)}",
    )
    return out


def where_it_stops_paying(sweep: pd.DataFrame) -> dict[str, Figure]:
    """The knee (the first cap whose doubling adds under 10%), what the doublings around it
    add, and the largest cap that keeps each wait target."""
    k = knee(sweep)
    out = {
        "stops_paying": Figure(
            k.cap if k else None,
            str(k.cap) if k else "every doubling pays",
            "first cap whose doubling adds under 10%",
        )
    }
    if k is not None:
        if k.least_gain is not None:
            out["min_gain_before"] = Figure(
                k.least_gain, quote.pct(k.least_gain), f"least gain of a doubling up to {k.cap}"
            )
        out["gain_after"] = Figure(k.gain, quote.pct(k.gain), f"gain from {k.cap} to {k.next_cap}")
        out["wait_ratio_after"] = Figure(
            k.wait_ratio, quote.one(k.wait_ratio, 2), f"wait grows x, {k.cap} to {k.next_cap}"
        )
    for target in WAIT_TARGETS_MS:
        cap = cap_for_wait(sweep, target)
        out[f"cap_for_{target}ms"] = Figure(
            cap, str(cap), f"largest cap with a wait within {target} ms"
        )
    return out


def reserving_at_the_top(chats: list[Chat], share: int, longest: int, **kw) -> dict[str, Figure]:
    """The top cap with the whole ceiling reserved for every chat, at the ceiling and at four
    times it (where the server still starts)."""
    out = {}
    for ceiling in (longest, 4 * longest):
        try:
            r = cap_sweep(chats, [CAPS[-1]], share, ceiling, reserved=True, **kw).iloc[0]
        except ServerWontStart:
            continue
        out[f"reserved_tps_{ceiling}"] = Figure(
            r.tokens_per_s,
            quote.count(r.tokens_per_s),
            f"tokens/s, {ceiling:,} reserved, cap {CAPS[-1]}",
        )
        out[f"reserved_running_{ceiling}"] = Figure(
            r.avg_running, quote.one(r.avg_running), f"running on average, {ceiling:,} reserved"
        )
        out[f"reserved_wait_{ceiling}"] = Figure(
            r.wait_ms, quote.one(r.wait_ms) + " ms", f"wait, {ceiling:,} reserved"
        )
    return out


def smaller_pools(chats: list[Chat], longest: int, **kw) -> dict[str, Figure]:
    """The upper caps again at the smaller shares, whose pool, not the cap, moves the knee."""
    out = {}
    for small in SMALL_SHARES:
        try:
            s = cap_sweep(chats, CAPS[5:], small, longest, **kw)
        except ServerWontStart:
            continue
        tokens = memory_parts(small, **kw).tokens
        out[f"tokens_{small}"] = Figure(tokens, quote.count(tokens), f"pool tokens at {small}%")
        for row in s.itertuples():
            out[f"tps_{small}_{row.cap}"] = Figure(
                row.tokens_per_s,
                quote.count(row.tokens_per_s),
                f"tokens/s at {small}%, cap {row.cap}",
            )
            out[f"pauses_{small}_{row.cap}"] = Figure(
                row.pauses, quote.count(row.pauses), f"pauses at {small}%, cap {row.cap}"
            )
    return out


def the_prefill_floor(chats: list[Chat], gpu: GPU, model: Model) -> dict[str, Figure]:
    """The arithmetic every prompt costs: a floor under the run's time that no cap lowers."""
    floor = prefill_floor(chats, gpu, model)
    mean_prompt = round(sum(c.prompt for c in chats) / len(chats))
    mean_s = prefill_seconds(mean_prompt, gpu, model)
    return {
        "prefill_s": Figure(floor.seconds, quote.one(floor.seconds) + " s", "prefill floor"),
        "prefill_us_per_token": Figure(
            floor.per_token_s,
            quote.one(floor.per_token_s * 1e6) + " us",
            "arithmetic per prompt token",
        ),
        "prefill_max_tps": Figure(
            floor.max_tokens_per_s, quote.count(floor.max_tokens_per_s), "tokens/s no cap can pass"
        ),
        "prefill_mean_prompt": Figure(
            mean_s, quote.ms(mean_s), f"arithmetic for a prompt of {mean_prompt:,}"
        ),
    }


def sweep_numbers(
    chats: list[Chat], share: int, longest: int, gpu: GPU, model: Model, reserve_bytes: float
) -> dict[str, Figure]:
    """The cap sweep, where it stops paying, reserving at cap 512, smaller pools, the prefill floor."""
    kw = dict(gpu=gpu, model=model, reserve_bytes=reserve_bytes)
    sweep = cap_sweep(chats, CAPS, share, longest, **kw)
    return {
        **chat_sizes(chats),
        **per_cap(sweep),
        **where_it_stops_paying(sweep),
        **reserving_at_the_top(chats, share, longest, **kw),
        **smaller_pools(chats, longest, **kw),
        **the_prefill_floor(chats, gpu, model),
    }
