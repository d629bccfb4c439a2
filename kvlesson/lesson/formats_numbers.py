"""Notebook 5's numbers for sections 6 and 7: the cache's format, LoRA's reserved buffers,
and the same three settings in llama.cpp, TensorRT-LLM and TGI."""

from __future__ import annotations

from kvlesson.lesson import quote
from kvlesson.lesson.quote import Figure, figures
from kvlesson.lesson.real_server_launches import FULL_LENGTH, starts_word
from kvlesson.memory import rig_measurements as rig
from kvlesson.memory.other_servers import cache_budgets, llama_cpp_context, share_each
from kvlesson.memory.precision import k8v4_gain_over_fp8
from kvlesson.memory.specs import H100_80GB, LLAMA_31_8B
from kvlesson.memory.startup import PROFILED_BYTES, VLLM_SHARE, startup
from kvlesson.memory.units import kib

TRT_FRACTION = 0.9  # TensorRT-LLM's free_gpu_memory_fraction (and the same 0.9 in vLLM)
LLAMA_CPP_CTX, LLAMA_CPP_SLOTS = 98_304, 3  # --ctx-size 98304 --parallel 3
LLAMA_CPP_ODD = (100, 3)  # --ctx-size 100 --parallel 3: padding to 256 shows
K8V4_HEADS = (128, 256)  # head sizes at which k8v4's layout is worked out


def fp8_numbers() -> dict[str, Figure]:
    """An fp8 cache on the H100 example, and what "auto" keeps beside FP8 weights."""
    fp8 = LLAMA_31_8B.with_dtypes(cache="fp8")
    fp8_weights = LLAMA_31_8B.with_dtypes(weights="fp8")
    declared = LLAMA_31_8B.with_dtypes(weights="fp8", declared_cache="fp8")
    tokens = startup(H100_80GB, fp8, VLLM_SHARE, FULL_LENGTH).tokens
    return figures(
        ("fp8_per_token", fp8.bytes_per_token, kib(fp8.bytes_per_token), "fp8 cache per token"),
        ("fp8_tokens", tokens, quote.count(tokens), "H100 pool, fp8 cache"),
        (
            "fp8_weights_auto",
            fp8_weights.bytes_per_token,
            kib(fp8_weights.bytes_per_token),
            'FP8 weights, cache "auto": per token',
        ),
        (
            "fp8_declared_auto",
            declared.bytes_per_token,
            kib(declared.bytes_per_token),
            'FP8 checkpoint declaring an FP8 cache, "auto": per token',
        ),
    )


def k8v4_numbers() -> dict[str, Figure]:
    """Seed 001's step from fp8 to k8v4 on its hybrid model, what the bits and the layout
    predict, and what the same format gives a dense model, which keeps four layers in BF16."""
    k8v4 = rig.k8v4_step()
    dense = k8v4_gain_over_fp8(LLAMA_31_8B.layers, LLAMA_31_8B.head_size)
    return figures(
        ("k8v4_before", k8v4.before, quote.count(k8v4.before), "pool at 262,144, fp8_e4m3"),
        ("k8v4_after", k8v4.after, quote.count(k8v4.after), "pool at 262,144, k8v4"),
        ("k8v4_gain", k8v4.gain, quote.pct(k8v4.gain), "k8v4: more tokens, measured"),
        ("k8v4_bits_gain", k8v4.bits_gain, quote.pct(k8v4.bits_gain), "k8v4: more tokens, by bits"),
        *(
            (
                f"k8v4_layout_{head}",
                k8v4.layout_gain(head),
                quote.pct(k8v4.layout_gain(head)),
                f"k8v4: more tokens, by its layout, head size {head}",
            )
            for head in K8V4_HEADS
        ),
        (
            "k8v4_dense_8b",
            dense,
            quote.pct(dense),
            "k8v4 against fp8 for Llama 3.1 8B, dense: its first and last two layers in BF16",
        ),
    )


def lora_numbers() -> dict[str, Figure]:
    """Seed 001's LoRA slots: eight of rank 128 left no cache, one of rank 8 cost a little."""
    lora = rig.lora_cost()
    return figures(
        (
            "lora_buffers",
            lora.buffers_gib,
            f"{lora.buffers_gib:.2f} GiB",
            "LoRA, 8 slots of rank 128: buffers per GPU",
        ),
        (
            "lora_eight_cache",
            lora.eight_slots_cache_gib,
            f"{lora.eight_slots_cache_gib:.2f} GiB",
            "LoRA, 8 slots: KV cache left",
        ),
        (
            "lora_eight_starts",
            lora.starts_with_eight,
            starts_word(lora.starts_with_eight),
            "LoRA, 8 slots: the server",
        ),
        (
            "lora_one_tokens",
            lora.one_slot_tokens,
            quote.count(lora.one_slot_tokens),
            "LoRA, 1 slot of rank 8: pool",
        ),
        (
            "lora_none_tokens",
            lora.no_lora_tokens,
            quote.count(lora.no_lora_tokens),
            "no LoRA: pool",
        ),
        ("lora_lost", lora.tokens_lost, quote.count(lora.tokens_lost), "tokens one slot costs"),
    )


def format_numbers() -> dict[str, Figure]:
    """Section 6's numbers: an fp8 cache, k8v4, and LoRA's slots."""
    return {**fp8_numbers(), **k8v4_numbers(), **lora_numbers()}


def server_numbers() -> dict[str, Figure]:
    """llama.cpp's slots, TensorRT-LLM's fraction against vLLM's, two servers on one card."""
    split = llama_cpp_context(LLAMA_CPP_CTX, LLAMA_CPP_SLOTS)
    odd = llama_cpp_context(*LLAMA_CPP_ODD)
    auto = llama_cpp_context(LLAMA_CPP_CTX)
    budgets = cache_budgets(TRT_FRACTION, H100_80GB, LLAMA_31_8B, PROFILED_BYTES)
    each = share_each(2)
    return figures(
        (
            "llama_cpp_slot",
            split.per_slot,
            quote.count(split.per_slot),
            f"llama.cpp, --ctx-size {LLAMA_CPP_CTX:,} --parallel {LLAMA_CPP_SLOTS}: tokens a slot",
        ),
        (
            "llama_cpp_odd_slot",
            odd.per_slot,
            quote.count(odd.per_slot),
            f"--ctx-size {LLAMA_CPP_ODD[0]} --parallel {LLAMA_CPP_ODD[1]}: tokens a slot "
            f"(padded to 256)",
        ),
        (
            "llama_cpp_odd_ctx",
            odd.n_ctx,
            quote.count(odd.n_ctx),
            "the same: the context the cache is sized for",
        ),
        (
            "llama_cpp_auto_slots",
            auto.slots,
            quote.count(auto.slots),
            "no --parallel (the default): slots, sharing one cache",
        ),
        (
            "llama_cpp_auto_slot",
            auto.per_slot,
            quote.count(auto.per_slot),
            f"the same, --ctx-size {LLAMA_CPP_CTX:,}: tokens a slot may use",
        ),
        (
            "vllm_cache_09",
            budgets.vllm_bytes,
            quote.gb(budgets.vllm_bytes),
            "H100, 8B: vLLM's cache at 0.9",
        ),
        (
            "trt_cache_09",
            budgets.tensorrt_llm_bytes,
            quote.gb(budgets.tensorrt_llm_bytes),
            "H100, 8B: TensorRT-LLM's cache at 0.9",
        ),
        ("two_servers_share", each, f"{each:g}", "share for each of two servers on one card"),
    )
