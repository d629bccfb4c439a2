"""Real vLLM start-up logs from public issues, held against the package.

tests/data/vllm_logs/ holds logs pasted into public GitHub issues and pull
requests, each with its link, the card, the model, the settings and, where
known, the vLLM version in sources.json (the notes say what was inferred and
how). For each log the package must:

1. read every figure the log gives, and nothing it does not (`expect`, typed
   in by eye from the log);
2. predict, from the logged cache memory and the model's config (`shape`), the
   tokens (or blocks) the log reports, within what the log's two-decimal GiB
   allows, and the concurrency it logs; and, from an error's available memory,
   the longest length it estimates and the memory one request needs;
3. where the log gives the card and the weights, account for the budget (the
   share of the card as vLLM measures it) with a remainder that is not negative:
   what profiling took for activations, CUDA graphs and workspace;
4. end every log in a verdict with its reason (`check_log`): predicted within the
   log's rounding, refused (and why vLLM stopped), cannot be predicted (and why:
   pages that are not 16 tokens, a hybrid model's state, ranks cut to the smallest),
   read with nothing to predict, or unread (and the line it could not read). No log
   of the corpus "disagrees": that verdict is for a wrong model or an edited log.
"""

from __future__ import annotations

import json

import pytest

import kvlesson as kv
from kvlesson.memory.log_check import check_log
from kvlesson.memory.specs import GIB, GPUS
from kvlesson.memory.units import format_gib
from kvlesson.memory.vllm_log import HALF_STEP
from support.paths import DATA

CORPUS = DATA / "vllm_logs"
SOURCES = json.loads((CORPUS / "sources.json").read_text())
BY_FILE = {entry["file"]: entry for entry in SOURCES}


def text_of(entry: dict) -> str:
    return (CORPUS / entry["file"]).read_text()


def model_of(entry: dict) -> kv.Model | None:
    """The model's cache as its config.json gives it (the weights do not matter here)."""
    shape = entry["shape"]
    if shape is None:
        return None
    return kv.Model(
        entry["model"],
        params=1,
        layers=shape["cache_layers"],
        kv_heads=shape["kv_heads"],
        head_size=shape["head_size"],
        bytes_per_number=shape["cache_bytes"],
        hybrid=shape.get("hybrid", False),
    )


def share_of(entry: dict, log: kv.VllmLog) -> int:
    """The share the log prints, else the one its command gives, else the version's default."""
    if log.share is not None:
        return round(100 * log.share)
    if entry["gpu_memory_utilization"] is not None:
        return round(100 * entry["gpu_memory_utilization"])
    return entry["share_assumed"]


def with_(key: str) -> list[str]:
    return [entry["file"] for entry in SOURCES if entry.get(key)]


# --- the corpus itself -------------------------------------------------------------------


def test_the_corpus_is_real_wide_and_listed():
    files = sorted(path.name for path in CORPUS.glob("*.log"))
    assert files == sorted(BY_FILE), "every log is listed in sources.json, and only those"
    assert len(SOURCES) >= 10
    assert all(entry["url"].startswith("https://github.com/") for entry in SOURCES)
    assert len({entry["gpu"] for entry in SOURCES}) >= 8
    assert len({entry["model"] for entry in SOURCES}) >= 10
    versions = {entry["vllm_version"] for entry in SOURCES if entry["vllm_version"]}
    assert len(versions) >= 5
    assert all(entry["notes"] for entry in SOURCES)


# --- 1. reading ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BY_FILE))
def test_the_package_reads_every_figure_the_log_gives(name):
    entry = BY_FILE[name]
    assert kv.read_vllm_log(text_of(entry)).found == entry["expect"]


# --- 2. predicting the pool from the logged cache memory ----------------------------------


def predicted_span(gib: float, model: kv.Model, tp: int) -> tuple[int, int]:
    """Tokens a pool of `gib` GiB (as logged, two decimals) holds, in whole blocks."""
    return (
        kv.pool_tokens((gib - HALF_STEP) * GIB, model, tp),
        kv.pool_tokens((gib + HALF_STEP) * GIB, model, tp),
    )


PREDICTABLE = [
    name
    for name in with_("shape")
    if not BY_FILE[name]["shape"].get("hybrid")
    and BY_FILE[name]["expect"].get("kv_cache_gib") is not None
    and BY_FILE[name]["expect"].get("gpu_blocks", BY_FILE[name]["expect"].get("kv_tokens"))
]


@pytest.mark.parametrize("name", PREDICTABLE)
def test_tokens_predicted_from_the_logged_cache_memory(name):
    entry = BY_FILE[name]
    log = kv.read_vllm_log(text_of(entry))
    low, high = predicted_span(log.kv_cache_gib, model_of(entry), entry["tp"])
    if entry["tp"] == 1:
        assert low <= log.tokens <= high
        check = check_log(log, kv.H100_80GB, 90, model_of(entry))  # the card plays no part here
        assert check.tokens_agree is True
    else:
        # vLLM cuts every rank to the smallest rank's blocks, and the log shows one rank's
        # memory: the tokens are at most what that memory holds.
        assert log.tokens <= high


@pytest.mark.parametrize(
    "name", [n for n in PREDICTABLE if BY_FILE[n]["expect"].get("max_concurrency")]
)
def test_concurrency_predicted_from_the_logged_cache_memory(name):
    entry = BY_FILE[name]
    log = kv.read_vllm_log(text_of(entry))
    low, high = predicted_span(log.kv_cache_gib, model_of(entry), entry["tp"])
    length = log.concurrency_len
    assert round(low / length, 2) <= log.max_concurrency <= round(high / length, 2)
    assert check_log(log, kv.H100_80GB, 90).concurrency_agree is True


@pytest.mark.parametrize(
    "name", [n for n in with_("shape") if BY_FILE[n]["expect"].get("estimated_max_len")]
)
def test_an_errors_estimate_and_need_follow_from_its_memory(name):
    """V1's start-up error: the memory one request of max_model_len needs, and the
    longest length the available memory holds."""
    entry = BY_FILE[name]
    log = kv.read_vllm_log(text_of(entry))
    model, tp = model_of(entry), entry["tp"]
    low, high = predicted_span(log.available_gib, model, tp)
    assert low <= log.estimated_max_len <= high
    one_request = kv.blocks_for(log.refused_len) * 16 * model.cache_bytes_per_token(tp)
    assert float(format_gib(one_request)) == log.needed_gib


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in BY_FILE
        if BY_FILE[n]["expect"].get("refused_len") and BY_FILE[n]["expect"].get("kv_tokens")
    ],
)
def test_a_v0_refusal_names_a_pool_smaller_than_one_request(name):
    log = kv.read_vllm_log(text_of(BY_FILE[name]))
    assert log.refused and log.tokens < log.refused_len and log.tokens % 16 == 0


def test_logs_that_agree_with_themselves():
    """Every log that gives its pool in tokens and its concurrency: the one follows from
    the other (tokens / max_model_len, two decimals), except a hybrid model's log from before
    vLLM 0.20.1, which logged its size per KV cache group; its verdict says so."""
    checked = 0
    for entry in SOURCES:
        log = kv.read_vllm_log(text_of(entry))
        if log.tokens is not None and log.max_concurrency is not None:
            check = check_log(log, kv.H100_80GB, 90)
            if log.hybrid and entry["vllm_version"] and entry["vllm_version"] < "0.20.1":
                assert check.concurrency_agree is False and "0.20.1" in check.reason
            else:
                assert check.concurrency_agree is True, entry["file"]
            checked += 1
    assert checked >= 3


# --- 3. the budget on the card as vLLM measures it -----------------------------------------

ACCOUNTED = [
    name
    for name in with_("card")
    if BY_FILE[name]["expect"].get("weights_gib")
    and BY_FILE[name]["expect"].get("kv_cache_gib") is not None
]


def test_enough_logs_give_card_weights_and_cache():
    assert len(ACCOUNTED) >= 5
    assert {BY_FILE[name]["card"] for name in ACCOUNTED} >= {"H100_80GB", "RTX_3090", "A100_40GB"}


@pytest.mark.parametrize("name", ACCOUNTED)
def test_check_log_accounts_for_the_budget_with_a_remainder_not_below_zero(name):
    entry = BY_FILE[name]
    log = kv.read_vllm_log(text_of(entry))
    gpu = GPUS[entry["card"]]
    check = check_log(log, gpu, share_of(entry, log), model_of(entry), entry["tp"])
    assert check.non_cache_gib >= 0
    if log.total_gib is not None:  # the log's own total is the card's measured one
        assert abs(log.total_gib - gpu.total_bytes / GIB) < 0.15


def test_the_remainder_is_what_profiling_logged():
    """pull 10511's H100 log gives its parts: budget - weights - cache = non-torch + activations."""
    entry = BY_FILE["20_h100_llama3_8b_v1_dev_profile.log"]
    check = check_log(kv.read_vllm_log(text_of(entry)), kv.H100_80GB, 90)
    assert check.non_cache_gib == pytest.approx(1.79 + 1.26, abs=0.02)


# --- 4. a verdict with its reason, for every log --------------------------------------------


def verdict_of(entry: dict) -> kv.LogCheck:
    log = kv.read_vllm_log(text_of(entry))
    card = GPUS[entry["card"]] if entry.get("card") else kv.H100_80GB
    return check_log(
        log, card, share_of(entry, log) if entry.get("card") else 90, model_of(entry), entry["tp"]
    )


# How the corpus's 35 logs end, counted: 2 predicted within the rounding of their logged
# cache memory, 23 refused with the reason vLLM stopped (three hybrid models past their Mamba
# cache blocks at the default max_num_seqs, 0.8.4's engine failing while it is built among
# them), 5 that cannot be predicted and say why (pages of 256 and 1,600 tokens, two hybrid
# models, ranks cut to the smallest), 4 read with nothing to hold a prediction against, 1
# unread with the line it could not read.
COUNTS = {"predicted": 2, "refused": 23, "cannot predict": 5, "read": 4, "unread": 1}


def test_every_log_ends_in_its_verdict_with_a_reason():
    verdicts = {}
    for entry in SOURCES:
        check = verdict_of(entry)
        assert check.verdict == entry["verdict"], (entry["file"], check.reason)
        assert len(check.reason) > 30 and check.reason.endswith("."), entry["file"]
        verdicts[check.verdict] = verdicts.get(check.verdict, 0) + 1
    assert verdicts == COUNTS


def test_no_log_of_the_corpus_is_called_wrong():
    assert not [entry["file"] for entry in SOURCES if verdict_of(entry).verdict == "disagrees"]


@pytest.mark.parametrize(
    "name, words",
    [
        ("23_4xtpu_v6e_tp4_pages256.log", "256 tokens, not 16"),
        ("24_h20_qwen35_27b_v0190_hybrid.log", "before vLLM 0.20.1"),
        ("25_2xrtx3090_qwen36_27b_fp8_hybrid_tp2.log", "fixed state per request"),
        ("26_gb10_qwen38_flash_next_page_alignment.log", "1,600 tokens"),
        ("05_4xh100_qwen3_235b_a22b_fp8_tp4.log", "smallest one's blocks"),
        ("22_2xa100_80gb_qwen3_omni_startup_error.log", "free memory below the share"),
        ("27_l40s_free_memory_below_share_v091.log", "free memory below the share"),
        ("29_93gib_card_oom_loading_weights.log", "out of memory"),
        ("30_8gpu_qwen25_72b_max_model_len_above_config.log", "longer than the model allows"),
        ("31_h100nvl_memory_profiling_assert_v0290.log", "memory profiling"),
        ("06_h100_gpt_oss_120b_negative_kv.log", "no room for a cache"),
        ("34_4xh100_sglang_wording_in_a_vllm_issue.log", "does not know"),
        (
            "35_b200_qwen35_mamba_blocks_worker_error.log",
            "max_num_seqs is 1,024 and the pool has 600 blocks",
        ),
        ("36_2xh100_nemotron_120b_mamba_blocks.log", "lower max_num_seqs to at most 524"),
        ("37_h100_qwen38_27b_mamba_blocks_v0280.log", "past the Mamba cache blocks"),
        ("38_phi4_mini_engine_core_hit_an_exception_v084.log", "engine failed to start"),
    ],
)
def test_the_reason_names_what_stops_a_prediction(name, words):
    assert words in verdict_of(BY_FILE[name]).reason
