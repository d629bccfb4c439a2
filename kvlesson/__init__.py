"""kvlesson: what do an LLM server's settings change?

The lesson's model as a small package: GPUs and models as data, the memory
floor, the block pool, the seeded chats, the server step by step, and the
cap sweep. The notebooks call these; `kvlesson numbers` prints every number
the lesson quotes.
"""

from kvlesson.memory.floor import (
    BLOCK_TOKENS,
    RESERVE_BYTES,
    TYPICAL_CHAT,
    MemoryParts,
    Room,
    ServerWontStart,
    blocks_for,
    check_starts,
    first_share_with_blocks,
    lowest_share,
    max_concurrency,
    memory_parts,
    pool_tokens,
    room,
)
from kvlesson.memory.specs import (
    A100_40GB,
    A100_80GB,
    A100_80GIB,
    GPU,
    H100_80GB,
    LLAMA_31_8B,
    LLAMA_33_70B,
    QWEN25_7B,
    RTX_3090,
    Model,
    as_gib,
    gpu,
    model,
)
from kvlesson.memory.startup import Startup, startup
from kvlesson.memory.vllm_log import LogCheck, VllmLog, check_log, read_vllm_log
from kvlesson.serving.arrivals import (
    Request,
    agents,
    burst_arrivals,
    office_day,
    poisson_arrivals,
)
from kvlesson.serving.chats import Chat, lesson_chats
from kvlesson.serving.fast_engine import serve_fast
from kvlesson.serving.latency import (
    Latency,
    Spread,
    chat_times,
    latency,
    percentile,
    queue_frame,
)
from kvlesson.serving.server import ServeResult, Step, serve
from kvlesson.serving.sweep import (
    CAPS,
    cap_sweep,
    knee,
    prefill_floor,
    prefill_seconds,
    stops_paying,
)
from kvlesson.serving.trace import trace

__all__ = [
    "Latency",
    "Request",
    "Spread",
    "agents",
    "burst_arrivals",
    "chat_times",
    "latency",
    "office_day",
    "percentile",
    "poisson_arrivals",
    "queue_frame",
    "A100_40GB",
    "A100_80GB",
    "A100_80GIB",
    "BLOCK_TOKENS",
    "CAPS",
    "Chat",
    "GPU",
    "H100_80GB",
    "LLAMA_31_8B",
    "LLAMA_33_70B",
    "MemoryParts",
    "Model",
    "QWEN25_7B",
    "RESERVE_BYTES",
    "Room",
    "ServeResult",
    "ServerWontStart",
    "Step",
    "TYPICAL_CHAT",
    "as_gib",
    "blocks_for",
    "cap_sweep",
    "check_starts",
    "first_share_with_blocks",
    "gpu",
    "knee",
    "lesson_chats",
    "lowest_share",
    "memory_parts",
    "model",
    "prefill_floor",
    "prefill_seconds",
    "room",
    "serve",
    "serve_fast",
    "stops_paying",
    "trace",
    # notebook 5: a real server's start-up
    "LogCheck",
    "RTX_3090",
    "Startup",
    "VllmLog",
    "check_log",
    "max_concurrency",
    "pool_tokens",
    "read_vllm_log",
    "startup",
]
