"""Every number notebook 5 quotes: from the toy to a real server's start-up log.

The settings are the seeds' own and do not follow `kvlesson numbers --gpu`:
an H100 serving Llama 3.1 8B at vLLM's default share (seed 003), Qwen2.5 7B's
config (seed 002), one engineer's logs on two RTX 3090s (seed 001, measured
figures kept as data in `rig_measurements`), and Llama 3.3 70B on two H100s.
Every card is taken as vLLM measures it (`GPU.total_bytes`), and every rule is
vLLM 0.33's (`vllm_defaults.VLLM_RELEASE`).
"""

from __future__ import annotations

import dataclasses

from kvlesson.lesson import quote
from kvlesson.lesson.formats_numbers import format_numbers, server_numbers
from kvlesson.lesson.quote import Figure
from kvlesson.memory import rig_measurements as rig
from kvlesson.memory.specs import (
    A100_80GB,
    GIB,
    GPUS,
    H100_80GB,
    LLAMA_31_8B,
    LLAMA_33_70B,
    MODELS,
    QWEN25_7B,
)
from kvlesson.memory.startup import AUTO, VLLM_SHARE, Startup, startup
from kvlesson.memory.units import gib, kib
from kvlesson.memory.vllm_defaults import (
    NULL_BLOCK_SINCE,
    SHARE_BEFORE_0_20,
    VLLM_RELEASE,
    v1_defaults,
)

Say = quote.Say

FULL_LENGTH = 131_072  # max_model_len's default for Llama 3.x: the config's context length
SHORT_CHAT = 4_096  # a 4K chat
QWEN_CHAT, QWEN_LIMIT = 4_096, 32_768  # a 4K chat and Qwen2.5's 32K context limit
HIGHER_SHARE = 95  # raising gpu_memory_utilization to 0.95 for the 70B launch


@dataclasses.dataclass(frozen=True)
class Launch:
    """A launch by the names notebook 5's explorer offers: card, model, GPUs, share, longest."""

    gpu: str
    model: str
    tp: int
    share: int
    longest: int

    def start(
        self,
        weights: str = "bf16",
        share: int | None = None,
        longest: int | None = None,
        tp: int | None = None,
    ) -> Startup:
        """This launch's start-up (with these weights, or another share, longest or tp)."""
        model = MODELS[self.model].with_dtypes(weights=weights)
        return startup(
            GPUS[self.gpu],
            model,
            self.share if share is None else share,
            self.longest if longest is None else longest,
            tp=tp or self.tp,
        )


# Section 5: Llama 3.3 70B in BF16 on two H100s at vLLM's default share, max_model_len at
# its default (the config's context length). The explorer's preset is this launch.
TWO_H100 = Launch("H100_80GB", "LLAMA_33_70B", tp=2, share=VLLM_SHARE, longest=FULL_LENGTH)


def _starts(starts: bool) -> str:
    return "starts" if starts else "does not start"


def h100_numbers() -> dict[str, Figure]:
    """Seed 003's H100 example: Llama 3.1 8B in BF16 at 0.92 with 3 GB profiled, on the H100
    as vLLM measures it, beside the same launch on the data sheet's 80 GB."""
    s = startup(H100_80GB, LLAMA_31_8B, VLLM_SHARE, FULL_LENGTH)
    auto = startup(H100_80GB, LLAMA_31_8B, VLLM_SHARE, AUTO)
    p = s.parts
    sheet = startup(
        dataclasses.replace(H100_80GB, measured_bytes=None), LLAMA_31_8B, VLLM_SHARE, FULL_LENGTH
    )
    caps, small = v1_defaults(H100_80GB), v1_defaults(A100_80GB)
    busy = caps.max_num_seqs * SHORT_CHAT * LLAMA_31_8B.bytes_per_token
    return {
        "h100_total": Figure(
            p.gpu_bytes,
            f"{gib(p.gpu_bytes)} ({quote.gb(p.gpu_bytes)})",
            "the H100's total, as cudaMemGetInfo reports it",
        ),
        "h100_budget": Figure(p.allowed_bytes, quote.gb(p.allowed_bytes), "budget, 0.92 of it"),
        "h100_weights": Figure(p.weights_bytes, quote.gb(p.weights_bytes, 2), "weights, BF16"),
        "h100_profiled": Figure(p.reserve_bytes, quote.gb(p.reserve_bytes), "profiled (assumed)"),
        "h100_pool": Figure(p.pool_bytes, quote.gb(p.pool_bytes), "KV pool"),
        "h100_pool_gib": Figure(p.pool_bytes / GIB, gib(p.pool_bytes, 1), "KV pool in GiB"),
        "h100_sheet_pool_gib": Figure(
            sheet.parts.pool_bytes / GIB,
            gib(sheet.parts.pool_bytes, 1),
            "KV pool if the card were the data sheet's 80e9 bytes",
        ),
        "h100_per_token": Figure(
            LLAMA_31_8B.bytes_per_token, kib(LLAMA_31_8B.bytes_per_token), "KV cache per token"
        ),
        "h100_blocks": Figure(s.blocks, quote.count(s.blocks), "blocks of 16 tokens"),
        "h100_tokens": Figure(s.tokens, quote.count(s.tokens), "GPU KV cache size, as logged"),
        "h100_one_chat": Figure(
            s.needed_bytes, gib(s.needed_bytes, 0), f"one request of {FULL_LENGTH:,}"
        ),
        "h100_starts": Figure(s.starts, _starts(s.starts), "the start-up check"),
        "h100_concurrency": Figure(
            s.concurrency, f"{s.concurrency:.2f}", f"requests of {FULL_LENGTH:,} at once, as logged"
        ),
        "h100_fits": Figure(
            s.longest_that_fits,
            quote.count(s.longest_that_fits),
            "the longest request the pool could hold",
        ),
        "h100_auto_len": Figure(
            auto.longest,
            quote.count(auto.longest),
            "what max_model_len=-1 gives: the config's own length",
        ),
        "h100_chats_4k": Figure(
            s.chats_at(SHORT_CHAT),
            quote.count(s.chats_at(SHORT_CHAT)),
            f"requests of {SHORT_CHAT:,} at once",
        ),
        "h100_max_num_seqs": Figure(
            caps.max_num_seqs,
            quote.count(caps.max_num_seqs),
            f"max_num_seqs, vLLM {VLLM_RELEASE}'s default on an H100",
        ),
        "h100_budget_tokens": Figure(
            caps.max_num_batched_tokens,
            quote.count(caps.max_num_batched_tokens),
            "max_num_batched_tokens, its default for vllm serve",
        ),
        "a100_total": Figure(
            A100_80GB.total_bytes / GIB,
            gib(A100_80GB.total_bytes),
            "an A100 80GB's total, as cudaMemGetInfo reports it",
        ),
        "a100_max_num_seqs": Figure(
            small.max_num_seqs,
            quote.count(small.max_num_seqs),
            "max_num_seqs on an A100 80GB or a smaller card",
        ),
        "a100_budget_tokens": Figure(
            small.max_num_batched_tokens,
            quote.count(small.max_num_batched_tokens),
            "max_num_batched_tokens there, for vllm serve",
        ),
        "h100_busy_needs": Figure(
            busy, gib(busy, 0), f"{caps.max_num_seqs:,} requests of {SHORT_CHAT:,} need"
        ),
        "release": Figure(VLLM_RELEASE, VLLM_RELEASE, "the vLLM release these rules are read from"),
        "null_block_since": Figure(
            NULL_BLOCK_SINCE, NULL_BLOCK_SINCE, "one block held back as the null block, since"
        ),
        "share_before": Figure(
            SHARE_BEFORE_0_20 / 100,
            f"{SHARE_BEFORE_0_20 / 100:.2f}",
            "gpu_memory_utilization's default before 0.20",
        ),
    }


def qwen_numbers() -> dict[str, Figure]:
    """Seed 002: Qwen2.5 7B Instruct from its config, 28 layers, 4 KV heads, head 128, BF16."""
    per = QWEN25_7B.bytes_per_token
    return {
        "qwen_per_token": Figure(per, quote.count(per), "Qwen2.5 7B cache per token, bytes"),
        "qwen_4k": Figure(
            QWEN_CHAT * per,
            f"{QWEN_CHAT * per / 1e6:,.0f} MB",
            f"Qwen2.5 7B, one chat of {QWEN_CHAT:,}",
        ),
        "qwen_32k": Figure(
            QWEN_LIMIT * per, quote.gb(QWEN_LIMIT * per), f"Qwen2.5 7B, one chat of {QWEN_LIMIT:,}"
        ),
    }


def log_numbers() -> dict[str, Figure]:
    """Seed 001's start-up log held against its two RTX 3090s at 0.90, and the August step."""
    check = rig.rig_check()
    idle = rig.idle_reading()
    log = check.log
    dense = rig.dense_bytes_per_token(check)
    step = rig.august_step()
    return {
        "idle_used": Figure(
            rig.IDLE_USED_MIB,
            f"{rig.IDLE_USED_MIB:,} MiB of {rig.CARD_MIB:,} MiB",
            "nvidia-smi at idle, memory used on GPU 0",
        ),
        "idle_of_card": Figure(
            idle.of_card,
            quote.pct(idle.of_card),
            "the same over nvidia-smi's total (a coincidence, not the share)",
        ),
        "idle_measured": Figure(
            idle.measured_mib,
            f"{idle.measured_mib:,.0f} MiB",
            "the 3090's total as cudaMemGetInfo reports it (23.58 GiB)",
        ),
        "idle_budget": Figure(
            idle.budget_mib, f"{idle.budget_mib:,.0f} MiB", "the budget: 0.90 of that total"
        ),
        "idle_outside": Figure(
            idle.outside_mib,
            f"{idle.outside_mib:,.0f} MiB",
            "held beyond the budget: taken before vLLM's snapshot",
        ),
        "idle_hidden": Figure(
            idle.hidden_mib,
            f"{idle.hidden_mib:,.0f} MiB",
            "in nvidia-smi's total and not in cudaMemGetInfo's",
        ),
        "log_weights": Figure(
            log.weights_gib, f"{log.weights_gib:.2f} GiB", "log: weights per GPU"
        ),
        "log_cache": Figure(
            log.kv_cache_gib, f"{log.kv_cache_gib:.2f} GiB", "log: KV cache per GPU"
        ),
        "log_tokens": Figure(log.kv_tokens, quote.count(log.kv_tokens), "log: pool in tokens"),
        "log_concurrency": Figure(
            log.max_concurrency,
            f"{log.max_concurrency:.2f}x",
            f"log: concurrency at {log.concurrency_len:,}",
        ),
        "log_concurrency_agrees": Figure(
            check.concurrency_agree,
            "agrees" if check.concurrency_agree else "disagrees",
            "log: tokens / length against its concurrency",
        ),
        "log_total": Figure(
            rig.RIG_GPU.total_bytes / GIB,
            gib(rig.RIG_GPU.total_bytes),
            "an RTX 3090 as vLLM measures it",
        ),
        "log_budget": Figure(
            check.budget_gib, f"{check.budget_gib:.2f} GiB", "budget per 3090 at 0.90"
        ),
        "log_workspace": Figure(
            check.non_cache_gib,
            f"{check.non_cache_gib:.2f} GiB",
            "workspace: budget - weights - cache",
        ),
        "log_per_token": Figure(
            check.bytes_per_token, kib(check.bytes_per_token), "cache per token per GPU"
        ),
        "log_dense_per_token": Figure(
            dense, kib(dense), f"per token if all {rig.RIG_LAYERS} layers kept a cache"
        ),
        "log_at_131k": Figure(
            log.concurrency_at(FULL_LENGTH),
            quote.one(log.concurrency_at(FULL_LENGTH), 2),
            f"the same pool at {FULL_LENGTH:,}",
        ),
        "august_short": Figure(
            step.short_concurrency,
            f"{step.short_concurrency:.2f}",
            f"August: concurrency at {step.short_len:,}",
        ),
        "august_long": Figure(
            step.long_concurrency,
            f"{step.long_concurrency:.2f}",
            f"August: concurrency at {step.long_len:,}",
        ),
        "august_ratio": Figure(
            step.ratio,
            f"{step.ratio:.2f}",
            "after over before (0.5 if every layer kept a full cache)",
        ),
        "august_state": Figure(
            step.state_tokens,
            quote.count(step.state_tokens),
            "the fixed state a request holds, in tokens of cache",
        ),
        "august_pool": Figure(
            step.pool_tokens,
            quote.count(step.pool_tokens),
            "the unchanged pool that gives both, in tokens of cache",
        ),
    }


def tp_numbers() -> dict[str, Figure]:
    """Llama 3.3 70B on two H100s: BF16 fails the check; 0.95, FP8 weights or TP=4 instead."""
    bf16 = TWO_H100.start()
    auto = TWO_H100.start(longest=AUTO)
    higher = TWO_H100.start(share=HIGHER_SHARE)
    fp8 = TWO_H100.start(weights="fp8")
    four = TWO_H100.start(tp=4)
    alone = TWO_H100.start(tp=1)
    return {
        "tp1_weights": Figure(
            alone.parts.weights_bytes,
            quote.gb(alone.parts.weights_bytes, 1),
            "70B on one H100: weights on its one GPU",
        ),
        "tp1_card": Figure(
            alone.parts.gpu_bytes, quote.gb(alone.parts.gpu_bytes), "the H100 as vLLM measures it"
        ),
        "tp1_loads": Figure(
            alone.loads, "loads" if alone.loads else "does not load", "70B on one H100: the weights"
        ),
        "tp2_budget": Figure(
            bf16.all_budget_bytes,
            quote.gb(bf16.all_budget_bytes),
            "70B, TP=2: budget, in all (both GPUs)",
        ),
        "tp2_weights": Figure(
            LLAMA_33_70B.weights_bytes,
            quote.gb(LLAMA_33_70B.weights_bytes),
            "70B, TP=2: weights, BF16, in all (both GPUs)",
        ),
        "tp2_pool": Figure(
            bf16.all_pool_bytes,
            quote.gb(bf16.all_pool_bytes, 2),
            "70B, TP=2: KV pool, in all (both GPUs)",
        ),
        "tp2_needed": Figure(
            bf16.all_needed_bytes,
            gib(bf16.all_needed_bytes, 0),
            f"70B, TP=2: one request of {FULL_LENGTH:,} needs, in all (both GPUs)",
        ),
        "tp2_starts": Figure(bf16.starts, _starts(bf16.starts), "70B, TP=2: the start-up check"),
        "tp2_auto_len": Figure(
            auto.longest, quote.count(auto.longest), "70B, TP=2: what max_model_len=-1 finds"
        ),
        "tp2_95_pool": Figure(
            higher.all_pool_bytes,
            quote.gb(higher.all_pool_bytes),
            "70B, TP=2 at 0.95: KV pool, in all (both GPUs)",
        ),
        "tp2_95_tokens": Figure(
            higher.longest_that_fits,
            quote.count(higher.longest_that_fits),
            "70B, TP=2 at 0.95: the longest request that fits",
        ),
        "tp2_95_starts": Figure(
            higher.starts, _starts(higher.starts), "70B, TP=2 at 0.95: the check"
        ),
        "tp2_fp8_pool": Figure(
            fp8.all_pool_bytes,
            quote.gb(fp8.all_pool_bytes),
            "70B FP8 weights, TP=2: KV pool, in all (both GPUs)",
        ),
        "tp2_fp8_tokens": Figure(
            fp8.tokens, quote.count(fp8.tokens), "70B FP8 weights, TP=2: tokens"
        ),
        "tp2_fp8_concurrency": Figure(
            fp8.concurrency,
            f"{fp8.concurrency:.2f}",
            f"70B FP8 weights, TP=2: requests of {FULL_LENGTH:,}",
        ),
        "tp4_tokens": Figure(four.tokens, quote.count(four.tokens), "70B, TP=4: tokens"),
        "tp4_concurrency": Figure(
            four.concurrency, f"{four.concurrency:.2f}", f"70B, TP=4: requests of {FULL_LENGTH:,}"
        ),
    }


def real_server_numbers() -> dict[str, Figure]:
    """Every number notebook 5 quotes, in the notebook's order."""
    return {
        **h100_numbers(),
        **qwen_numbers(),
        **log_numbers(),
        **tp_numbers(),
        **format_numbers(),
        **server_numbers(),
    }


def walk(launch: Startup) -> Say:
    """A launch, step by step in vLLM 0.33's order, per GPU, with its numbers; a launch whose
    weights pass the card stops at step 2."""
    p, tp = launch.parts, launch.tp
    split = f" (1/{tp} of {quote.gb(p.model.weights_bytes, 2)})" if tp > 1 else ""
    each = " on each GPU" if tp > 1 else ""  # with several GPUs, say whose memory it is
    snapshot = (
        f"1. **Snapshot.** {p.gpu.name}: {quote.gb(p.gpu_bytes)} of memory{each}, the "
        f"total cudaMemGetInfo reports; the budget is {p.share}% of that, "
        f"{quote.gb(p.allowed_bytes)}{each}, whatever is free."
    )
    load = f"2. **Load the weights.** {p.model.name}: {quote.gb(p.weights_bytes, 2)} on each GPU{split}"
    if not launch.loads:
        stop = f"{load}, more than the card holds: the launch stops here. {launch.error()}"
        return Say(f"{snapshot}\n{stop}")
    check = (
        f"passes: the pool holds {launch.concurrency:.2f} of them, as the log will say."
        if launch.starts
        else f"fails: {launch.error()}"
    )
    profile = (
        f"3. **Profile.** Activations, CUDA graphs and workspace: "
        f"{quote.gb(p.reserve_bytes)}{each} (assumed here; vLLM measures it)."
    )
    subtract = (
        f"4. **Subtract.** KV pool{each} = {quote.gb(p.allowed_bytes)} - "
        f"{quote.gb(p.weights_bytes, 2)} - {quote.gb(p.reserve_bytes)} = "
        f"{quote.gb(p.pool_bytes, 2)} ({gib(max(p.pool_bytes, 0))}), "
        f"{quote.count(p.blocks)} blocks of 16 tokens."
    )
    verdict = (
        f"5. **Check.** One block is held back (the null block, since vLLM "
        f"{NULL_BLOCK_SINCE}); one request of max_model_len = {launch.longest:,} tokens "
        f"needs {gib(launch.needed_bytes)}{each}; the check {check}"
    )
    return Say("\n".join([snapshot, load + ".", profile, subtract, verdict]))
