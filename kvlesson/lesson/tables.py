"""The lesson's tables as pandas DataFrames, with units in the column names.

Each is a `Table`: a DataFrame in every way, shown in a notebook (and on the course's
website) as an HTML table with a caption that says what it holds, a header cell for every
column and none empty (pandas' own HTML leaves the corner above the index empty).
"""

from __future__ import annotations

import html
from typing import Sequence

import pandas as pd

from kvlesson.lesson.numbers import CEILINGS, RESERVED_CEILINGS, TABLE_SHARES
from kvlesson.lesson.pause_sentences import chat_name
from kvlesson.memory.floor import (
    RESERVE_BYTES,
    TYPICAL_CHAT,
    ServerWontStart,
    lowest_share,
    room,
)
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.serving.results import Step
from kvlesson.serving.settings import LESSON_LONGEST


class Table(pd.DataFrame):
    """A DataFrame with a caption (`attrs["caption"]`), shown as an accessible HTML table:
    the caption, the index as a named first column (none when it only numbers the rows)."""

    @property
    def _constructor(self):
        return Table

    def _repr_html_(self) -> str:
        return table_html(self, self.attrs.get("caption", ""))


def table_html(frame: pd.DataFrame, caption: str) -> str:
    """`frame` as an HTML table with `caption` and no empty header cell."""
    named = any(name is not None for name in frame.index.names)
    shown = pd.DataFrame(frame.reset_index() if named else frame)
    body = shown.to_html(index=False, border=0, classes="kvlesson-table", na_rep="")
    body = body.replace("<th>", '<th scope="col">')
    opening = body.index(">") + 1  # after <table ...>
    return f"{body[:opening]}\n  <caption>{html.escape(caption)}</caption>{body[opening:]}"


def captioned(frame: pd.DataFrame, caption: str) -> Table:
    """`frame` as a Table with `caption`."""
    table = Table(frame)
    table.attrs["caption"] = caption
    return table


def share_table(
    shares: Sequence[int] = TABLE_SHARES,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> pd.DataFrame:
    """The floor plan at several shares: one row per share."""
    rows = []
    for share in shares:
        r = room(share, LESSON_LONGEST, gpu=gpu, model=model, reserve_bytes=reserve_bytes)
        p = r.parts
        rows.append(
            {
                "share (%)": share,
                "allowed (GB)": round(p.allowed_bytes / 1e9, 1),
                "pool (GB)": round(p.pool_bytes / 1e9, 1),
                "blocks": p.blocks,
                "tokens": p.tokens,
                f"chats of {TYPICAL_CHAT:,}": r.typical,
                "unused (GB)": round(p.unused_bytes / 1e9, 1),
            }
        )
    return captioned(
        pd.DataFrame(rows),
        f"The floor plan of one {gpu.name} with {model.name} at "
        f"several shares, the longest chat {LESSON_LONGEST:,} tokens",
    )


def ceiling_table(
    share: int,
    ceilings: Sequence[int] = RESERVED_CEILINGS,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> pd.DataFrame:
    """Chats of 2,000 tokens at once, per ceiling: reserved for each vs blocks as they grow."""
    kw = dict(gpu=gpu, model=model, reserve_bytes=reserve_bytes)
    rows = []
    for longest in ceilings:
        blocks = room(share, longest, **kw)
        rows.append(
            {
                "longest chat (tokens)": longest,
                "reserved for each": room(share, longest, reserved=True, **kw).typical,
                "blocks as chats grow": blocks.typical,
                "server starts": blocks.starts,
            }
        )
    return captioned(
        pd.DataFrame(rows),
        f"Chats of {TYPICAL_CHAT:,} tokens at once at a {share}% "
        f"share, per longest chat: the ceiling reserved for each, or blocks handed "
        f"out as chats grow",
    )


def lowest_share_table(
    ceilings: Sequence[int] = CEILINGS,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> pd.DataFrame:
    """The lowest whole-percent share at which the server starts, per ceiling (None: never)."""
    rows = []
    for longest in ceilings:
        try:
            share = lowest_share(longest, gpu, model, reserve_bytes)
        except ServerWontStart:
            share = None
        rows.append({"longest chat (tokens)": longest, "lowest share that starts (%)": share})
    return captioned(
        pd.DataFrame(rows),
        f"The lowest whole-percent share at which the server "
        f"starts, per longest chat ({gpu.name}, {model.name}; empty: never)",
    )


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
    return captioned(
        pd.DataFrame(
            {
                "cap": sweep["cap"],
                "tokens/s": sweep["tokens_per_s"].round().astype(int),
                "wait (ms)": sweep["wait_ms"].round(1),
                "tokens/s gain vs cap before (%)": against_cap_before(100 * sweep["gain"], 1),
                "wait vs cap before (times)": against_cap_before(sweep["wait_ratio"], 2),
                "pauses": sweep["pauses"],
                "rebuilt tokens": sweep["rebuilt_tokens"],
                "running on average": sweep["avg_running"].round(1),
            }
        ).set_index("cap"),
        f"The cap sweep: {len(sweep)} caps from {sweep['cap'].iloc[0]} to "
        f"{sweep['cap'].iloc[-1]}, each row against the cap before it",
    )


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
    return captioned(
        pd.DataFrame(rows).set_index("step"),
        f"The trace, step by step: blocks each of {len(chats)} chats holds, free "
        f"blocks, and who joined, was paused or finished",
    )
