"""Measured figures from one engineer's rig (seed 001), kept as data.

The rig serves a hybrid model on two RTX 3090s (24 GiB each) with tensor
parallel 2 at gpu_memory_utilization 0.90. Its pool sizes are measured in
vLLM's logs, not computed from a config: the model's config is not public,
and a hybrid model's pool also holds the state of its linear-attention layers,
which the per-token formula leaves out. So this module holds the logged
figures, and the functions derive only what follows from them by arithmetic.

Two things the per-token formula of a dense model does not tell about this rig:

* a hybrid model's request holds a fixed state for its linear-attention layers,
  whatever its length, in the same pool as the attention layers' cache; vLLM
  0.33 counts it in the concurrency it logs (`MambaSpec.max_memory_usage_bytes`,
  vllm/v1/kv_cache_interface.py:1135-1141, summed per request in
  vllm/v1/core/kv_cache_utils.py:1061-1094). So doubling the length does not halve
  the full-length requests: `LimitStep` finds the pool and the state that give
  both logged figures;
* nvidia-smi counts the card's whole 24,576 MiB, of which cudaMemGetInfo reports
  24,146 (23.58 GiB): vLLM's share is of the second, and the process holds a little
  more than its share, what it took before it measured the card (`IdleReading`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.memory.log_check import LogCheck, check_log
from kvlesson.memory.precision import k8v4_gain_over_fp8
from kvlesson.memory.specs import RTX_3090
from kvlesson.memory.vllm_log import VllmLog, read_vllm_log

RIG_GPU, RIG_SHARE, RIG_TP = RTX_3090, 90, 2  # two 3090s, --gpu-memory-utilization 0.90
# The start-up log of the rig's model at a 262,144-token limit, as the post quotes it.
RIG_LOG = """\
Model loading took 8.98 GiB memory and 146.2 s
Available KV cache memory: 10.37 GiB
GPU KV cache size: 652,346 tokens
Maximum concurrency for 262,144 tokens per request: 2.49x
"""
RIG_LAYERS, RIG_CACHE_LAYERS = 64, 16  # only 16 of the model's 64 layers keep a KV cache
IDLE_USED_MIB, CARD_MIB = 22_112, 24_576  # nvidia-smi on GPU 0 with nobody connected
# August: the same rig, an earlier checkpoint, only the context limit (and the
# scheduler's cap) changed between restarts. At 131,072 the log gave the
# concurrency; at 262,144 the pool and the concurrency.
AUGUST_SHORT = (131_072, 4.48)  # (max_model_len, logged "Maximum concurrency")
AUGUST_LONG = (262_144, 623_721)  # (max_model_len, logged "GPU KV cache size" in tokens)
K8V4_TOKENS = 817_968  # the 262,144 step again with --kv-cache-dtype turboquant_k8v4
FP8_BITS, K8V4_BITS = 8 + 8, 8 + 4  # bits per key + value number: fp8_e4m3, then k8v4
# LoRA on a dense model on the same two 3090s: per-GPU figures from the logs.
LORA_NONE = {"weights_gib": 10.67, "tokens": 91_387}  # no LoRA
LORA_EIGHT_SLOTS = {"max_loras": 8, "max_lora_rank": 128, "model_gib": 20.39, "kv_cache_gib": -0.48}
LORA_ONE_SLOT = {"max_loras": 1, "max_lora_rank": 8, "tokens": 89_979}


def rig_log() -> VllmLog:
    """The rig's start-up log, read by `read_vllm_log`."""
    return read_vllm_log(RIG_LOG)


def rig_check() -> LogCheck:
    """The rig's log held against its card and share (the model is not known: no prediction)."""
    return check_log(rig_log(), RIG_GPU, RIG_SHARE, tp=RIG_TP)


MIB = 2**20


@dataclass(frozen=True)
class IdleReading:
    """nvidia-smi's "memory used" at idle beside the budget vLLM claimed, all in MiB.

    The budget is the share of cudaMemGetInfo's total (`measured_mib`). The process
    also holds what it allocated before vLLM took its memory snapshot, outside the
    budget: the CUDA context, NCCL's buffers, cuBLAS's handles (vLLM 0.33 takes the
    snapshot after them, vllm/v1/worker/gpu_worker.py:500-543). nvidia-smi counts the
    whole card (`card_mib`), which is more than cudaMemGetInfo's total by
    `hidden_mib`. So 22,112 of 24,576 is 90.0% only by a coincidence of two bases.
    """

    used_mib: int
    card_mib: int
    measured_mib: float
    share: int

    @property
    def budget_mib(self) -> float:
        return self.share / 100 * self.measured_mib

    @property
    def outside_mib(self) -> float:
        """What the process holds beyond its budget: used - budget (the snapshot's baseline)."""
        return self.used_mib - self.budget_mib

    @property
    def hidden_mib(self) -> float:
        """What nvidia-smi counts in the card's total and cudaMemGetInfo does not."""
        return self.card_mib - self.measured_mib

    @property
    def of_card(self) -> float:
        """nvidia-smi's used over its own total: 0.900, a coincidence, not the share."""
        return self.used_mib / self.card_mib


def idle_reading() -> IdleReading:
    """GPU 0 of the rig at idle: 22,112 MiB used of 24,576, against a budget of 0.90 x 24,146."""
    return IdleReading(IDLE_USED_MIB, CARD_MIB, RIG_GPU.total_bytes / MIB, RIG_SHARE)


@dataclass(frozen=True)
class LimitStep:
    """Doubling the context limit: full-length requests the pool holds before and after.

    With an unchanged pool of P token-equivalents and a fixed state of S
    token-equivalents per request, the concurrency at a length L is P / (L + S):
    two logged figures give P and S (`pool_tokens`, `state_tokens`).
    """

    short_len: int
    short_concurrency: float
    long_len: int
    long_tokens: int

    @property
    def long_concurrency(self) -> float:
        return self.long_tokens / self.long_len

    @property
    def ratio(self) -> float:
        """After over before: 0.5 for a model whose every layer keeps a full cache, more for a
        hybrid one, whose fixed state per request does not double."""
        return self.long_concurrency / self.short_concurrency

    @property
    def state_tokens(self) -> float:
        """S, the fixed state a request holds, in tokens of cache, if the pool stayed put:
        P / (L1 + S) = c1 and P / (L2 + S) = c2 give S = (c2 L2 - c1 L1) / (c1 - c2)."""
        c1, c2 = self.short_concurrency, self.long_concurrency
        return (c2 * self.long_len - c1 * self.short_len) / (c1 - c2)

    @property
    def pool_tokens(self) -> float:
        """P, the unchanged pool, in tokens of cache: c1 x (L1 + S)."""
        return self.short_concurrency * (self.short_len + self.state_tokens)

    def concurrency_at(self, length: int) -> float:
        """Requests of `length` tokens the pool holds at once, each with its state."""
        return self.pool_tokens / (length + self.state_tokens)


def august_step() -> LimitStep:
    """131,072 to 262,144: 4.48 to 2.38 requests at full length."""
    return LimitStep(*AUGUST_SHORT, *AUGUST_LONG)


@dataclass(frozen=True)
class FormatStep:
    """A smaller cache format: the pool in tokens before and after, measured, by bit count,
    and by the new format's layout."""

    before: int
    after: int
    bits_before: int
    bits_after: int

    @property
    def gain(self) -> float:
        """Measured: 0.311 is 31.1% more tokens."""
        return self.after / self.before - 1

    @property
    def bits_gain(self) -> float:
        """What the bits alone predict (the pool staying put): fp8 to k8v4 is 33.3%."""
        return self.bits_before / self.bits_after - 1

    def layout_gain(self, head_size: int) -> float:
        """What k8v4's layout predicts against fp8 for a model that compresses every layer, as
        the rig's hybrid model does: +30.6% at head size 128, +32.0% at 256, the scale and
        zero costing the rest (a dense model keeps four layers in BF16: `k8v4_gain_over_fp8`)."""
        return k8v4_gain_over_fp8(1, head_size, hybrid=True)


def k8v4_step() -> FormatStep:
    """fp8_e4m3 to turboquant_k8v4 at the 262,144 step: 623,721 to 817,968 tokens."""
    return FormatStep(AUGUST_LONG[1], K8V4_TOKENS, FP8_BITS, K8V4_BITS)


@dataclass(frozen=True)
class LoraCost:
    """What LoRA slots reserved at start-up took from the pool, per GPU."""

    buffers_gib: float  # eight rank-128 slots: model memory with LoRA minus without
    eight_slots_cache_gib: float  # the cache left: below zero, so vLLM refused to start
    one_slot_tokens: int
    no_lora_tokens: int

    @property
    def starts_with_eight(self) -> bool:
        return self.eight_slots_cache_gib > 0

    @property
    def tokens_lost(self) -> int:
        return self.no_lora_tokens - self.one_slot_tokens


def lora_cost() -> LoraCost:
    """8 slots of rank 128 left -0.48 GiB (refused); 1 slot of rank 8 cost 1,408 tokens."""
    return LoraCost(
        LORA_EIGHT_SLOTS["model_gib"] - LORA_NONE["weights_gib"],
        LORA_EIGHT_SLOTS["kv_cache_gib"],
        LORA_ONE_SLOT["tokens"],
        LORA_NONE["tokens"],
    )


def rig_concurrency_at(length: int) -> float:
    """The rig's pool (RIG_LOG) at another length, with the August step's fixed state per
    request: fewer requests than tokens / length, which assumes no state."""
    log = rig_log()
    state = august_step().state_tokens
    return log.kv_tokens * (log.concurrency_len + state) / log.concurrency_len / (length + state)


def dense_bytes_per_token(check: LogCheck) -> float:
    """Bytes a token would take if every layer kept a cache, from the logged per-token bytes."""
    return check.bytes_per_token * RIG_LAYERS / RIG_CACHE_LAYERS
