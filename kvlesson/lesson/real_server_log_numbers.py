"""Notebook 5's numbers for section 4: one engineer's start-up log on two RTX 3090s.

The rig's figures are measured, kept as data in `rig_measurements` (seed 001): nvidia-smi at
idle beside the budget vLLM claimed, the start-up log held against the card as vLLM measures
it, and the August step, where doubling the limit did not halve the full-length requests of
a hybrid model.
"""

from __future__ import annotations

from kvlesson.lesson import quote
from kvlesson.lesson.quote import Figure, figures
from kvlesson.lesson.real_server_launches import FULL_LENGTH
from kvlesson.memory import rig_measurements as rig
from kvlesson.memory.specs import GIB
from kvlesson.memory.units import gib, kib


def idle_numbers() -> dict[str, Figure]:
    """nvidia-smi's "memory used" at idle on GPU 0, against the budget of 0.90 x its total."""
    idle = rig.idle_reading()
    return figures(
        (
            "idle_used",
            rig.IDLE_USED_MIB,
            f"{rig.IDLE_USED_MIB:,} MiB of {rig.CARD_MIB:,} MiB",
            "nvidia-smi at idle, memory used on GPU 0",
        ),
        (
            "idle_of_card",
            idle.of_card,
            quote.pct(idle.of_card),
            "the same over nvidia-smi's total (a coincidence, not the share)",
        ),
        (
            "idle_measured",
            idle.measured_mib,
            f"{idle.measured_mib:,.0f} MiB",
            "the 3090's total as cudaMemGetInfo reports it (23.58 GiB)",
        ),
        (
            "idle_budget",
            idle.budget_mib,
            f"{idle.budget_mib:,.0f} MiB",
            "the budget: 0.90 of that total",
        ),
        (
            "idle_outside",
            idle.outside_mib,
            f"{idle.outside_mib:,.0f} MiB",
            "held beyond the budget: taken before vLLM's snapshot",
        ),
        (
            "idle_hidden",
            idle.hidden_mib,
            f"{idle.hidden_mib:,.0f} MiB",
            "in nvidia-smi's total and not in cudaMemGetInfo's",
        ),
    )


def rig_log_numbers() -> dict[str, Figure]:
    """The rig's start-up log held against its two RTX 3090s at 0.90."""
    check = rig.rig_check()
    log = check.log
    dense = rig.dense_bytes_per_token(check)
    agrees = "agrees" if check.concurrency_agree else "disagrees"
    at_full = log.concurrency_at(FULL_LENGTH)
    return figures(
        ("log_weights", log.weights_gib, f"{log.weights_gib:.2f} GiB", "log: weights per GPU"),
        ("log_cache", log.kv_cache_gib, f"{log.kv_cache_gib:.2f} GiB", "log: KV cache per GPU"),
        ("log_tokens", log.kv_tokens, quote.count(log.kv_tokens), "log: pool in tokens"),
        (
            "log_concurrency",
            log.max_concurrency,
            f"{log.max_concurrency:.2f}x",
            f"log: concurrency at {log.concurrency_len:,}",
        ),
        (
            "log_concurrency_agrees",
            check.concurrency_agree,
            agrees,
            "log: tokens / length against its concurrency",
        ),
        (
            "log_total",
            rig.RIG_GPU.total_bytes / GIB,
            gib(rig.RIG_GPU.total_bytes),
            "an RTX 3090 as vLLM measures it",
        ),
        ("log_budget", check.budget_gib, f"{check.budget_gib:.2f} GiB", "budget per 3090 at 0.90"),
        (
            "log_workspace",
            check.non_cache_gib,
            f"{check.non_cache_gib:.2f} GiB",
            "workspace: budget - weights - cache",
        ),
        (
            "log_per_token",
            check.bytes_per_token,
            kib(check.bytes_per_token),
            "cache per token per GPU",
        ),
        (
            "log_dense_per_token",
            dense,
            kib(dense),
            f"per token if all {rig.RIG_LAYERS} layers kept a cache",
        ),
        ("log_at_131k", at_full, quote.one(at_full, 2), f"the same pool at {FULL_LENGTH:,}"),
    )


def august_numbers() -> dict[str, Figure]:
    """The August step: the limit doubled, the full-length requests not quite halved."""
    step = rig.august_step()
    return figures(
        (
            "august_short",
            step.short_concurrency,
            f"{step.short_concurrency:.2f}",
            f"August: concurrency at {step.short_len:,}",
        ),
        (
            "august_long",
            step.long_concurrency,
            f"{step.long_concurrency:.2f}",
            f"August: concurrency at {step.long_len:,}",
        ),
        (
            "august_ratio",
            step.ratio,
            f"{step.ratio:.2f}",
            "after over before (0.5 if every layer kept a full cache)",
        ),
        (
            "august_state",
            step.state_tokens,
            quote.count(step.state_tokens),
            "the fixed state a request holds, in tokens of cache",
        ),
        (
            "august_pool",
            step.pool_tokens,
            quote.count(step.pool_tokens),
            "the unchanged pool that gives both, in tokens of cache",
        ),
    )


def log_numbers() -> dict[str, Figure]:
    """Section 4's numbers: the rig at idle, its log, and the August step."""
    return {**idle_numbers(), **rig_log_numbers(), **august_numbers()}
