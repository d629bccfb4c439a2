"""The cap sweep: the same chats served at caps 1, 2, 4, ..., 512.

Raising the cap (vLLM's max_num_seqs) lets more chats share each trip through
the weights, so tokens/s rises; every chat's cache is read every step, so the
wait between words rises too. The sweep shows where a doubling stops paying,
and the prefill floor shows why it must: every prompt is read once anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import pandas as pd

from kvlesson.arguments import of_type, positive, whole
from kvlesson.memory.floor import RESERVE_BYTES
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.serving.chats import Chat, as_chats
from kvlesson.serving.fast_engine import serve_fast
from kvlesson.serving.server import serve
from kvlesson.serving.settings import LESSON_LONGEST

CAPS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the lesson's caps
PAYS = 0.10  # a doubling "pays" if it adds at least 10% to tokens/s (a choice)

COLUMNS = [
    "cap",
    "tokens_per_s",
    "wait_ms",
    "gain",
    "wait_ratio",
    "pauses",
    "rebuilt_tokens",
    "avg_running",
    "steps",
    "seconds",
    "refused",
]


# The server behind a sweep: the fast engine for sliders, or the step-by-step reference.
ENGINES = {"fast": serve_fast, "reference": serve}


def pick_engine(name: str):
    """The server called `name` in ENGINES."""
    if name not in ENGINES:
        raise ValueError(f"engine must be 'fast' or 'reference', got {name!r}")
    return ENGINES[name]


def cap_sweep(
    chats: Iterable[Chat],
    caps: Sequence[int] = CAPS,
    share: int | None = None,
    longest: int | None = LESSON_LONGEST,
    reserved: bool = False,
    *,
    blocks: int | None = None,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
    engine: str = "fast",
) -> pd.DataFrame:
    """Serve the same chats at every cap; one row per cap.

    `gain` is what the step from the previous cap added to tokens/s (0.082 is
    8.2%), `wait_ratio` how many times longer the wait got; both are NaN on
    the first row.
    """
    chats = as_chats(chats)
    if isinstance(caps, (str, bytes)) or not isinstance(caps, Sequence) or not caps:
        raise TypeError(f"caps must be a non-empty list of whole numbers (1 or more), got {caps!r}")
    caps = [whole("cap", cap, 1) for cap in caps]
    if any(b <= a for a, b in zip(caps, caps[1:])):
        raise ValueError(f"caps must rise, got {caps}")
    run = pick_engine(engine)
    rows = []
    for cap in caps:
        result = run(
            chats,
            cap,
            share,
            longest,
            reserved,
            blocks=blocks,
            gpu=gpu,
            model=model,
            reserve_bytes=reserve_bytes,
        )
        rows.append(
            {
                "cap": cap,
                "tokens_per_s": result.tokens_per_s,
                "wait_ms": result.wait_ms,
                "pauses": result.pauses,
                "rebuilt_tokens": result.rebuilt_tokens,
                "avg_running": result.avg_running,
                "steps": result.steps,
                "seconds": result.seconds,
                "refused": result.refused,
            }
        )
    sweep = pd.DataFrame(rows)
    sweep["gain"] = sweep["tokens_per_s"] / sweep["tokens_per_s"].shift() - 1
    sweep["wait_ratio"] = sweep["wait_ms"] / sweep["wait_ms"].shift()
    return sweep[COLUMNS]


def stops_paying(sweep: pd.DataFrame, pays: float = PAYS) -> int | None:
    """The first cap whose next step in the sweep adds under `pays` (10%) to tokens/s.

    None if every step pays. On the lesson's sweep: 64 (64 -> 128 adds 8.2%).
    """
    of_type("sweep", sweep, pd.DataFrame)
    pays = positive("pays", pays)
    missing = {"cap", "tokens_per_s"} - set(sweep.columns)
    if missing:
        raise ValueError(
            f"sweep must have the columns cap and tokens_per_s (from cap_sweep); "
            f"missing {', '.join(sorted(missing))}"
        )
    if len(sweep) < 2:
        raise ValueError(f"sweep must have at least 2 rows to compare caps, got {len(sweep)}")
    caps = list(sweep["cap"])
    rates = list(sweep["tokens_per_s"])
    for cap, rate, next_rate in zip(caps, rates, rates[1:]):
        if next_rate / rate - 1 < pays:
            return int(cap)
    return None


@dataclass(frozen=True)
class Knee:
    """Where a sweep stops paying, and the numbers that say so.

    `least_gain` is the smallest gain of a step up to the knee (None if the
    knee is the first cap); `gain` and `wait_ratio` are those of the step
    from the knee to the next cap.
    """

    cap: int
    next_cap: int
    least_gain: float | None
    gain: float
    wait_ratio: float


def knee(sweep: pd.DataFrame, pays: float = PAYS) -> Knee | None:
    """The knee of a sweep (see `stops_paying`), None if every step pays."""
    cap = stops_paying(sweep, pays)
    if cap is None:
        return None
    before = sweep[sweep["cap"] <= cap]["gain"].dropna()
    after = sweep[sweep["cap"] > cap].iloc[0]
    return Knee(
        cap,
        int(after["cap"]),
        float(before.min()) if len(before) else None,
        float(after["gain"]),
        float(after["wait_ratio"]),
    )


def cap_for_wait(sweep: pd.DataFrame, target_ms: float) -> int | None:
    """The largest cap whose wait between words stays within `target_ms` (None if none does)."""
    target_ms = positive("target_ms", target_ms)
    within = sweep[sweep["wait_ms"] <= target_ms]
    return int(within["cap"].max()) if len(within) else None


@dataclass(frozen=True)
class PrefillFloor:
    """The least time the arithmetic of reading every prompt once can take."""

    prompt_tokens: int
    reply_tokens: int
    seconds: float
    per_token_s: float

    @property
    def max_tokens_per_s(self) -> float:
        """No cap can write the replies faster than this: reply tokens / floor."""
        return self.reply_tokens / self.seconds


def prefill_seconds(tokens: int, gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B) -> float:
    """Seconds of arithmetic to read a prompt of `tokens` tokens: 2 x params per token."""
    tokens = whole("tokens", tokens, 1)
    of_type("gpu", gpu, GPU)
    of_type("model", model, Model)
    return tokens * 2 * model.params / gpu.peak_flops


def prefill_floor(
    chats: Iterable[Chat], gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B
) -> PrefillFloor:
    """The prefill floor of a set of chats: all prompts read once, at the GPU's peak."""
    chats = as_chats(chats)
    of_type("gpu", gpu, GPU)
    of_type("model", model, Model)
    prompts = sum(chat.prompt for chat in chats)
    return PrefillFloor(
        prompts,
        sum(chat.reply for chat in chats),
        prefill_seconds(prompts, gpu, model),
        prefill_seconds(1, gpu, model),
    )
