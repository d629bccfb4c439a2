"""Notebook 5's numbers, pinned as the seeds quote them, and the package calls behind them.

The figures come from issue 10 (seeds 001, 002, 003). Each is pinned twice:
as `real_server_numbers()` and `kvlesson numbers` write it, and, for the
formula-made ones, from first principles with the package's own calls.
"""

from __future__ import annotations

import dataclasses
import json

import nbformat
import pytest

import kvlesson as kv
from kvlesson.lesson.printout import TITLES
from kvlesson.lesson.real_server_launches import walk
from kvlesson.lesson.real_server_numbers import real_server_numbers
from kvlesson.memory import rig_measurements
from kvlesson.memory.other_servers import (
    cache_budgets,
    llama_cpp_context,
    llama_cpp_slot_context,
    share_each,
)
from kvlesson.memory.precision import k8v4_slot_bytes
from kvlesson.memory.startup import AUTO, startup
from kvlesson.memory.vllm_defaults import v1_defaults
from support.command import kvlesson
from support.paths import ROOT

REPO = ROOT
GIB = 2**30

QUOTED = {
    # seed 003: Llama 3.1 8B, BF16, one H100 (as vLLM measures it: 79.22 GiB) at 0.92, 3 GB profiled
    "release": "0.33.0",
    "h100_total": "79.22 GiB (85.1 GB)",
    "h100_budget": "78.3 GB",
    "h100_weights": "16.06 GB",
    "h100_pool": "59.2 GB",
    "h100_pool_gib": "55.1 GiB",
    "h100_sheet_pool_gib": "50.8 GiB",
    "h100_per_token": "128 KiB",
    "h100_blocks": "28,227",
    "h100_tokens": "451,632",
    "h100_one_chat": "16 GiB",
    "h100_starts": "starts",
    "h100_concurrency": "3.45",
    "h100_chats_4k": "110",
    "h100_busy_needs": "512 GiB",
    "h100_fits": "451,616",
    "h100_auto_len": "131,072",
    "a100_total": "79.32 GiB",
    "h100_max_num_seqs": "1,024",
    "h100_budget_tokens": "8,192",
    "a100_max_num_seqs": "256",
    "a100_budget_tokens": "2,048",
    "null_block_since": "0.29.0",
    "share_before": "0.90",
    # seed 002: Qwen2.5 7B from its config
    "qwen_per_token": "57,344",
    "qwen_4k": "235 MB",
    "qwen_32k": "1.9 GB",
    # seed 001: the rig's log on two 3090s (23.58 GiB each, as vLLM measures them) at 0.90
    "idle_used": "22,112 MiB of 24,576 MiB",
    "idle_of_card": "90.0%",
    "idle_measured": "24,146 MiB",
    "idle_budget": "21,731 MiB",
    "idle_outside": "381 MiB",
    "idle_hidden": "430 MiB",
    "log_weights": "8.98 GiB",
    "log_cache": "10.37 GiB",
    "log_tokens": "652,346",
    "log_concurrency": "2.49x",
    "log_concurrency_agrees": "agrees",
    "log_total": "23.58 GiB",
    "log_budget": "21.22 GiB",
    "log_workspace": "1.87 GiB",
    "log_per_token": "17 KiB",
    "august_short": "4.48",
    "august_long": "2.38",
    "august_ratio": "0.53",
    "august_state": "17,384",
    "august_pool": "665,083",
    # seed 003: Llama 3.3 70B on two H100s
    "tp1_weights": "141.1 GB",
    "tp1_loads": "does not load",
    "tp2_budget": "150.5 GB",
    "tp2_weights": "141.1 GB",
    "tp2_pool": "9.41 GB",
    "tp2_needed": "40 GiB",
    "tp2_starts": "does not start",
    "tp2_95_pool": "14.5 GB",
    "tp2_95_tokens": "44,256",
    "tp2_95_starts": "does not start",
    "tp2_fp8_pool": "80.0 GB",
    "tp2_fp8_tokens": "244,016",
    "tp2_fp8_concurrency": "1.86",
    "tp2_auto_len": "28,688",
    "tp4_tokens": "488,032",
    "tp4_concurrency": "3.72",
    # seed 001 and vLLM 0.33: cache format and reserved buffers
    "fp8_weights_auto": "128 KiB",
    "fp8_declared_auto": "64 KiB",
    "k8v4_before": "623,721",
    "k8v4_after": "817,968",
    "k8v4_gain": "31.1%",
    "k8v4_layout_128": "30.6%",
    "k8v4_layout_256": "32.0%",
    "lora_eight_cache": "-0.48 GiB",
    "lora_eight_starts": "does not start",
    "lora_one_tokens": "89,979",
    "lora_none_tokens": "91,387",
    "lora_lost": "1,408",
    # other servers: llama.cpp's padding and slots, TensorRT-LLM after weights and warm-up
    "llama_cpp_slot": "32,768",
    "llama_cpp_odd_slot": "256",
    "llama_cpp_odd_ctx": "768",
    "llama_cpp_auto_slots": "4",
    "llama_cpp_auto_slot": "98,304",
    "vllm_cache_09": "57.5 GB",
    "trt_cache_09": "59.4 GB",
    "two_servers_share": "0.45",
}
MEASURED_H100 = round(79.22 * GIB)


@pytest.fixture(scope="module")
def numbers():
    return real_server_numbers()


@pytest.fixture(scope="module")
def cli_json() -> dict:
    run = kvlesson("numbers", "--json")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("key, text", QUOTED.items())
def test_the_seeds_numbers(numbers, key, text):
    assert numbers[key].text == text


def test_python_m_kvlesson_prints_the_section(numbers, cli_json):
    assert "real_server" in TITLES
    printed = cli_json["real_server"]
    assert printed.keys() == numbers.keys()
    for key, text in QUOTED.items():
        assert printed[key]["text"] == text, key


# --- the same numbers from the package's calls -------------------------------------------


def test_h100_from_first_principles():
    """vLLM 0.33 on an H100: 0.92 of cudaMemGetInfo's total, weights, 3 GB, blocks, one null
    block held back, the logged size = concurrency x max_model_len."""
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B, 92, 131_072, reserve_bytes=3e9)
    assert s.parts.gpu_bytes == kv.H100_80GB.total_bytes == MEASURED_H100
    assert s.parts.allowed_bytes == pytest.approx(0.92 * MEASURED_H100)
    pool = 0.92 * MEASURED_H100 - 3e9 - 8_030_261_248 * 2
    assert s.parts.pool_bytes == pytest.approx(pool)
    assert kv.LLAMA_31_8B.bytes_per_token == 2 * 32 * 8 * 128 * 2 == 128 * 1024
    assert s.blocks == int(pool // (16 * 131_072)) == 28_227 and s.usable_blocks == 28_226
    assert s.needed_bytes == 131_072 * 131_072 == 16 * GIB
    assert s.starts and s.error() is None
    assert s.concurrency == 28_227 / (131_072 // 16)
    assert s.tokens == int(s.concurrency * 131_072) == 28_227 * 16  # 131,072 is whole blocks
    assert s.chats_at(4_096) == 28_226 // 256 == 110
    assert 1_024 * 4_096 * 131_072 == 512 * GIB


def test_the_logged_size_is_concurrency_times_the_length():
    """Since 0.20.1: int(blocks / blocks-a-request x max_model_len), below blocks x 16 when the
    length is not whole blocks."""
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B, 92, 100_001)
    assert s.per_request_blocks == 6_251
    assert s.tokens == int(s.blocks / 6_251 * 100_001) < s.blocks * 16


def test_the_null_block_decides_a_launch_on_the_edge():
    """A pool of exactly one request's blocks starts under the lesson's rule, not under 0.29's."""
    model = kv.LLAMA_31_8B
    need = kv.blocks_for(8_192) * 16 * model.bytes_per_token
    weights = model.weights_bytes
    card = kv.GPU("edge", 10**11, 1e14, 1e12, measured_bytes=weights + 3 * 10**9 + need)
    s = startup(card, model, 100, 8_192)
    assert s.blocks == kv.blocks_for(8_192) and not s.starts
    assert kv.room(
        100,
        8_192,
        gpu=dataclasses.replace(card, memory_bytes=card.total_bytes),
        model=model,
        reserve_bytes=3e9,
    ).starts
    assert "estimated maximum model length is 8176" in s.error()


def test_qwen_from_its_config():
    config = {
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "torch_dtype": "bfloat16",
        "model_type": "qwen2",
        "sliding_window": 131072,
        "use_sliding_window": False,
        "tie_word_embeddings": False,
    }
    model = kv.Model.from_hf_config(config)
    assert model.bytes_per_token == 2 * 28 * 4 * 128 * 2 == 57_344
    assert model.params == 7_615_616_512  # Qwen2.5 7B's count, q, k and v biases included


def test_tensor_parallel_splits_weights_and_kv_heads():
    m = kv.LLAMA_33_70B
    assert m.cache_bytes_per_token(2) == m.bytes_per_token // 2 == 160 * 1024
    assert m.cache_bytes_per_token(16) == m.cache_bytes_per_token(8)  # a head is copied, not split
    p = kv.memory_parts(92, kv.H100_80GB, m, 3e9, tp=2)
    assert p.weights_bytes == m.weights_bytes // 2 and p.tp == 2
    assert p.block_bytes == 16 * 160 * 1024
    assert startup(kv.H100_80GB, m, 92, 131_072, 3e9, tp=2).starts is False
    assert startup(kv.H100_80GB, m, 92, 131_072, 3e9, tp=4).starts is True
    with pytest.raises(
        ValueError,
        match=r"vLLM refuses tp=3 for Llama 3\.3 70B: ValueError: Total "
        r"number of attention heads \(64\) must be divisible",
    ):
        m.cache_bytes_per_token(3)
    by_hand = kv.Model("no query heads given", 10**9, 32, 8, 128)  # only its KV heads are known
    with pytest.raises(ValueError, match="AssertionError: 8 is not divisible by 3"):
        by_hand.cache_bytes_per_token(3)
    assert by_hand.cache_bytes_per_token(16) == by_hand.cache_bytes_per_token(8)
    with pytest.raises(ValueError, match=r"tp must be in 1\.\.64, got 0"):
        kv.memory_parts(90, tp=0)


def test_the_70b_launch_fails_as_vllm_0_33_words_it():
    s = startup(kv.H100_80GB, kv.LLAMA_33_70B, 92, 131_072, 3e9, tp=2)
    assert s.all_needed_bytes == 131_072 * 320 * 1024 == 40 * GIB
    error = s.error()
    assert "the model's max seq len (131072), (20.0 GiB KV cache is needed" in error
    assert "(which also controls CPU memory on the CPU backend)" in error
    assert error.endswith("conserving_memory/ for more details.")
    log = kv.read_vllm_log(error)
    assert (log.refused_len, log.needed_gib, log.available_gib, log.estimated_max_len) == (
        131_072,
        20.0,
        4.38,
        28_688,
    )
    assert log.available_gib == round((s.parts.pool_bytes - s.parts.block_bytes) / GIB, 2)
    auto = startup(kv.H100_80GB, kv.LLAMA_33_70B, 92, AUTO, 3e9, tp=2)
    assert auto.longest == 28_688 == 16 * (auto.blocks - 1) and auto.starts


def test_a_pool_below_one_block_is_no_available_memory():
    s = startup(kv.RTX_3090, kv.LLAMA_31_8B, 60, 4_096)  # the weights fit the card, not the share
    assert s.loads and s.parts.pool_bytes < 0 and not s.starts
    assert s.error().startswith("ValueError: No available memory for the cache blocks")
    assert kv.pool_tokens(-1e9, kv.LLAMA_31_8B) == 0


def test_dtypes():
    m = kv.LLAMA_31_8B
    assert m.with_dtypes(cache="fp8").bytes_per_token == m.bytes_per_token // 2
    assert m.with_dtypes(cache="fp8_e5m2").bytes_per_token == 65_536
    fp8 = kv.LLAMA_33_70B.with_dtypes(weights="fp8")
    assert fp8.weights_bytes == kv.LLAMA_33_70B.params
    assert fp8.bytes_per_token == kv.LLAMA_33_70B.bytes_per_token  # "auto" stays 16-bit
    assert fp8.with_dtypes(weights="fp8", cache="fp8").bytes_per_token == 160 * 1024
    assert m.with_dtypes(weights="bfloat16", cache="auto") == m
    with pytest.raises(ValueError, match="cache must be one of auto, bf16"):
        m.with_dtypes(cache="int4")
    with pytest.raises(TypeError, match="weights must be a precision name"):
        m.with_dtypes(weights=16)


def test_field_notes_follow_from_the_logged_figures():
    check = rig_measurements.rig_check()
    assert check.budget_gib == pytest.approx(0.9 * 23.58)
    assert check.non_cache_gib == pytest.approx(0.9 * 23.58 - 8.98 - 10.37)
    assert check.bytes_per_token == pytest.approx(10.37 * GIB / 652_346)
    assert check.log.concurrency_at(131_072) == pytest.approx(652_346 / 131_072)
    step = rig_measurements.august_step()
    assert step.long_concurrency == pytest.approx(623_721 / 262_144)
    # not halved: each request of the hybrid model also holds a fixed state; one pool and one
    # state give both logged figures
    assert step.ratio > 0.5 and step.state_tokens > 0
    assert step.concurrency_at(262_144) == pytest.approx(step.long_concurrency)
    idle = rig_measurements.idle_reading()
    assert idle.budget_mib == pytest.approx(0.9 * 23.58 * 1024)  # the share of cudaMemGetInfo's
    assert idle.budget_mib + idle.outside_mib == 22_112 and idle.of_card == pytest.approx(
        0.9, abs=1e-3
    )
    fmt = rig_measurements.k8v4_step()
    assert fmt.gain < fmt.bits_gain == pytest.approx(1 / 3)
    # k8v4's slot: 8-bit keys, 4-bit values, 4 bytes of scale and zero (turboquant config.py)
    assert k8v4_slot_bytes(128) == 196 and k8v4_slot_bytes(256) == 388
    assert fmt.layout_gain(128) < fmt.gain < fmt.layout_gain(256)


@pytest.mark.parametrize(
    "ctx, parallel, slot, n_ctx",
    [
        (98_304, 3, 32_768, 98_304),  # splits evenly: no padding shows
        (262_144, 10, 26_368, 263_680),  # 26,214 padded up to 103 x 256; the total grows
        (100, 3, 256, 768),  # the context padded to 256, each slot to 256 again
        (98_765, 8, 12_544, 100_352),
        (12_345, 1, 12_544, 12_544),
    ],
)
def test_llama_cpp_pads_and_splits(ctx, parallel, slot, n_ctx):
    context = llama_cpp_context(ctx, parallel)
    assert (context.per_slot, context.n_ctx, context.unified) == (slot, n_ctx, False)
    assert llama_cpp_slot_context(ctx, parallel) == slot


def test_llama_cpp_default_is_four_slots_sharing_the_whole_context():
    auto = llama_cpp_context(32_768)
    assert (auto.slots, auto.unified, auto.per_slot, auto.n_ctx) == (4, True, 32_768, 32_768)
    unified = llama_cpp_context(32_768, 8, kv_unified=True)
    assert (unified.per_slot, unified.n_ctx) == (32_768, 32_768)
    assert llama_cpp_context(262_144, 2, train_ctx=32_768).per_slot == 32_768


def test_other_servers():
    assert share_each(2) == 0.45 and share_each(3, 0.9) == 0.3
    b = cache_budgets(0.9, kv.H100_80GB, kv.LLAMA_31_8B, 3e9)
    assert b.vllm_bytes == pytest.approx(0.9 * MEASURED_H100 - 16_060_522_496 - 3e9)
    # TensorRT-LLM: a share of what is free after the weights and the warm-up's peak
    assert b.tensorrt_llm_bytes == pytest.approx(0.9 * (MEASURED_H100 - 16_060_522_496 - 3e9))
    sheet = cache_budgets(
        0.9, dataclasses.replace(kv.H100_80GB, measured_bytes=None), kv.LLAMA_31_8B, 3e9
    )
    assert round(sheet.tensorrt_llm_bytes / 1e9, 1) == 54.8  # the example on 80e9 bytes
    with pytest.raises(ValueError, match=r"parallel must be in 1 or more, got 0"):
        llama_cpp_slot_context(98_304, 0)
    with pytest.raises(ValueError, match=r"share must be a fraction in \(0, 1\], got 90"):
        share_each(2, 90)


def test_fp8_weights_keep_the_models_cache_unless_the_checkpoint_declares_one():
    fp8 = kv.LLAMA_31_8B.with_dtypes(weights="fp8")
    assert fp8.weights_bytes == kv.LLAMA_31_8B.params and fp8.bytes_per_token == 128 * 1024
    declared = kv.LLAMA_31_8B.with_dtypes(weights="fp8", declared_cache="fp8")
    assert declared.bytes_per_token == 64 * 1024
    chosen = kv.LLAMA_31_8B.with_dtypes(weights="fp8", cache="bf16", declared_cache="fp8")
    assert chosen.bytes_per_token == 128 * 1024  # an explicit choice wins over the checkpoint


def test_the_v1_defaults_by_card():
    h100, a100 = v1_defaults(kv.H100_80GB), v1_defaults(kv.A100_80GB)
    assert (
        h100.max_num_seqs,
        h100.max_num_batched_tokens,
        h100.max_num_batched_tokens_offline,
    ) == (1_024, 8_192, 16_384)
    assert (
        a100.max_num_seqs,
        a100.max_num_batched_tokens,
        a100.max_num_batched_tokens_offline,
    ) == (256, 2_048, 8_192)  # A100: by name
    assert v1_defaults(kv.RTX_3090).tier == v1_defaults(kv.A100_40GB).tier == "other"
    big = kv.GPU("B200", 192 * 10**9, 2.25e15, 8e12, measured_bytes=round(178 * GIB))
    assert (v1_defaults(big).max_num_batched_tokens, v1_defaults(big).max_num_seqs) == (
        16_384,
        1_024,
    )
    assert h100.prefix_caching and h100.chunked_prefill and h100.gpu_memory_utilization == 0.92


def test_the_notebooks_example_log_is_the_h100_launch_as_0_33_logs_it():
    """Notebook 5's paste-your-own example: the numbers of section 2's launch."""
    source = "".join(
        cell.source
        for cell in nbformat.read(
            REPO / "solutions" / "05_real_server" / "real_server.ipynb", as_version=4
        ).cells
        if "MY_LOG = " in cell.source
    )
    example = source.split('MY_LOG = """')[1].split('"""')[0]
    log = kv.read_vllm_log(example)
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B)
    assert log.weights_gib == round(kv.LLAMA_31_8B.weights_bytes / GIB, 2)
    assert log.kv_cache_gib == round(s.parts.pool_bytes / GIB, 2)
    assert (log.kv_tokens, log.concurrency_len) == (s.tokens, s.longest)
    assert log.max_concurrency == round(s.concurrency, 2)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: kv.pool_tokens("54.5 GB"),
            TypeError,
            r"pool_bytes must be a number >= 0, not str",
        ),
        (lambda: kv.pool_tokens(float("nan")), ValueError, r"pool_bytes must be a finite number"),
        (
            lambda: kv.pool_tokens(1e9, block_tokens=0),
            ValueError,
            r"block_tokens must be in 1 or more",
        ),
        (lambda: kv.pool_tokens(1e9, "LLAMA_31_8B"), TypeError, r"model must be a Model"),
        (
            lambda: kv.max_concurrency(416_096, 0),
            ValueError,
            r"longest must be in 1 or more, got 0",
        ),
        (lambda: kv.max_concurrency(-1, 8), ValueError, r"tokens must be in 0 or more, got -1"),
        (lambda: kv.max_concurrency(2.5, 8), ValueError, r"tokens must be a whole number"),
        (
            lambda: startup(kv.H100_80GB, kv.LLAMA_31_8B, 92, 0),
            ValueError,
            r"longest must be in 1 or more",
        ),
        (
            lambda: startup(kv.H100_80GB, kv.LLAMA_31_8B, 0.92),
            ValueError,
            r"share must be a whole number",
        ),
        (
            lambda: kv.Model("m", 10**9, 32, 8, 128, cache_bits=0),
            ValueError,
            r"cache_bits must be in 1\.\.32",
        ),
    ],
)
def test_bad_input_is_refused_with_its_range(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("share", [10, 30, 50, 92, 100])
@pytest.mark.parametrize(
    "model, tp", [(kv.LLAMA_31_8B, 1), (kv.LLAMA_33_70B, 2), (kv.LLAMA_33_70B, 4)]
)
def test_segments_tile_the_card(share, model, tp):
    parts = kv.memory_parts(share, kv.H100_80GB, model, 3e9, tp)
    segments = parts.segments()
    for (left, width), (next_left, _) in zip(segments, segments[1:]):
        assert left + width == pytest.approx(next_left) and width >= 0
    assert sum(width for _, width in segments) == pytest.approx(parts.gpu_bytes)


def test_weights_that_pass_the_card_stop_the_launch_before_the_check():
    s = startup(kv.RTX_3090, kv.LLAMA_33_70B, 90, 4_096)
    assert not s.loads and not s.starts
    assert s.error().startswith("torch.OutOfMemoryError: CUDA out of memory.")
    walked = walk(s)
    assert "the launch stops here" in walked and "**Check.**" not in walked


def test_max_model_len_minus_one_stops_at_the_models_own_length():
    """vLLM 0.33 starts -1 from the config's length and searches below it
    (config/model.py:2642-2652, kv_cache_planning.py:1337-1415)."""
    whole = startup(kv.H100_80GB, kv.LLAMA_31_8B, 92, AUTO)
    assert whole.longest == 131_072 < 16 * whole.usable_blocks == 451_616
    fitted = startup(kv.H100_80GB, kv.LLAMA_33_70B, 92, AUTO, tp=2)
    assert fitted.longest == 16 * fitted.usable_blocks == 28_688
    with pytest.raises(ValueError, match=r"vLLM refuses max_model_len=131073 for Llama 3\.1 8B"):
        startup(kv.H100_80GB, kv.LLAMA_31_8B, 92, 131_073)
