"""Every number notebook 5 quotes: from the toy to a real server's start-up log.

The settings are the seeds' own and do not follow `kvlesson numbers --gpu`:
an H100 serving Llama 3.1 8B at vLLM's default share (seed 003), Qwen2.5 7B's
config (seed 002), one engineer's logs on two RTX 3090s (seed 001, measured
figures kept as data in `rig_measurements`, quoted by `real_server_log_numbers`),
and Llama 3.3 70B on two H100s. Every card is taken as vLLM measures it
(`GPU.total_bytes`), and every rule is vLLM 0.33's (`vllm_defaults.VLLM_RELEASE`).
"""

from __future__ import annotations

import dataclasses

from kvlesson.lesson import quote
from kvlesson.lesson.formats_numbers import format_numbers, server_numbers
from kvlesson.lesson.quote import Figure, figures
from kvlesson.lesson.real_server_launches import FULL_LENGTH, TWO_H100, starts_word
from kvlesson.lesson.real_server_log_numbers import log_numbers
from kvlesson.memory.specs import A100_80GB, GIB, H100_80GB, LLAMA_31_8B, LLAMA_33_70B, QWEN25_7B
from kvlesson.memory.startup import AUTO, VLLM_SHARE, Startup, startup
from kvlesson.memory.units import gib, kib
from kvlesson.memory.vllm_defaults import (
    NULL_BLOCK_SINCE,
    SHARE_BEFORE_0_20,
    VLLM_RELEASE,
    v1_defaults,
)

SHORT_CHAT = 4_096  # a 4K chat
QWEN_CHAT, QWEN_LIMIT = 4_096, 32_768  # a 4K chat and Qwen2.5's 32K context limit
HIGHER_SHARE = 95  # raising gpu_memory_utilization to 0.95 for the 70B launch


def h100_numbers() -> dict[str, Figure]:
    """Seed 003's H100 example: Llama 3.1 8B in BF16 at 0.92 with 3 GB profiled, on the H100
    as vLLM measures it, beside the same launch on the data sheet's 80 GB."""
    s = startup(H100_80GB, LLAMA_31_8B, VLLM_SHARE, FULL_LENGTH)
    p = s.parts
    on_sheet = dataclasses.replace(H100_80GB, measured_bytes=None)
    sheet = startup(on_sheet, LLAMA_31_8B, VLLM_SHARE, FULL_LENGTH).parts
    per = LLAMA_31_8B.bytes_per_token
    return figures(
        (
            "h100_total",
            p.gpu_bytes,
            f"{gib(p.gpu_bytes)} ({quote.gb(p.gpu_bytes)})",
            "the H100's total, as cudaMemGetInfo reports it",
        ),
        ("h100_budget", p.allowed_bytes, quote.gb(p.allowed_bytes), "budget, 0.92 of it"),
        ("h100_weights", p.weights_bytes, quote.gb(p.weights_bytes, 2), "weights, BF16"),
        ("h100_profiled", p.reserve_bytes, quote.gb(p.reserve_bytes), "profiled (assumed)"),
        ("h100_pool", p.pool_bytes, quote.gb(p.pool_bytes), "KV pool"),
        ("h100_pool_gib", p.pool_bytes / GIB, gib(p.pool_bytes, 1), "KV pool in GiB"),
        (
            "h100_sheet_pool_gib",
            sheet.pool_bytes / GIB,
            gib(sheet.pool_bytes, 1),
            "KV pool if the card were the data sheet's 80e9 bytes",
        ),
        ("h100_per_token", per, kib(per), "KV cache per token"),
        ("h100_blocks", s.blocks, quote.count(s.blocks), "blocks of 16 tokens"),
        ("h100_tokens", s.tokens, quote.count(s.tokens), "GPU KV cache size, as logged"),
        (
            "h100_one_chat",
            s.needed_bytes,
            gib(s.needed_bytes, 0),
            f"one request of {FULL_LENGTH:,}",
        ),
        ("h100_starts", s.starts, starts_word(s.starts), "the start-up check"),
        (
            "h100_concurrency",
            s.concurrency,
            f"{s.concurrency:.2f}",
            f"requests of {FULL_LENGTH:,} at once, as logged",
        ),
        *_fits(s),
    )


def _fits(s: Startup) -> list[tuple]:
    """What the H100's pool holds besides the check: the longest request, what -1 finds, and
    chats of 4K."""
    auto = startup(H100_80GB, LLAMA_31_8B, VLLM_SHARE, AUTO)
    return [
        (
            "h100_fits",
            s.longest_that_fits,
            quote.count(s.longest_that_fits),
            "the longest request the pool could hold",
        ),
        (
            "h100_auto_len",
            auto.longest,
            quote.count(auto.longest),
            "what max_model_len=-1 gives: the config's own length",
        ),
        (
            "h100_chats_4k",
            s.chats_at(SHORT_CHAT),
            quote.count(s.chats_at(SHORT_CHAT)),
            f"requests of {SHORT_CHAT:,} at once",
        ),
    ]


def defaults_numbers() -> dict[str, Figure]:
    """vLLM 0.33's caps by card (an H100 against an A100 80GB), its release and its dates."""
    caps, small = v1_defaults(H100_80GB), v1_defaults(A100_80GB)
    busy = caps.max_num_seqs * SHORT_CHAT * LLAMA_31_8B.bytes_per_token
    before = SHARE_BEFORE_0_20 / 100
    return figures(
        (
            "h100_max_num_seqs",
            caps.max_num_seqs,
            quote.count(caps.max_num_seqs),
            f"max_num_seqs, vLLM {VLLM_RELEASE}'s default on an H100",
        ),
        (
            "h100_budget_tokens",
            caps.max_num_batched_tokens,
            quote.count(caps.max_num_batched_tokens),
            "max_num_batched_tokens, its default for vllm serve",
        ),
        (
            "a100_total",
            A100_80GB.total_bytes / GIB,
            gib(A100_80GB.total_bytes),
            "an A100 80GB's total, as cudaMemGetInfo reports it",
        ),
        (
            "a100_max_num_seqs",
            small.max_num_seqs,
            quote.count(small.max_num_seqs),
            "max_num_seqs on an A100 80GB or a smaller card",
        ),
        (
            "a100_budget_tokens",
            small.max_num_batched_tokens,
            quote.count(small.max_num_batched_tokens),
            "max_num_batched_tokens there, for vllm serve",
        ),
        (
            "h100_busy_needs",
            busy,
            gib(busy, 0),
            f"{caps.max_num_seqs:,} requests of {SHORT_CHAT:,} need",
        ),
        ("release", VLLM_RELEASE, VLLM_RELEASE, "the vLLM release these rules are read from"),
        (
            "null_block_since",
            NULL_BLOCK_SINCE,
            NULL_BLOCK_SINCE,
            "one block held back as the null block, since",
        ),
        ("share_before", before, f"{before:.2f}", "gpu_memory_utilization's default before 0.20"),
    )


def qwen_numbers() -> dict[str, Figure]:
    """Seed 002: Qwen2.5 7B Instruct from its config, 28 layers, 4 KV heads, head 128, BF16."""
    per = QWEN25_7B.bytes_per_token
    return figures(
        ("qwen_per_token", per, quote.count(per), "Qwen2.5 7B cache per token, bytes"),
        (
            "qwen_4k",
            QWEN_CHAT * per,
            f"{QWEN_CHAT * per / 1e6:,.0f} MB",
            f"Qwen2.5 7B, one chat of {QWEN_CHAT:,}",
        ),
        (
            "qwen_32k",
            QWEN_LIMIT * per,
            quote.gb(QWEN_LIMIT * per),
            f"Qwen2.5 7B, one chat of {QWEN_LIMIT:,}",
        ),
    )


def tp_numbers() -> dict[str, Figure]:
    """Llama 3.3 70B in BF16: on one H100 it does not load, on two it fails the check."""
    bf16, auto, alone = TWO_H100.start(), TWO_H100.start(longest=AUTO), TWO_H100.start(tp=1)
    both = "in all (both GPUs)"
    return figures(
        (
            "tp1_weights",
            alone.parts.weights_bytes,
            quote.gb(alone.parts.weights_bytes, 1),
            "70B on one H100: weights on its one GPU",
        ),
        (
            "tp1_card",
            alone.parts.gpu_bytes,
            quote.gb(alone.parts.gpu_bytes),
            "the H100 as vLLM measures it",
        ),
        (
            "tp1_loads",
            alone.loads,
            "loads" if alone.loads else "does not load",
            "70B on one H100: the weights",
        ),
        (
            "tp2_budget",
            bf16.all_budget_bytes,
            quote.gb(bf16.all_budget_bytes),
            f"70B, TP=2: budget, {both}",
        ),
        (
            "tp2_weights",
            LLAMA_33_70B.weights_bytes,
            quote.gb(LLAMA_33_70B.weights_bytes),
            f"70B, TP=2: weights, BF16, {both}",
        ),
        (
            "tp2_pool",
            bf16.all_pool_bytes,
            quote.gb(bf16.all_pool_bytes, 2),
            f"70B, TP=2: KV pool, {both}",
        ),
        (
            "tp2_needed",
            bf16.all_needed_bytes,
            gib(bf16.all_needed_bytes, 0),
            f"70B, TP=2: one request of {FULL_LENGTH:,} needs, {both}",
        ),
        ("tp2_starts", bf16.starts, starts_word(bf16.starts), "70B, TP=2: the start-up check"),
        (
            "tp2_auto_len",
            auto.longest,
            quote.count(auto.longest),
            "70B, TP=2: what max_model_len=-1 finds",
        ),
    )


def fixes_numbers() -> dict[str, Figure]:
    """What section 5 tries for the 70B instead: a share of 0.95, FP8 weights, or four GPUs."""
    higher = TWO_H100.start(share=HIGHER_SHARE)
    fp8, four = TWO_H100.start(weights="fp8"), TWO_H100.start(tp=4)
    both = "in all (both GPUs)"
    return figures(
        (
            "tp2_95_pool",
            higher.all_pool_bytes,
            quote.gb(higher.all_pool_bytes),
            f"70B, TP=2 at 0.95: KV pool, {both}",
        ),
        (
            "tp2_95_tokens",
            higher.longest_that_fits,
            quote.count(higher.longest_that_fits),
            "70B, TP=2 at 0.95: the longest request that fits",
        ),
        (
            "tp2_95_starts",
            higher.starts,
            starts_word(higher.starts),
            "70B, TP=2 at 0.95: the check",
        ),
        (
            "tp2_fp8_pool",
            fp8.all_pool_bytes,
            quote.gb(fp8.all_pool_bytes),
            f"70B FP8 weights, TP=2: KV pool, {both}",
        ),
        ("tp2_fp8_tokens", fp8.tokens, quote.count(fp8.tokens), "70B FP8 weights, TP=2: tokens"),
        (
            "tp2_fp8_concurrency",
            fp8.concurrency,
            f"{fp8.concurrency:.2f}",
            f"70B FP8 weights, TP=2: requests of {FULL_LENGTH:,}",
        ),
        ("tp4_tokens", four.tokens, quote.count(four.tokens), "70B, TP=4: tokens"),
        (
            "tp4_concurrency",
            four.concurrency,
            f"{four.concurrency:.2f}",
            f"70B, TP=4: requests of {FULL_LENGTH:,}",
        ),
    )


def real_server_numbers() -> dict[str, Figure]:
    """Every number notebook 5 quotes, in the notebook's order."""
    return {
        **h100_numbers(),
        **defaults_numbers(),
        **qwen_numbers(),
        **log_numbers(),
        **tp_numbers(),
        **fixes_numbers(),
        **format_numbers(),
        **server_numbers(),
    }
