"""read_vllm_log on logs in the wording of several vLLM versions, and on what is not a log.

The logs below are written for these tests from vLLM's own format strings
(see kvlesson/memory/vllm_log.py); their figures are made consistent with Llama 3.1 8B
on an H100, so holding them against the model must agree.
"""

from __future__ import annotations

import dataclasses

import pytest

import kvlesson as kv
from kvlesson.memory import rig_measurements
from kvlesson.memory.log_check import VERDICTS, check_log

# V0, late 2024: weights in "GB" (really GiB), the profiler's budget line, GPU blocks.
V0_LOG = """\
INFO 12-22 10:55:20 config.py:510] This model supports multiple tasks.
INFO 12-22 10:55:34 model_runner.py:1097] Loading model weights took 14.9888 GB
INFO 12-22 10:55:36 worker.py:241] Memory profiling takes 1.69 seconds
INFO 12-22 10:55:36 worker.py:241] the current vLLM instance can use total_gpu_memory (79.10GiB) x gpu_memory_utilization (0.90) = 71.19GiB
INFO 12-22 10:55:36 worker.py:241] model weights take 14.99GiB; non_torch_memory takes 0.26GiB; PyTorch activation peak memory takes 1.23GiB; the rest of the memory reserved for KV Cache is 54.71GiB.
INFO 12-22 10:55:36 gpu_executor.py:76] # GPU blocks: 28011, # CPU blocks: 2048
INFO 12-22 10:55:36 gpu_executor.py:80] Maximum concurrency for 131072 tokens per request: 3.42x
"""
# V0, early 2025: "Model loading took ... GB", "# cuda blocks".
V0_CUDA_LOG = """\
INFO 05-30 06:40:49 model_runner.py:1115] Model loading took 14.9888 GB and 7.51 seconds
INFO 05-30 06:40:55 executor_base.py:110] # cuda blocks: 28011, # CPU blocks: 2048
INFO 05-30 06:40:55 executor_base.py:115] Maximum concurrency for 131072 tokens per request: 3.42x
"""
# V1, spring 2025: separate lines, thousands separators.
V1_LOG = """\
INFO 03-14 09:12:55 [gpu_model_runner.py:1289] Model loading took 14.9888 GiB and 13.204526 seconds
INFO 03-14 09:13:07 [gpu_worker.py:227] Memory profiling takes 11.85 seconds
INFO 03-14 09:13:07 [gpu_worker.py:227] Available KV cache memory: 54.62 GiB
INFO 03-14 09:13:08 [kv_cache_utils.py:566] GPU KV cache size: 447,440 tokens
INFO 03-14 09:13:08 [kv_cache_utils.py:570] Maximum concurrency for 131,072 tokens per request: 3.41x
"""
# V1 with two workers (TP=2), autumn 2025 (0.11.0's wording and line numbers): per-rank prefixes.
V1_TP_LOG = """\
(VllmWorker TP0 pid=311) INFO 10-21 00:34:02 [gpu_model_runner.py:2653] Model loading took 7.5019 GiB and 6.271 seconds
(VllmWorker TP1 pid=312) INFO 10-21 00:34:02 [gpu_model_runner.py:2653] Model loading took 7.5019 GiB and 6.302 seconds
(VllmWorker TP0 pid=311) INFO 10-21 00:34:31 [gpu_worker.py:298] Available KV cache memory: 57.80 GiB
(EngineCore_DP0 pid=268) INFO 10-21 00:34:31 [kv_cache_utils.py:1087] GPU KV cache size: 947,008 tokens
(EngineCore_DP0 pid=268) INFO 10-21 00:34:31 [kv_cache_utils.py:1091] Maximum concurrency for 131,072 tokens per request: 7.23x
"""
# Newest: the size and the concurrency on one line.
MERGED_LOG = """\
(EngineCore pid=258) INFO 11-02 08:01:11 [gpu_worker.py:440] Available KV cache memory: 50.79 GiB
(EngineCore pid=258) INFO 11-02 08:01:11 [kv_cache_utils.py:1708] GPU KV cache size: 416,096 tokens, Maximum concurrency for 131,072 tokens per request: 3.17x
"""
V1_ERROR = """\
(EngineCore_DP0 pid=268) INFO 10-21 00:35:03 [gpu_worker.py:298] Available KV cache memory: 8.04 GiB
(EngineCore_DP0 pid=268) ERROR 10-21 00:35:03 [core.py:708] ValueError: To serve at least one request with the models's max seq len (262144), (24.00 GiB KV cache is needed, which is larger than the available KV cache memory (8.04 GiB). Based on the available memory, the estimated maximum model length is 87840. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.
"""
V0_ERROR = (
    "ValueError: The model's max seq len (131072) is larger than the maximum number of "
    "tokens that can be stored in KV cache (41152). Try increasing "
    "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
)
NO_ROOM = """\
INFO [gpu_worker.py:440] Available KV cache memory: -0.48 GiB
ERROR [core.py:708] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.
"""
OTHER_SERVERS = {
    "llama.cpp": "llama_new_context_with_model: n_ctx      = 98304\n"
    "llama_kv_cache_init:      CUDA0 KV buffer size = 12288.00 MiB\n"
    "srv  load_model: n_slots = 3, n_ctx_slot = 32768\n",
    "sglang": "[2025-03-14 09:20:11] load_weight_end. type=Llama, dtype=torch.bfloat16, "
    "avail mem=63.12 GB, mem usage=15.06 GB.\n[2025-03-14 09:20:12] KV Cache is "
    "allocated. #tokens: 371661, K size: 12.74 GB, V size: 12.74 GB\n"
    "max_total_num_tokens=371661, chunked_prefill_size=8192\n",
    "tgi": "INFO text_generation_launcher: Setting max batch total tokens to 425440\n"
    "INFO text_generation_router: Connected\n",
}

EXPECTED = {
    "v0": (
        V0_LOG,
        dict(
            weights_gib=14.9888,
            kv_cache_gib=54.71,
            gpu_blocks=28_011,
            concurrency_len=131_072,
            max_concurrency=3.42,
            total_gib=79.10,
            share=0.90,
        ),
    ),
    "v0 cuda": (
        V0_CUDA_LOG,
        dict(weights_gib=14.9888, gpu_blocks=28_011, concurrency_len=131_072, max_concurrency=3.42),
    ),
    "v1": (
        V1_LOG,
        dict(
            weights_gib=14.9888,
            kv_cache_gib=54.62,
            kv_tokens=447_440,
            concurrency_len=131_072,
            max_concurrency=3.41,
        ),
    ),
    "v1 tp": (
        V1_TP_LOG,
        dict(
            weights_gib=7.5019,
            kv_cache_gib=57.80,
            kv_tokens=947_008,
            concurrency_len=131_072,
            max_concurrency=7.23,
        ),
    ),
    "merged": (
        MERGED_LOG,
        dict(kv_cache_gib=50.79, kv_tokens=416_096, concurrency_len=131_072, max_concurrency=3.17),
    ),
    "v1 error": (
        V1_ERROR,
        dict(
            kv_cache_gib=8.04,
            needed_gib=24.0,
            available_gib=8.04,
            estimated_max_len=87_840,
            refused_len=262_144,
        ),
    ),
    "v0 error": (V0_ERROR, dict(refused_len=131_072, kv_tokens=41_152)),
    "no room": (NO_ROOM, dict(kv_cache_gib=-0.48)),
    "seed 001": (
        rig_measurements.RIG_LOG,
        dict(
            weights_gib=8.98,
            kv_cache_gib=10.37,
            kv_tokens=652_346,
            concurrency_len=262_144,
            max_concurrency=2.49,
        ),
    ),
}


REFUSED = {
    "v1 error": "one request does not fit",
    "v0 error": "one request does not fit",
    "no room": "no room for a cache",
}


@pytest.mark.parametrize("name", EXPECTED)
def test_every_field_of_each_version(name):
    text, fields = EXPECTED[name]
    log = kv.read_vllm_log(text)
    assert log.found == fields
    assert (log.refusal.name if log.refusal else None) == REFUSED.get(name)
    assert not log.hybrid and not log.tpu and log.unknown == ()


@pytest.mark.parametrize("name", EXPECTED)
def test_windows_line_ends_read_the_same(name):
    text, _ = EXPECTED[name]
    assert kv.read_vllm_log(text.replace("\n", "\r\n")) == kv.read_vllm_log(text)


@pytest.mark.parametrize(
    "line, weights",
    [
        ("INFO model_runner.py:1097] Loading model weights took 12.5523 GB", 12.5523),
        ("INFO model_runner.py:1097] Loading model weights took 12.5523 GiB", 12.5523),
        ("INFO model_runner.py:1115] Model loading took 8.6253 GB and 7.67 seconds", 8.6253),
    ],
)
def test_every_wording_of_the_weights(line, weights):
    assert kv.read_vllm_log(line).weights_gib == weights


def test_refused_starts():
    assert kv.read_vllm_log(V1_ERROR).refused and kv.read_vllm_log(V0_ERROR).refused
    assert kv.read_vllm_log(NO_ROOM).refused
    assert not kv.read_vllm_log(V1_LOG).refused


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\n",
        "hello\nworld",
        "\x00\xff garbage \ufffd" * 50,
        "GPU KV cache size",
        "Maximum concurrency for tokens per request: x",
        "Available KV cache memory: lots GiB",
        *OTHER_SERVERS.values(),
    ],
    ids=[
        "empty",
        "blank",
        "words",
        "binary",
        "bare words",
        "no numbers",
        "not a number",
        *OTHER_SERVERS,
    ],
)
def test_what_is_not_a_vllm_log_gives_every_field_none(text):
    log = kv.read_vllm_log(text)
    assert log.found == {} and not log.refused
    check = check_log(log, kv.H100_80GB, 90, kv.LLAMA_31_8B)
    assert check.verdict == "unread" and check.reason.startswith("no figure read")
    if text in OTHER_SERVERS.values():  # another server's cache lines, named, not skipped silently
        assert log.unknown and "does not know" in check.reason


@pytest.mark.parametrize(
    "cut",
    [
        "Available KV cache memory: 54.6",
        "GPU KV cache size: 447,4",
        "Maximum concurrency for 131,072 tokens per request: 3.4",
        "Model loading took 14.98",
        "# GPU blocks: 2801",
        "the estimated maximum model length is 878",
    ],
)
def test_a_log_cut_inside_a_number_gives_none_not_a_wrong_number(cut):
    log = kv.read_vllm_log(cut)
    wrong = {name: value for name, value in log.found.items() if name != "concurrency_len"}
    assert wrong == {}


def test_a_truncated_log_keeps_what_it_had():
    cut = V1_LOG[: V1_LOG.index("GPU KV cache size") + 24]
    log = kv.read_vllm_log(cut)
    assert (log.weights_gib, log.kv_cache_gib, log.kv_tokens, log.max_concurrency) == (
        14.9888,
        54.62,
        None,
        None,
    )


@pytest.mark.parametrize("value", [None, 652_346, b"GPU KV cache size: 1 tokens", ["log"]])
def test_a_non_string_is_a_type_error(value):
    with pytest.raises(TypeError, match="text must be the log as a str"):
        kv.read_vllm_log(value)


def test_bytes_get_a_hint():
    with pytest.raises(TypeError, match=r"decode bytes first"):
        kv.read_vllm_log(b"log")


@pytest.mark.parametrize("name, share", [("v1", 90), ("merged", 92)])
def test_logs_of_llama_8b_agree_with_the_model(name, share):
    check = check_log(kv.read_vllm_log(EXPECTED[name][0]), kv.H100_80GB, share, kv.LLAMA_31_8B)
    assert check.tokens_agree is True and check.concurrency_agree is True
    low, high = check.tokens_range
    assert low <= check.predicted_tokens <= high


def test_a_log_of_another_model_disagrees():
    check = check_log(kv.read_vllm_log(V1_LOG), kv.H100_80GB, 90, kv.QWEN25_7B)
    assert check.tokens_agree is False


def test_a_log_whose_concurrency_does_not_follow_from_its_tokens():
    log = dataclasses.replace(kv.read_vllm_log(V1_LOG), max_concurrency=3.5)
    assert check_log(log, kv.H100_80GB, 90).concurrency_agree is False


def test_the_seed_log_against_its_rig():
    check = rig_measurements.rig_check()
    assert check.budget_gib == pytest.approx(0.9 * 23.58)  # the 3090 as vLLM measures it
    assert round(check.non_cache_gib, 2) == 1.87
    assert round(check.bytes_per_token / 1024) == 17
    assert check.predicted_tokens is None and check.tokens_agree is None


def test_check_log_refuses_bad_input():
    log = kv.read_vllm_log(V1_LOG)
    with pytest.raises(TypeError, match="log must be a VllmLog"):
        check_log(V1_LOG, kv.H100_80GB, 90)
    with pytest.raises(ValueError, match=r"share must be in 1\.\.100, got 0"):
        check_log(log, kv.H100_80GB, 0)
    with pytest.raises(TypeError, match="model must be a Model"):
        check_log(log, kv.H100_80GB, 90, model="LLAMA_31_8B")


# --- wordings of other versions, from real logs (tests/data/vllm_logs) ---------------------


@pytest.mark.parametrize(
    "line, fields",
    [
        # 0.6.4's one-line profiler result, and a post that dropped the "# " of the block count
        (
            "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
            "peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
            "kv_cache_size=3.81GiB gpu_memory_utilization=0.90\nGPU blocks: 1952, # CPU blocks: 2048\n",
            dict(total_gib=23.58, kv_cache_gib=3.81, share=0.9, gpu_blocks=1952),
        ),
        # a development build's table of the profile
        (
            "worker.py:243] total_gpu_memory     79.22GiB\nworker.py:243] gpu_memory_utilization"
            "       0.90\nworker.py:243] available_kv_cache_memory    53.29GiB\n",
            dict(total_gib=79.22, share=0.9, kv_cache_gib=53.29),
        ),
        # V1's start-up check (0.9 to 0.33): cudaMemGetInfo's total and the share asked for
        (
            "ValueError: Free memory on device cuda:0 (0.49/79.32 GiB) on startup is less than desired "
            "GPU memory utilization (0.6, 47.59 GiB). Decrease GPU memory utilization",
            dict(total_gib=79.32, share=0.6),
        ),
        (
            "INFO [gpu_worker.py:391] Free memory on device (139.21/139.81 GiB) on startup. Desired GPU "
            "memory utilization is (0.9, 125.83 GiB). Actual usage is 74.28 GiB for weight",
            dict(total_gib=139.81, share=0.9),
        ),
    ],
)
def test_the_budget_in_every_wording(line, fields):
    assert kv.read_vllm_log(line).found == fields


def test_a_share_named_in_an_error_hint_is_not_a_share():
    assert (
        kv.read_vllm_log(
            "Try increasing `gpu_memory_utilization` when initializing the engine."
        ).share
        is None
    )


def test_zero_blocks_is_a_refused_start():
    assert kv.read_vllm_log("INFO llm_engine.py:275] # GPU blocks: 0, # CPU blocks: 256\n").refused


def test_the_budget_is_a_share_of_the_measured_card():
    """vLLM takes its share of cudaMemGetInfo's total: 0.9 of 79.22 GiB on an H100, not of
    the data sheet's 80e9 bytes (74.5 GiB), which leaves a real log a negative remainder."""
    log = kv.read_vllm_log("model weights take 14.96GiB\navailable_kv_cache_memory 53.29GiB\n")
    check = check_log(log, kv.H100_80GB, 90)
    assert check.budget_gib == pytest.approx(0.9 * 79.22, abs=1e-9)
    assert check.non_cache_gib == pytest.approx(3.04, abs=0.01)
    nominal = dataclasses.replace(kv.H100_80GB, measured_bytes=None)
    assert check_log(log, nominal, 90).non_cache_gib < 0


# --- refusals: every start-up refusal wording of vLLM 0.6 to 0.33 ---------------------------
# Each line is the format string of the release named, filled in (wheels read: see
# kvlesson/memory/log_wordings.py); the name is the refusal the reader must call it.
REFUSAL_LINES = [
    (
        "0.6.0 V0, worker.py:471",
        "ValueError: No available memory for the cache blocks. Try "
        "increasing `gpu_memory_utilization` when initializing the engine.",
        "no room for a cache",
    ),
    (
        "0.33.0, kv_cache_planning.py:58",
        "ValueError: No available memory for the cache blocks. "
        "Try increasing `gpu_memory_utilization` when initializing the engine (this flag also "
        "controls CPU memory reservation on the CPU backend, despite its name).",
        "no room for a cache",
    ),
    (
        "0.6.0 V0, worker.py:476",
        "ValueError: The model's max seq len (32768) is larger than the "
        "maximum number of tokens that can be stored in KV cache (24320). Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        "one request does not fit",
    ),
    (
        "0.7.3 V1, kv_cache_utils.py:466",
        "ValueError: To serve at least one request with the "
        "models's max seq len (131072), (16.00 GB KV cache is needed, which is larger than the "
        "available KV cache memory (9.50 GB). Try increasing `gpu_memory_utilization` or "
        "decreasing `max_model_len` when initializing the engine.",
        "one request does not fit",
    ),
    (
        "0.33.0, kv_cache_planning.py:78",
        "ValueError: To serve at least one request with the "
        "model's max seq len (131072), (20.0 GiB KV cache is needed, which is larger than the "
        "available KV cache memory (4.38 GiB). Based on the available memory, the estimated "
        "maximum model length is 28688.",
        "one request does not fit",
    ),
    (
        "0.9.2, gpu_worker.py:146",
        "ValueError: Free memory on device (7.34/139.72 GiB) on "
        "startup is less than desired GPU memory utilization (0.9, 125.75 GiB). Decrease GPU "
        "memory utilization or reduce GPU memory used by other processes.",
        "free memory below the share",
    ),
    (
        "0.33.0, utils.py:742",
        "ValueError: Free memory on device cuda:0 (20.00/79.22 GiB) on "
        "startup is less than the engine's budget after excluding external process's weights "
        "(0.9, 50.0 GiB).",
        "free memory below the share",
    ),
    (
        "0.6.0 V0, worker.py:232",
        "AssertionError: Error in memory profiling. Initial free memory "
        "2000000, current free memory 3000000. This happens when the GPU memory was not properly "
        "cleaned up before initializing the vLLM instance.",
        "memory profiling",
    ),
    (
        "0.14.0, kv_cache_utils.py:1427",
        "ValueError: Cannot auto-fit max_model_len: not enough "
        "GPU memory available to serve even a single token. Try increasing "
        "`gpu_memory_utilization`.",
        "auto-fit found no room",
    ),
    (
        "0.6.0, config.py:1764",
        "ValueError: User-specified max_model_len (262144) is greater "
        "than the derived max_model_len (max_position_embeddings=131072 or model_max_length=None "
        "in model's config.json). This may lead to incorrect model outputs or CUDA errors.",
        "longer than the model allows",
    ),
    (
        "0.33.0, config/model.py:1557",
        "ValueError: Total number of attention heads (64) must be "
        "divisible by tensor parallel size (3).",
        "tensor parallel",
    ),
    (
        "PyTorch's allocator",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        "896.00 MiB. GPU 0 has a total capacity of 79.22 GiB of which 12.00 MiB is free.",
        "out of memory",
    ),
    (
        "0.33.0, core.py:1584",
        "ERROR [core.py:1584] EngineCore failed to start.",
        "engine failed to start",
    ),
    (
        "0.33.0, multiproc_executor.py:891",
        "Exception: WorkerProc initialization failed due to an exception in a background "
        "process. See stack trace for root cause.",
        "engine failed to start",
    ),
    (
        "0.8.4, core.py:387 (V1 before 0.8.5)",
        "ERROR [core.py:387] EngineCore hit an exception: Traceback (most recent call last):\n"
        'ERROR [core.py:387]   File "vllm/v1/engine/core.py", line 378, in run_engine_core\n'
        "ERROR [core.py:387]     engine_core = EngineCoreProc(*args, **kwargs)\n",
        "engine failed to start",
    ),
    (
        "0.33.0, compilation.py:1525",
        "ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (856). Each "
        "decode sequence requires one Mamba cache block, so CUDA graph capture cannot "
        "proceed. Please lower max_num_seqs to at most 856 or increase gpu_memory_utilization.",
        "max_num_seqs past the Mamba cache blocks",
    ),
    (
        "0.33.0, scheduler.py:332",
        "ValueError: max_num_batched_tokens (256) must be greater than or equal to "
        "max_num_seqs (1024).",
        "token budget below max_num_seqs",
    ),
    (
        "0.33.0, scheduler.py:322",
        "ValueError: max_num_batched_tokens (8192) is smaller than max_model_len (131072). "
        "This effectively limits the maximum sequence length to max_num_batched_tokens and "
        "makes vLLM reject longer sequences.",
        "token budget below max_model_len",
    ),
    (
        "0.33.0, cache.py:215 (pydantic)",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig\n"
        "gpu_memory_utilization\n  Input should be less than or equal to 1 [type=less_than_equal, "
        "input_value=90.0, input_type=float]",
        "share out of range",
    ),
    (
        "0.33.0, linear.py:1063 (divide)",
        "AssertionError: 8 is not divisible by 6",
        "tensor parallel",
    ),
]


@pytest.mark.parametrize("where, line, name", REFUSAL_LINES, ids=[r[0] for r in REFUSAL_LINES])
def test_every_refusal_wording_is_a_refusal_with_its_reason(where, line, name):
    log = kv.read_vllm_log(line)
    assert log.refused and log.refusal.name == name
    check = check_log(log, kv.H100_80GB, 90, kv.LLAMA_31_8B)
    assert check.verdict == "refused" and f"({name})" in check.reason


def test_the_packages_own_errors_read_as_the_refusals_they_are():
    """What `startup` says when it refuses is what the reader calls a refusal."""
    from kvlesson.memory.startup import startup

    for launch in (
        startup(kv.H100_80GB, kv.LLAMA_33_70B, tp=2),
        startup(kv.H100_80GB, kv.LLAMA_33_70B, longest=4_096),
        startup(kv.RTX_3090, kv.LLAMA_31_8B, 60, 4_096),
    ):
        assert kv.read_vllm_log(launch.error()).refused, launch.error()[:60]
    with pytest.raises(ValueError) as refused:
        startup(kv.H100_80GB, kv.LLAMA_31_8B, longest=262_144)
    assert kv.read_vllm_log(str(refused.value)).refusal.name == "longer than the model allows"


def test_a_specific_reason_wins_over_the_engines_bare_failure():
    log = kv.read_vllm_log(
        NO_ROOM.replace(
            "ValueError: No available memory for the cache "
            "blocks. Try increasing `gpu_memory_utilization` "
            "when initializing the engine.",
            "EngineCore failed to start.",
        )
    )
    assert log.why_refused().startswith("vLLM stopped at start-up (no room for a cache)")


# --- verdicts: a log that cannot be predicted says why ------------------------------------


def test_pages_that_are_not_16_tokens_are_named():
    log = kv.read_vllm_log(
        "INFO [runner.py:237] Init kv-cache | shape=32 * (100, 256, 16, "
        "128)\nGPU KV cache size: 25,600 tokens\n"
    )
    assert log.page_tokens == 256 and log.tpu is False
    check = check_log(log, kv.H100_80GB, 90, kv.LLAMA_31_8B)
    assert check.verdict == "cannot predict" and "256 tokens, not 16" in check.reason


def test_a_tpu_without_its_page_size_is_named():
    log = kv.read_vllm_log("INFO [tpu_worker.py:100] TPU v5e\nGPU KV cache size: 25,600 tokens\n")
    check = check_log(log, kv.H100_80GB, 90, kv.LLAMA_31_8B)
    assert check.verdict == "cannot predict" and "TPU" in check.reason


def test_a_hybrid_model_is_named_by_its_log_or_by_the_model():
    log = kv.read_vllm_log(
        V1_LOG + "INFO [interface.py:915] Setting attention block size to "
        "784 tokens to ensure that attention page size is >= mamba page "
        "size.\n"
    )
    assert log.hybrid and log.page_tokens == 784
    assert "hybrid" in check_log(log, kv.H100_80GB, 90, kv.LLAMA_31_8B).reason
    hybrid = dataclasses.replace(kv.LLAMA_31_8B, hybrid=True)
    check = check_log(kv.read_vllm_log(V1_LOG), kv.H100_80GB, 90, hybrid)
    assert check.verdict == "cannot predict" and "fixed state per request" in check.reason


def test_a_wrong_model_disagrees_with_a_reason_that_names_the_numbers():
    check = check_log(kv.read_vllm_log(V1_LOG), kv.H100_80GB, 90, kv.QWEN25_7B)
    assert check.verdict == "disagrees"
    assert "447,440" in check.reason and "check the model" in check.reason


def test_a_size_that_is_not_concurrency_times_length_gives_both_reasons():
    log = dataclasses.replace(kv.read_vllm_log(V1_LOG), max_concurrency=3.5)
    check = check_log(log, kv.H100_80GB, 90)
    assert check.verdict == "disagrees" and "before vLLM 0.20.1" in check.reason


def test_a_right_model_is_predicted():
    check = check_log(kv.read_vllm_log(MERGED_LOG), kv.H100_80GB, 92, kv.LLAMA_31_8B)
    assert check.verdict == "predicted" and "416,096" in check.reason


def test_every_verdict_has_a_reason():
    logs = [text for text, _ in EXPECTED.values()] + [line for _, line, _ in REFUSAL_LINES]
    for text in logs + list(OTHER_SERVERS.values()):
        for model in (None, kv.LLAMA_31_8B):
            check = check_log(kv.read_vllm_log(text), kv.H100_80GB, 90, model)
            assert check.verdict in VERDICTS and len(check.reason) > 20


def test_a_hybrid_models_refusal_gives_its_numbers_and_what_to_do():
    """vLLM 0.33 refuses a hybrid model whose pool has fewer blocks than max_num_seqs while
    full CUDA graphs are captured (its default): the reader names it with both numbers,
    also inside the executor's "Worker failed with error '...'"."""
    line = next(line for where, line, _ in REFUSAL_LINES if "compilation.py" in where)
    wrapped = f"RuntimeError: Worker failed with error '{line[12:]}', please check the stack"
    for text in (line, wrapped):
        log = kv.read_vllm_log(text)
        assert (log.max_num_seqs, log.mamba_blocks) == (1024, 856)
        assert log.found == {"max_num_seqs": 1024, "mamba_blocks": 856}
        reason = check_log(log, kv.H100_80GB, 95).reason
        assert "max_num_seqs is 1,024 and the pool has 856 blocks" in reason
        assert "lower max_num_seqs to at most 856" in reason


@pytest.mark.parametrize(
    "text",
    [
        "ValueError: Some check vLLM 0.34 added (1024 > 856).",
        "ERROR [core.py:1584] RuntimeError: CUDA error: an illegal memory access was encountered",
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        "unhandled cuda error",
        V1_LOG + "KeyError: 'model.layers.0.mlp.experts.w13_weight'",
    ],
    ids=["new check", "illegal access", "nccl", "after the figures"],
)
def test_an_error_in_an_unknown_wording_is_said_to_be_unknown_never_not_a_log(text):
    """Issue 38: a start-up refusal this reader does not know is never "nothing here is a
    vLLM start-up log": the verdict says it does not know the wording, and quotes the line."""
    check = check_log(kv.read_vllm_log(text), kv.H100_80GB, 90, kv.LLAMA_31_8B)
    assert check.verdict == "unread"
    assert "does not know" in check.reason and "nothing here" not in check.reason
    assert text.strip().splitlines()[-1][:40] in check.reason


def test_an_engine_failing_in_its_running_loop_is_not_a_start_up_refusal():
    """0.8.4's "EngineCore hit an exception" is a start-up refusal only when the traceback
    runs through EngineCoreProc(...): in the running loop, the server had started."""
    running = (
        "ERROR [core.py:291] EngineCore hit an exception: Traceback (most recent call last):\n"
        'ERROR [core.py:291]   File "vllm/v1/engine/core.py", line 284, in run_engine_core\n'
        "ERROR [core.py:291]     engine_core.run_busy_loop()\n"
        "ERROR [core.py:291] IndexError: index 4 is out of bounds for dimension 1\n"
    )
    log = kv.read_vllm_log(running)
    assert not log.refused and log.errors
    assert check_log(log, kv.H100_80GB, 90).verdict == "unread"


def test_the_launchs_cap_is_read_from_its_arguments():
    log = kv.read_vllm_log("non-default args: {'model': 'x', 'max_num_seqs': 2, 'tp': 2}")
    assert log.max_num_seqs == 2
