"""What notebook 3 says about the cap sweep, computed: where a doubling stops paying,
the wait's targets, the prefill floor, the pool that moves the knee, blocks against the
full ceiling reserved."""

from __future__ import annotations

import pandas as pd

from kvlesson.lesson import quote
from kvlesson.lesson.quote import Say
from kvlesson.memory.floor import RESERVE_BYTES, ServerWontStart
from kvlesson.memory.specs import GPU, Model
from kvlesson.memory.units import counted
from kvlesson.serving.chats import Chat
from kvlesson.serving.sweep import (
    PAYS,
    cap_for_wait,
    cap_sweep,
    knee,
    prefill_floor,
    prefill_seconds,
)


def knee_story(sweep: pd.DataFrame, pays: float = PAYS) -> Say:
    """Where a doubling of the cap stops paying, with the gains that say so."""
    k = knee(sweep, pays)
    if k is None:
        return Say(f"Every doubling in this sweep adds at least {quote.pct(pays, 0)} to tokens/s.")
    least = (
        f"Every doubling up to {k.cap} adds at least {quote.pct(k.least_gain)} to tokens/s. "
        if k.least_gain is not None
        else ""
    )
    return Say(
        f"{least}The step from {k.cap} to {k.next_cap} adds {quote.pct(k.gain)}, under the "
        f"{quote.pct(pays, 0)} that makes a doubling pay, while the wait between words grows "
        f"{k.wait_ratio:.2f} times, so `stops_paying` gives {k.cap}."
    )


def wait_targets(sweep: pd.DataFrame, targets_ms: tuple[float, ...] = (30, 50)) -> Say:
    """A target for the wait between words picks a cap too: the largest cap within it."""
    picks = [
        f"{cap} for {target:g} ms"
        if (cap := cap_for_wait(sweep, target)) is not None
        else f"none for {target:g} ms"
        for target in targets_ms
    ]
    return Say(f"A target for the wait picks a cap as well: {', '.join(picks)}.")


def prefill_story(chats: list[Chat], gpu: GPU, model: Model) -> Say:
    """The prefill floor: reading every prompt once takes time no cap can remove."""
    floor = prefill_floor(chats, gpu, model)
    mean = round(floor.prompt_tokens / len(chats))
    return Say(
        f"Reading the {quote.count(floor.prompt_tokens)} prompt tokens takes at least "
        f"{floor.seconds:.1f} s of arithmetic, {floor.per_token_s * 1e6:.1f} us a token, so no cap "
        f"can write the {quote.count(floor.reply_tokens)} reply tokens faster than "
        f"{quote.count(floor.max_tokens_per_s)} tokens/s. A prompt of the mean {mean:,} tokens "
        f"alone takes {quote.ms(prefill_seconds(mean, gpu, model))} of arithmetic: a step that "
        f"reads it is long for every chat in it."
    )


def pool_story(sweep: pd.DataFrame, share: int, tokens: int, pays: float = PAYS) -> Say:
    """One share's sweep in a sentence: tokens/s and pauses at each cap from 32, the cap with
    the most tokens/s, and where the 10% rule stops (they differ when a doubling still adds
    a little)."""
    parts = [
        f"cap {int(r.cap)}: {quote.count(r.tokens_per_s)} tokens/s, "
        f"{counted(int(r.pauses), 'pause')}"
        for r in sweep.itertuples()
        if r.cap >= 32
    ]
    best = int(sweep.loc[sweep["tokens_per_s"].idxmax(), "cap"])
    k = knee(sweep, pays)
    if k is None or k.cap == best:
        rule = (
            "" if k is None else f", which is also where doubling stops paying {quote.pct(pays, 0)}"
        )
    else:
        rule = (
            f"; the {quote.pct(pays, 0)} rule stops at {k.cap}, as the step to {k.next_cap} "
            f"adds {quote.pct(k.gain)} and makes the wait {k.wait_ratio:.2f} times longer"
            if k.cap < best
            else f"; the {quote.pct(pays, 0)} rule stops at {k.cap}"
        )
    return Say(
        f"At {share}% ({quote.count(tokens)} tokens of pool): {'; '.join(parts)}. "
        f"The most tokens/s come at cap {best}{rule}."
    )


def reserved_story(
    chats: list[Chat],
    share: int,
    longest: int,
    cap: int,
    gpu: GPU,
    model: Model,
    reserve_bytes: float = RESERVE_BYTES,
) -> Say:
    """Blocks against the full ceiling reserved, at a cap high enough not to bind."""
    kw = {"gpu": gpu, "model": model, "reserve_bytes": reserve_bytes}
    try:
        grow = cap_sweep(chats, [cap], share, longest, **kw).iloc[0]
    except ServerWontStart as error:
        return Say(str(error))
    held = []
    for ceiling in (longest, 4 * longest):
        try:
            r = cap_sweep(chats, [cap], share, ceiling, reserved=True, **kw).iloc[0]
        except ServerWontStart:
            held.append(f"with {ceiling:,} held for each, the server does not start")
            continue
        held.append(
            f"with {ceiling:,} held for each, {quote.count(r.tokens_per_s)} tokens/s, "
            f"{quote.one(r.avg_running)} running and a wait of {quote.one(r.wait_ms)} ms"
        )
    return Say(
        f"At cap {cap} and a ceiling of {longest:,}, blocks give {quote.count(grow.tokens_per_s)} "
        f"tokens/s with on average {quote.average(grow.avg_running, 'chats')} running and a wait of "
        f"{quote.one(grow.wait_ms)} ms. Reserving gives less: " + "; ".join(held) + "."
    )
