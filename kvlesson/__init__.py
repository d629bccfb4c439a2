"""kvlesson: what do an LLM server's settings change?

The lesson's model as a small package: GPUs and models as data, the memory
floor, the block pool, the seeded chats, the server step by step, and the
cap sweep. The notebooks call these; `kvlesson numbers` prints every number
the lesson quotes.

The names below are loaded when first used (`kv.memory_parts` imports kvlesson.memory.floor
then): a process that needs one wing only, such as the grading box's launcher or an nbgrader
command reading the course's configuration, does not pay for the others (pandas, for the
server's latencies, alone takes most of a second to import).
"""

from __future__ import annotations

import importlib

# Where each name of the package's surface lives, by the module that defines it.
_HOMES = {
    "kvlesson.memory.floor": (
        "BLOCK_TOKENS",
        "RESERVE_BYTES",
        "TYPICAL_CHAT",
        "MemoryParts",
        "Room",
        "ServerWontStart",
        "blocks_for",
        "check_starts",
        "first_share_with_blocks",
        "lowest_share",
        "max_concurrency",
        "memory_parts",
        "pool_tokens",
        "room",
    ),
    "kvlesson.memory.specs": (
        "A100_40GB",
        "A100_80GB",
        "A100_80GIB",
        "GPU",
        "H100_80GB",
        "LLAMA_31_8B",
        "LLAMA_33_70B",
        "QWEN25_7B",
        "RTX_3090",
        "Model",
        "as_gib",
        "gpu",
        "model",
    ),
    "kvlesson.memory.startup": (
        "Startup",
        "startup",
    ),
    "kvlesson.memory.log_check": (
        "LogCheck",
        "check_log",
    ),
    "kvlesson.memory.vllm_log": (
        "VllmLog",
        "read_vllm_log",
    ),
    "kvlesson.serving.arrivals": (
        "Request",
        "agents",
        "burst_arrivals",
        "office_day",
        "poisson_arrivals",
    ),
    "kvlesson.serving.chats": (
        "Chat",
        "lesson_chats",
    ),
    "kvlesson.serving.fast_engine": ("serve_fast",),
    "kvlesson.serving.latency": (
        "Latency",
        "Spread",
        "chat_times",
        "latency",
        "percentile",
        "queue_frame",
    ),
    "kvlesson.serving.server": (
        "ServeResult",
        "Step",
        "serve",
    ),
    "kvlesson.serving.sweep": (
        "CAPS",
        "cap_sweep",
        "knee",
        "prefill_floor",
        "prefill_seconds",
        "stops_paying",
    ),
    "kvlesson.serving.trace": ("trace",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}
_WINGS = ("memory", "serving", "lesson", "grading")

# The package's surface: every name above, for `from kvlesson import *` and `dir(kv)`.
__all__ = [name for names in _HOMES.values() for name in names]


def __getattr__(name: str):
    """A name of the package's surface (or one of its wings), imported on first use."""
    if name in _HOME_OF:
        value = getattr(importlib.import_module(_HOME_OF[name]), name)
    elif name in _WINGS:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
