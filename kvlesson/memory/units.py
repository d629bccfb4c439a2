"""Binary units, as vLLM's logs and nvidia-smi write them (GiB, KiB), beside the
lesson's decimal GB in `quote`: 50.8 GiB is 54.5 GB."""

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
