"""Notebook 5's numbers, pinned as the seeds quote them, and the package calls behind them.

The figures come from issue 10 (seeds 001, 002, 003). Each is pinned twice:
as `real_server_numbers()` and `python -m kvlesson` write it, and, for the
formula-made ones, from first principles with the package's own calls.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import kvlesson as kv
from kvlesson.__main__ import TITLES
from kvlesson.lesson.real_server_numbers import real_server_numbers
from kvlesson.memory import rig_measurements
from kvlesson.memory.other_servers import cache_budgets, llama_cpp_slot_context, share_each
from kvlesson.memory.startup import AUTO, startup

REPO = Path(__file__).resolve().parents[1]
GIB = 2**30

QUOTED = {
    # seed 003: Llama 3.1 8B, BF16, one H100 at 0.92, 3 GB profiled
    "h100_budget": "73.6 GB", "h100_weights": "16.06 GB", "h100_pool": "54.5 GB",
    "h100_pool_gib": "50.8 GiB", "h100_per_token": "128 KiB", "h100_tokens_exact": "416,103",
    "h100_tokens": "416,096", "h100_one_chat": "16 GiB", "h100_starts": "starts",
    "h100_concurrency": "3.2", "h100_chats_4k": "101", "h100_busy_needs": "512 GiB",
    # seed 002: Qwen2.5 7B from its config
    "qwen_per_token": "57,344", "qwen_4k": "235 MB", "qwen_32k": "1.9 GB",
    # seed 001: the rig's log on two 3090s at 0.90
    "idle_used": "22,112 MiB of 24,576 MiB", "idle_share": "90.0%", "log_weights": "8.98 GiB", "log_cache": "10.37 GiB",
    "log_tokens": "652,346", "log_concurrency": "2.49x", "log_concurrency_agrees": "agrees",
    "log_budget": "21.6 GiB", "log_workspace": "2.25 GiB", "log_per_token": "17 KiB",
    "august_short": "4.48", "august_long": "2.38",
    # seed 003: Llama 3.3 70B on two H100s
    "tp2_budget": "141.2 GB", "tp2_weights": "141.1 GB", "tp2_pool": "0.09 GB",
    "tp2_needed": "40 GiB", "tp2_starts": "does not start", "tp2_95_pool": "4.9 GB",
    "tp2_95_tokens": "14,928", "tp2_fp8_pool": "70.6 GB", "tp2_fp8_tokens": "215,584",
    "tp2_fp8_concurrency": "1.6", "tp2_auto_len": "272",
    # seed 001: cache format and reserved buffers
    "k8v4_before": "623,721", "k8v4_after": "817,968", "k8v4_gain": "31.1%",
    "lora_eight_cache": "-0.48 GiB", "lora_eight_starts": "does not start",
    "lora_one_tokens": "89,979", "lora_none_tokens": "91,387", "lora_lost": "1,408",
    # seeds 001 and 003: other servers
    "llama_cpp_slot": "32,768", "two_servers_share": "0.45",
}


@pytest.fixture(scope="module")
def numbers():
    return real_server_numbers()


@pytest.fixture(scope="module")
def cli_json() -> dict:
    run = subprocess.run([sys.executable, "-m", "kvlesson", "--json"], cwd=REPO,
                         capture_output=True, text=True, timeout=300, check=True)
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
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B, 92, 131_072, reserve_bytes=3e9)
    assert s.parts.allowed_bytes == 73.6e9
    assert s.parts.pool_bytes == 73.6e9 - 3e9 - 8_030_261_248 * 2 == 54_539_477_504
    assert kv.LLAMA_31_8B.bytes_per_token == 2 * 32 * 8 * 128 * 2 == 128 * 1024
    assert kv.pool_tokens(s.parts.pool_bytes, kv.LLAMA_31_8B, block_tokens=1) == 54_539_477_504 // 131_072
    assert kv.pool_tokens(s.parts.pool_bytes, kv.LLAMA_31_8B) == 54_539_477_504 // (16 * 131_072) * 16
    assert s.needed_bytes == 131_072 * 131_072 == 16 * GIB
    assert s.starts and s.error() is None
    assert kv.max_concurrency(416_103, 131_072) == pytest.approx(3.1746, abs=1e-4)
    assert s.chats_at(4_096) == 26_006 // 256 == 101
    assert 1_024 * 4_096 * 131_072 == 512 * GIB


def test_qwen_from_its_config():
    config = {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
              "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
              "torch_dtype": "bfloat16", "model_type": "qwen2", "sliding_window": 131072,
              "use_sliding_window": False, "tie_word_embeddings": False}
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
    assert kv.room(92, 131_072, gpu=kv.H100_80GB, model=m, reserve_bytes=3e9, tp=2).starts is False
    assert kv.room(92, 131_072, gpu=kv.H100_80GB, model=m, reserve_bytes=3e9, tp=4).starts is True
    with pytest.raises(ValueError, match=r"vLLM refuses tp=3 for Llama 3\.3 70B: ValueError: Total "
                                         r"number of attention heads \(64\) must be divisible"):
        m.cache_bytes_per_token(3)
    by_hand = kv.Model("no query heads given", 10**9, 32, 8, 128)  # only its KV heads are known
    with pytest.raises(ValueError, match="AssertionError: 8 is not divisible by 3"):
        by_hand.cache_bytes_per_token(3)
    assert by_hand.cache_bytes_per_token(16) == by_hand.cache_bytes_per_token(8)
    with pytest.raises(ValueError, match=r"tp must be in 1\.\.64, got 0"):
        kv.memory_parts(90, tp=0)


def test_the_70b_launch_fails_as_vllm_words_it():
    s = startup(kv.H100_80GB, kv.LLAMA_33_70B, 92, 131_072, 3e9, tp=2)
    assert s.all_needed_bytes == 131_072 * 320 * 1024 == 40 * GIB
    log = kv.read_vllm_log(s.error())
    assert (log.refused_len, log.needed_gib, log.available_gib, log.estimated_max_len) == (
        131_072, 20.0, 0.04, 272)
    assert startup(kv.H100_80GB, kv.LLAMA_33_70B, 92, AUTO, 3e9, tp=2).longest == 272


def test_a_pool_below_zero_is_no_available_memory():
    s = startup(kv.RTX_3090, kv.LLAMA_33_70B, 90, 4_096)
    assert s.parts.pool_bytes < 0 and not s.starts
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
    assert check.budget_gib == pytest.approx(21.6)
    assert check.non_cache_gib == pytest.approx(21.6 - 8.98 - 10.37)
    assert check.bytes_per_token == pytest.approx(10.37 * GIB / 652_346)
    assert check.log.concurrency_at(131_072) == pytest.approx(652_346 / 131_072)
    step = rig_measurements.august_step()
    assert step.long_concurrency == pytest.approx(623_721 / 262_144)
    assert step.ratio > 0.5  # the pool grew a little between restarts
    fmt = rig_measurements.k8v4_step()
    assert fmt.gain < fmt.bits_gain == pytest.approx(1 / 3)


def test_other_servers():
    assert llama_cpp_slot_context(98_304, 3) == 32_768
    assert share_each(2) == 0.45 and share_each(3, 0.9) == 0.3
    b = cache_budgets(0.9, kv.H100_80GB, kv.LLAMA_31_8B, 3e9)
    assert b.vllm_bytes == pytest.approx(0.9 * 80e9 - 16_060_522_496 - 3e9)
    assert b.tensorrt_llm_bytes == pytest.approx(0.9 * (80e9 - 16_060_522_496))
    with pytest.raises(ValueError, match=r"parallel must be in 1 or more, got 0"):
        llama_cpp_slot_context(98_304, 0)
    with pytest.raises(ValueError, match=r"share must be a fraction in \(0, 1\], got 90"):
        share_each(2, 90)


@pytest.mark.parametrize("call, error, message", [
    (lambda: kv.pool_tokens("54.5 GB"), TypeError, r"pool_bytes must be a number >= 0, not str"),
    (lambda: kv.pool_tokens(float("nan")), ValueError, r"pool_bytes must be a finite number"),
    (lambda: kv.pool_tokens(1e9, block_tokens=0), ValueError, r"block_tokens must be in 1 or more"),
    (lambda: kv.pool_tokens(1e9, "LLAMA_31_8B"), TypeError, r"model must be a Model"),
    (lambda: kv.max_concurrency(416_096, 0), ValueError, r"longest must be in 1 or more, got 0"),
    (lambda: kv.max_concurrency(-1, 8), ValueError, r"tokens must be in 0 or more, got -1"),
    (lambda: kv.max_concurrency(2.5, 8), ValueError, r"tokens must be a whole number"),
    (lambda: startup(kv.H100_80GB, kv.LLAMA_31_8B, 92, 0), ValueError, r"longest must be in 1 or more"),
    (lambda: startup(kv.H100_80GB, kv.LLAMA_31_8B, 0.92), ValueError, r"share must be a whole number"),
    (lambda: kv.Model("m", 10**9, 32, 8, 128, cache_bits=0), ValueError, r"cache_bits must be in 1\.\.32"),
])
def test_bad_input_is_refused_with_its_range(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("share", [10, 30, 50, 92, 100])
@pytest.mark.parametrize("model, tp", [(kv.LLAMA_31_8B, 1), (kv.LLAMA_33_70B, 2), (kv.LLAMA_33_70B, 4)])
def test_segments_tile_the_card(share, model, tp):
    parts = kv.memory_parts(share, kv.H100_80GB, model, 3e9, tp)
    segments = parts.segments()
    for (left, width), (next_left, _) in zip(segments, segments[1:]):
        assert left + width == pytest.approx(next_left) and width >= 0
    assert sum(width for _, width in segments) == pytest.approx(parts.gpu_bytes)
