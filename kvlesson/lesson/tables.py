"""The lesson's tables as pandas DataFrames, with units in the column names."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from kvlesson.lesson.numbers import CEILINGS, RESERVED_CEILINGS, TABLE_SHARES
from kvlesson.lesson.sentences import chat_name
from kvlesson.memory.floor import (
    RESERVE_BYTES,
    TYPICAL_CHAT,
    ServerWontStart,
    lowest_share,
    room,
)
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.serving.server import LESSON_LONGEST, Step


def share_table(shares: Sequence[int] = TABLE_SHARES, gpu: GPU = A100_80GB,
                model: Model = LLAMA_31_8B, reserve_bytes: float = RESERVE_BYTES) -> pd.DataFrame:
    """The floor plan at several shares: one row per share."""
    rows = []
    for share in shares:
        r = room(share, LESSON_LONGEST, gpu=gpu, model=model, reserve_bytes=reserve_bytes)
        p = r.parts
        rows.append({"share (%)": share, "allowed (GB)": round(p.allowed_bytes / 1e9, 1),
                     "pool (GB)": round(p.pool_bytes / 1e9, 1), "blocks": p.blocks,
                     "tokens": p.tokens, f"chats of {TYPICAL_CHAT:,}": r.typical,
                     "unused (GB)": round(p.unused_bytes / 1e9, 1)})
    return pd.DataFrame(rows)


def ceiling_table(share: int, ceilings: Sequence[int] = RESERVED_CEILINGS,
                  gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B,
                  reserve_bytes: float = RESERVE_BYTES) -> pd.DataFrame:
    """Chats of 2,000 tokens at once, per ceiling: reserved for each vs blocks as they grow."""
    kw = dict(gpu=gpu, model=model, reserve_bytes=reserve_bytes)
    rows = []
    for longest in ceilings:
        blocks = room(share, longest, **kw)
        rows.append({"longest chat (tokens)": longest,
                     "reserved for each": room(share, longest, reserved=True, **kw).typical,
                     "blocks as chats grow": blocks.typical, "server starts": blocks.starts})
    return pd.DataFrame(rows)


def lowest_share_table(ceilings: Sequence[int] = CEILINGS,
                       gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B,
                       reserve_bytes: float = RESERVE_BYTES) -> pd.DataFrame:
    """The lowest whole-percent share at which the server starts, per ceiling (None: never)."""
    rows = []
    for longest in ceilings:
        try:
            share = lowest_share(longest, gpu, model, reserve_bytes)
        except ServerWontStart:
            share = None
        rows.append({"longest chat (tokens)": longest, "lowest share that starts (%)": share})
    return pd.DataFrame(rows)


def against_cap_before(values: pd.Series, places: int) -> pd.Series:
    """A change from the cap before as text with `places` decimals; empty on the first row,
    which has no cap before it."""
    return values.map(lambda x: "" if pd.isna(x) else f"{x:.{places}f}")


def sweep_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """A cap sweep rounded the way the lesson quotes it, one row per cap (the index).

    Two columns compare a row with the one before (the cap halved, in the
    lesson's sweep): what the doubling added to tokens/s in percent, and how
    many times longer it made the wait between words.
    """
    return pd.DataFrame({
        "cap": sweep["cap"],
        "tokens/s": sweep["tokens_per_s"].round().astype(int),
        "wait (ms)": sweep["wait_ms"].round(1),
        "tokens/s gain vs cap before (%)": against_cap_before(100 * sweep["gain"], 1),
        "wait vs cap before (times)": against_cap_before(sweep["wait_ratio"], 2),
        "pauses": sweep["pauses"],
        "rebuilt tokens": sweep["rebuilt_tokens"],
        "running on average": sweep["avg_running"].round(1),
    }).set_index("cap")


def trace_table(steps: Sequence[Step]) -> pd.DataFrame:
    """A trace step by step: blocks each chat holds, free blocks, who joined, paused, finished.

    The step number (from 1) is the index, so no other row number is shown.
    """
    chats = sorted({chat for step in steps for chat in step.held})
    rows = []
    for step in steps:
        row = {"step": step.step}
        for chat in chats:
            row[f"{chat_name(chat)} blocks"] = step.held.get(chat, 0)
        row["free"] = step.free
        for event in ("joined", "paused", "finished"):
            row[event] = " ".join(chat_name(c) for c in getattr(step, event))
        row["clock (ms)"] = round(step.clock * 1000, 1)
        rows.append(row)
    return pd.DataFrame(rows).set_index("step")
