"""The memory floor: one GPU's memory split into four parts.

    allowed = share/100 x GPU memory        (what the server may use)
    pool    = allowed - weights - reserve   (the paged KV cache)
    blocks  = floor(pool / block bytes)     (0 when the pool is negative)
    unused  = GPU memory - allowed          (left for other programs)

A share moves room between the pool and the unused part; nothing adds memory.

With tensor parallel (`tp` GPUs), every figure is per GPU, as vLLM counts
it: each GPU holds weights / tp, its own reserve, and the cache of its share
of the KV heads, and the pool's tokens are what one GPU's blocks hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Real

from kvlesson.arguments import flag, of_type, positive, whole
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model, as_gib

BLOCK_TOKENS = 16  # tokens in one cache block: vLLM's default block size
RESERVE_BYTES = 2e9  # the working reserve: an invented figure, as in the lesson
TYPICAL_CHAT = 2_000  # tokens in a typical chat, the lesson's yardstick


def blocks_for(tokens: int) -> int:
    """Blocks that hold `tokens` tokens: ceil(tokens / 16)."""
    tokens = whole("tokens", tokens, 1)
    return -(-tokens // BLOCK_TOKENS)


@dataclass(frozen=True)
class MemoryParts:
    """The floor plan at one share. Bytes throughout; the parts add up to the GPU."""

    share: int
    gpu: GPU
    model: Model
    allowed_bytes: float
    weights_bytes: int
    reserve_bytes: float
    pool_bytes: float
    blocks: int
    block_bytes: int
    unused_bytes: float
    tp: int = 1

    @property
    def gpu_bytes(self) -> int:
        """The whole card, the sum of the four parts."""
        return self.gpu.memory_bytes

    @property
    def tokens(self) -> int:
        """Tokens of cache the pool holds: 16 per block."""
        return BLOCK_TOKENS * self.blocks

    def segments(self) -> list[tuple[float, float]]:
        """(start, width) in bytes of weights, reserve, pool and unused along the card. When
        weights and reserve pass the share, they keep their size, the pool is empty and the
        unused part starts after them."""
        needed = self.weights_bytes + self.reserve_bytes
        end = max(self.allowed_bytes, needed)
        return [
            (0, self.weights_bytes),
            (self.weights_bytes, self.reserve_bytes),
            (needed, max(self.pool_bytes, 0)),
            (end, max(self.gpu_bytes - end, 0)),
        ]


def memory_parts(
    share: int,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
    tp: int = 1,
) -> MemoryParts:
    """Split each GPU's memory at a whole-percent `share` (1..100), the model split over `tp` GPUs.

    >>> memory_parts(90).blocks
    25720
    """
    share = whole("share", share, 1, 100)
    of_type("gpu", gpu, GPU)
    of_type("model", model, Model)
    reserve = positive("reserve_bytes", reserve_bytes, zero_ok=True)
    block_bytes = BLOCK_TOKENS * model.cache_bytes_per_token(tp)
    weights = -(-model.weights_bytes // tp)  # each GPU's part, rounded up to a whole byte
    allowed, pool, blocks, unused = _split(share, gpu.memory_bytes, weights, reserve, block_bytes)
    return MemoryParts(
        share, gpu, model, allowed, weights, reserve, pool, blocks, block_bytes, unused, tp
    )


def _split(
    share: int, card: int, weights: int, reserve: float, block_bytes: int
) -> tuple[float, float, int, float]:
    """(allowed, pool, blocks, unused) of a `card` of that many bytes at `share` percent:
    exact arithmetic, so a pool that is a whole number of blocks is never rounded down one
    block by a float. In hundredths of a byte, whole numbers, where every size is a whole
    number of bytes (every card and model of the course); else fractions (a float's exact
    value). The same floats either way: each the nearest to the exact value (int / int is
    correctly rounded in Python, as a Fraction's float is)."""
    whole = type(card) is type(weights) is type(block_bytes) is int and reserve.is_integer()
    if whole:
        allowed = share * card
        pool = allowed - 100 * (weights + int(reserve))
        blocks = max(0, pool // (100 * block_bytes))
        return allowed / 100, pool / 100, blocks, (100 - share) * card / 100
    allowed = Fraction(share * card, 100)
    pool = allowed - weights - Fraction(reserve)
    blocks = max(0, int(pool // block_bytes))
    return float(allowed), float(pool), blocks, float(card - allowed)


def pool_tokens(
    pool_bytes: float, model: Model = LLAMA_31_8B, tp: int = 1, block_tokens: int = BLOCK_TOKENS
) -> int:
    """Tokens a pool of `pool_bytes` per GPU holds, in whole blocks, as vLLM counts them:
    blocks = bytes // (per-token bytes x block size), tokens = blocks x block size.
    `block_tokens=1` gives the count before rounding to blocks.

    A pool below zero (a server that will not start) holds no token.

    >>> pool_tokens(54.5e9), pool_tokens(54.5e9, block_tokens=1)
    (415792, 415802)
    """
    if isinstance(pool_bytes, Real) and not isinstance(pool_bytes, bool) and pool_bytes < 0:
        pool_bytes = 0
    pool = positive("pool_bytes", pool_bytes, zero_ok=True)
    of_type("model", model, Model)
    block_tokens = whole("block_tokens", block_tokens, 1)
    block_bytes = block_tokens * model.cache_bytes_per_token(tp)
    return int(Fraction(pool) // block_bytes) * block_tokens


def max_concurrency(tokens: int, longest: int) -> float:
    """Chats of the full `longest` length the pool holds at once: tokens / longest, the
    figure vLLM logs as "Maximum concurrency for L tokens per request: C x".

    >>> round(max_concurrency(416_103, 131_072), 2)
    3.17
    """
    tokens = whole("tokens", tokens, 0)
    longest = whole("longest", longest, 1)
    return tokens / longest


class ServerWontStart(ValueError):
    """The pool cannot hold one chat of the longest length, so the server refuses to start.

    Like vLLM's start-up error, the message says the cache one chat of the
    ceiling needs, the cache available, and what to change.
    """


@dataclass(frozen=True)
class Room:
    """How many chats fit at once at a share and a ceiling (`longest`).

    `typical` counts chats of 2,000 tokens (or of the ceiling, if lower): with
    blocks handed out as chats grow it is blocks // per_typical; with the full
    ceiling reserved per chat (`reserved`) it is `at_longest`.
    """

    parts: MemoryParts
    longest: int
    reserved: bool
    starts: bool
    typical: int
    at_longest: int
    per_typical: int
    per_longest: int


def room(
    share: int,
    longest: int,
    reserved: bool = False,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
    tp: int = 1,
) -> Room:
    """Chats that fit at once at `share` with a ceiling of `longest` tokens.

    >>> room(90, 8000).typical, room(90, 8000, reserved=True).typical
    (205, 51)
    """
    longest = whole("longest", longest, 1)
    reserved = flag("reserved", reserved)
    parts = memory_parts(share, gpu, model, reserve_bytes, tp)
    per_longest = blocks_for(longest)
    per_typical = blocks_for(min(TYPICAL_CHAT, longest))
    at_longest = parts.blocks // per_longest
    typical = at_longest if reserved else parts.blocks // per_typical
    return Room(
        parts, longest, reserved, at_longest >= 1, typical, at_longest, per_typical, per_longest
    )


def lowest_share(
    longest: int,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> int:
    """The lowest whole-percent share at which a server with ceiling `longest` starts.

    >>> lowest_share(128_000)
    44
    """
    longest = whole("longest", longest, 1)
    share = _first_share_with(blocks_for(longest), gpu, model, reserve_bytes)
    if share is None:
        raise ServerWontStart(
            _wont_start_message(memory_parts(100, gpu, model, reserve_bytes), longest)
        )
    return share


def first_share_with_blocks(
    gpu: GPU = A100_80GB, model: Model = LLAMA_31_8B, reserve_bytes: float = RESERVE_BYTES
) -> int | None:
    """The lowest share that leaves at least one block (None if even 100% leaves none)."""
    return _first_share_with(1, gpu, model, reserve_bytes)


def _first_share_with(
    blocks: int, gpu: GPU, model: Model, reserve_bytes: float, tp: int = 1
) -> int | None:
    """The lowest whole-percent share whose pool has `blocks` blocks or more (None: none has)."""
    for share in range(1, 101):
        if memory_parts(share, gpu, model, reserve_bytes, tp).blocks >= blocks:
            return share
    return None


@dataclass(frozen=True)
class Readings:
    """One card at one share under its two readings: "GB" as 10^9 bytes, and as GiB."""

    gb: Room
    gib: Room

    @property
    def card_larger(self) -> float:
        """How much larger the card is read as GiB: 0.074 is 7.4%."""
        return self.gib.parts.gpu_bytes / self.gb.parts.gpu_bytes - 1

    @property
    def pool_larger(self) -> float:
        """How much larger the pool is: more than the card, as weights and reserve stay put."""
        return self.gib.parts.pool_bytes / self.gb.parts.pool_bytes - 1


def readings(
    share: int,
    gpu: GPU = A100_80GB,
    model: Model = LLAMA_31_8B,
    reserve_bytes: float = RESERVE_BYTES,
) -> Readings:
    """The floor at `share` with the card read as GB and as GiB (chats of 2,000 that fit)."""
    kw = {"model": model, "reserve_bytes": reserve_bytes}
    return Readings(
        room(share, TYPICAL_CHAT, gpu=gpu, **kw), room(share, TYPICAL_CHAT, gpu=as_gib(gpu), **kw)
    )


def check_starts(parts: MemoryParts, longest: int) -> None:
    """Raise ServerWontStart unless the pool holds one chat of `longest` tokens."""
    if parts.blocks < blocks_for(longest):
        raise ServerWontStart(_wont_start_message(parts, longest))


def _wont_start_message(parts: MemoryParts, longest: int) -> str:
    need = blocks_for(longest)
    lowest = _first_share_with(need, parts.gpu, parts.model, parts.reserve_bytes, parts.tp)
    raise_to = (
        f"to at least {lowest}%"
        if lowest
        else f"no share of this GPU is enough for {parts.model.name}"
    )
    advice = f"Raise the memory share (gpu_memory_utilization; {raise_to})"
    if parts.blocks:  # a shorter longest chat would start: say how short
        advice += f" or lower the longest chat (max_model_len; at most {parts.tokens:,} tokens)"
    else:  # no chat of any length starts: a shorter one would not help (walk item 23)
        advice += ": at this share the weights and the reserve leave no block for any chat"
    return (
        f"the server will not start: to serve at least one chat of the longest length "
        f"({longest:,} tokens) the cache needs {need * parts.block_bytes / 1e9:.2f} GB "
        f"({need:,} blocks), but only {max(parts.pool_bytes, 0) / 1e9:.2f} GB "
        f"({parts.blocks:,} blocks) is available at a share of {parts.share}%. {advice}."
    )
