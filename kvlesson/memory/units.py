"""Binary units, as vLLM's logs and nvidia-smi write them (GiB, KiB), beside the
lesson's decimal GB in `quote`: 50.8 GiB is 54.5 GB; and a count with its noun,
singular or plural as the count asks ("1 chat", "2 chats")."""

from __future__ import annotations

from kvlesson.memory.specs import GIB

KIB = 2**10  # one kibibyte: vLLM's block and per-token sizes are often quoted in KiB


def gib(nbytes: float, places: int = 2) -> str:
    """Bytes as GiB, two decimals as vLLM logs them: gib(2**34, 0) == '16 GiB'."""
    return f"{nbytes / GIB:,.{places}f} GiB"


def kib(nbytes: float, places: int = 0) -> str:
    """Bytes as KiB: kib(131_072) == '128 KiB'."""
    return f"{nbytes / KIB:,.{places}f} KiB"


def format_gib(nbytes: float) -> str:
    """GiB as vLLM writes them since 0.15 (vllm/utils/mem_utils.py, format_gib): rounded to
    two places, no trailing zeros kept: format_gib(20 * 2**30) == '20.0'."""
    return f"{round(nbytes / GIB, 2)}"


def counted(n: float, noun: str, plural: str | None = None) -> str:
    """A count and its noun, as a sentence writes them: counted(1, "chat") == '1 chat',
    counted(0, "chat") == '0 chats', counted(1_218, "pause") == '1,218 pauses',
    counted(0.5, "chat") == '0.5 chats'. `plural` for a noun that does not just add an s."""
    text = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
    return f"{text} {noun if n == 1 else plural or noun + 's'}"
