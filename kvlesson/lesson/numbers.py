"""Every number the lesson quotes, computed, section by section.

This is the course's single source of truth: `kvlesson numbers` prints it,
the tests pin it, and for another GPU or model it is the same code with other
specs.
"""

from __future__ import annotations

from kvlesson.arguments import whole
from kvlesson.lesson import quote
from kvlesson.lesson.quote import Figure
from kvlesson.lesson.real_server_numbers import real_server_numbers
from kvlesson.lesson.sweep_numbers import sweep_numbers
from kvlesson.memory.floor import (
    RESERVE_BYTES,
    TYPICAL_CHAT,
    ServerWontStart,
    blocks_for,
    first_share_with_blocks,
    lowest_share,
    memory_parts,
    readings,
    room,
)
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.serving.chats import Chat, as_chats, lesson_chats
from kvlesson.serving.settings import LESSON_LONGEST, LESSON_SHARE
from kvlesson.serving.trace import trace

TABLE_SHARES = (30, 50, 90, 98)  # the lesson's table of shares
CEILINGS = (4_000, 8_000, 16_000, 32_000, 64_000, 128_000)  # ceilings for the lowest share
RESERVED_CEILINGS = (4_000, 8_000, 32_000, 128_000)  # reserving vs blocks at 90%
LONG_CEILING = 128_000  # the ceiling that needs a 44% share
SHORT_SHARE, OK_SHARE = 40, 44  # a share that does not start at 128,000, and one that does
HAND_CASE = [Chat(30, 10), Chat(30, 10)]  # two chats of 30 prompt tokens and 10 reply tokens
HAND_BLOCKS, HAND_ROOM, HAND_CAP = 4, 100, 10  # a pool of 4 blocks, and one with room for both


def floor_numbers(share: int, gpu: GPU, model: Model, reserve_bytes: float) -> dict[str, Figure]:
    """The floor plan at `share`, the table of shares, and the GiB reading."""
    p = memory_parts(share, gpu, model, reserve_bytes)
    r = room(share, LESSON_LONGEST, gpu=gpu, model=model, reserve_bytes=reserve_bytes)
    out = {
        "gpu": Figure(p.gpu_bytes, quote.gb(p.gpu_bytes), f"memory of the {gpu.name}"),
        "weights": Figure(
            p.weights_bytes, quote.gb(p.weights_bytes, 2), f"weights of {model.name}"
        ),
        "reserve": Figure(p.reserve_bytes, quote.gb(p.reserve_bytes), "working reserve (invented)"),
        "allowed": Figure(
            p.allowed_bytes, quote.gb(p.allowed_bytes), f"allowed at a {share}% share"
        ),
        "pool": Figure(p.pool_bytes, quote.gb(p.pool_bytes), "cache pool"),
        "unused": Figure(p.unused_bytes, quote.gb(p.unused_bytes), "left unused"),
        "bytes_per_token": Figure(
            model.bytes_per_token, quote.count(model.bytes_per_token), "bytes of cache per token"
        ),
        "block_bytes": Figure(
            p.block_bytes, quote.count(p.block_bytes), "bytes per block of 16 tokens"
        ),
        "blocks": Figure(p.blocks, quote.count(p.blocks), "blocks in the pool"),
        "tokens": Figure(p.tokens, quote.count(p.tokens), "tokens the pool holds"),
        "per_typical": Figure(
            r.per_typical,
            quote.count(r.per_typical),
            f"blocks for a chat of {TYPICAL_CHAT:,} tokens",
        ),
        "typical": Figure(r.typical, quote.count(r.typical), f"chats of {TYPICAL_CHAT:,} that fit"),
    }
    for s in TABLE_SHARES:
        ps = room(s, LESSON_LONGEST, gpu=gpu, model=model, reserve_bytes=reserve_bytes)
        out[f"pool_{s}"] = Figure(
            ps.parts.pool_bytes, quote.gb(ps.parts.pool_bytes), f"pool at {s}%"
        )
        out[f"typical_{s}"] = Figure(
            ps.typical, quote.count(ps.typical), f"chats of {TYPICAL_CHAT:,} at {s}%"
        )
    first = first_share_with_blocks(gpu, model, reserve_bytes)
    out["first_share_with_blocks"] = Figure(
        first, f"{first}%" if first else "none", "lowest share that leaves a block"
    )
    if gpu.memory_bytes % 10**9 == 0 and p.pool_bytes > 0:  # a card quoted in GB, read as GiB
        two = readings(share, gpu, model, reserve_bytes)
        g = two.gib
        out["gib_pool"] = Figure(
            g.parts.pool_bytes, quote.gb(g.parts.pool_bytes), "pool, card read as GiB"
        )
        out["gib_blocks"] = Figure(
            g.parts.blocks, quote.count(g.parts.blocks), "blocks, card read as GiB"
        )
        out["gib_typical"] = Figure(g.typical, quote.count(g.typical), "chats, card read as GiB")
        out["gib_card_larger"] = Figure(
            two.card_larger, quote.pct(two.card_larger), "card larger, read as GiB"
        )
        out["gib_pool_larger"] = Figure(
            two.pool_larger, quote.pct(two.pool_larger), "pool larger, read as GiB"
        )
    return out


def ceiling_numbers(share: int, gpu: GPU, model: Model, reserve_bytes: float) -> dict[str, Figure]:
    """Blocks vs the full ceiling reserved; when the server starts; the lowest shares."""
    kw = dict(gpu=gpu, model=model, reserve_bytes=reserve_bytes)
    typical = room(share, LESSON_LONGEST, **kw).typical
    out = {
        "blocks_typical": Figure(
            typical, quote.count(typical), f"chats of {TYPICAL_CHAT:,}, blocks as chats grow"
        )
    }
    for longest in RESERVED_CEILINGS:
        r = room(share, longest, reserved=True, **kw)
        out[f"reserved_{longest}"] = Figure(
            r.typical, quote.count(r.typical), f"chats, {longest:,} reserved for each"
        )
    for s in (SHORT_SHARE, OK_SHARE):
        r = room(s, LONG_CEILING, **kw)
        out[f"pool_{s}"] = Figure(r.parts.pool_bytes, quote.gb(r.parts.pool_bytes), f"pool at {s}%")
        out[f"blocks_{s}"] = Figure(r.parts.blocks, quote.count(r.parts.blocks), f"blocks at {s}%")
        out[f"tokens_{s}"] = Figure(r.parts.tokens, quote.count(r.parts.tokens), f"tokens at {s}%")
        out[f"starts_{s}"] = Figure(
            r.starts,
            "starts" if r.starts else "does not start",
            f"server at {s}% with a {LONG_CEILING:,} ceiling",
        )
    out["long_needs"] = Figure(
        blocks_for(LONG_CEILING),
        quote.count(blocks_for(LONG_CEILING)),
        f"blocks for one chat of {LONG_CEILING:,}",
    )
    for longest in CEILINGS:
        try:
            s = lowest_share(longest, **kw)
            out[f"lowest_{longest}"] = Figure(
                s, f"{s}%", f"lowest share that starts, ceiling {longest:,}"
            )
        except ServerWontStart:
            out[f"lowest_{longest}"] = Figure(
                None, "never", f"lowest share that starts, ceiling {longest:,}"
            )
    return out


def preemption_numbers(gpu: GPU, model: Model) -> dict[str, Figure]:
    """The hand case: two chats in 4 blocks pause once and take 18 steps; 10 with room."""
    tight = trace(HAND_CASE, HAND_CAP, blocks=HAND_BLOCKS, longest=None, gpu=gpu, model=model)
    roomy = trace(HAND_CASE, HAND_CAP, blocks=HAND_ROOM, longest=None, gpu=gpu, model=model)
    pauses = sum(len(step.paused) for step in tight)
    first_pause = next(step.step for step in tight if step.paused)
    return {
        "hand_steps": Figure(len(tight), str(len(tight)), "steps, pool of 4 blocks"),
        "hand_pauses": Figure(pauses, str(pauses), "pauses, pool of 4 blocks"),
        "hand_first_pause": Figure(first_pause, str(first_pause), "step of the pause"),
        "hand_steps_room": Figure(len(roomy), str(len(roomy)), "steps with room for both"),
    }


def lesson_numbers(
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    share: int = LESSON_SHARE,
    longest: int = LESSON_LONGEST,
    reserve_bytes: float = RESERVE_BYTES,
    chats: list[Chat] | None = None,
) -> dict[str, dict[str, Figure]]:
    """Every quoted number, by section: floor, ceiling, sweep, preemption, and the real
    server of notebook 5 (its settings are the seeds' own, whatever `gpu` and `model` are)."""
    share = whole("share", share, 1, 100)
    longest = whole("longest", longest, 1)
    chats = lesson_chats() if chats is None else as_chats(chats)
    try:
        sweep = sweep_numbers(chats, share, longest, gpu, model, reserve_bytes)
    except ServerWontStart as error:
        sweep = {"starts": Figure(False, str(error), f"server at {share}%, ceiling {longest:,}")}
    return {
        "floor": floor_numbers(share, gpu, model, reserve_bytes),
        "ceiling": ceiling_numbers(share, gpu, model, reserve_bytes),
        "sweep": sweep,
        "preemption": preemption_numbers(gpu, model),
        "real_server": real_server_numbers(),
    }
