"""docs/fidelity.md, read as a table and held to the package.

Every row says what the course teaches about a real server, what the server
does, where in its source and since which version, and whether the course
matches or simplifies it (and then where it says so). A row marked *pinned*
has a check here: the package must compute what the row says the server
does, and the row must give the numbers the package uses.
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

import kvlesson as kv
from kvlesson.memory import rig_measurements, vllm_defaults
from kvlesson.memory.floor import BLOCK_TOKENS
from kvlesson.memory.hf_config import derived_context
from kvlesson.memory.log_wordings import REFUSALS
from kvlesson.memory.other_servers import cache_budgets, llama_cpp_context, share_each, tgi_kv_bytes
from kvlesson.memory.precision import k8v4_gain_over_fp8, k8v4_slot_bytes, precisions
from kvlesson.memory.specs import GIB
from kvlesson.memory.startup import AUTO, startup
from kvlesson.serving.latency import Spread
from kvlesson.serving.settings import FIRST_CHUNK, WHOLE_PROMPT, make_setup
from support.paths import ROOT

DOC = ROOT / "docs" / "fidelity.md"
COLUMNS = ["id", "rule or number", "the course says", "the server does", "source", "fidelity"]


def rows() -> dict[str, dict[str, str]]:
    """Every table row of the document, by its id."""
    found = {}
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not re.fullmatch(r"[VSMO]\d+", cells[0]):
            continue
        assert len(cells) == len(COLUMNS), f"row {cells[0]} has {len(cells)} cells"
        assert cells[0] not in found, f"row {cells[0]} twice"
        found[cells[0]] = dict(zip(COLUMNS, cells))
    return found


ROWS = rows()


def row_text(key: str) -> str:
    return " ".join(ROWS[key].values())


# --- the table's shape ----------------------------------------------------------------------


def test_every_row_names_its_source_version_and_verdict():
    assert len(ROWS) >= 30
    for key, row in ROWS.items():
        source = row["source"]
        assert re.search(r"[\w/]+\.(py|cpp|h|rs)|seed 001|n/a|tests/data", source), key
        assert re.search(r"\d+\.\d+|seed 001|n/a", source), f"{key}: no version"
        verdict = row["fidelity"]
        assert verdict.startswith(("matches", "simplifies", "notebooks", "the course's own")), key
        if "simplif" in verdict:
            assert "(" in verdict, f"{key}: a simplification must say where the course says so"


def test_the_rules_of_notebooks_5_and_6_are_all_there():
    text = DOC.read_text()
    for topic in (
        "cudaMemGetInfo",
        "gpu_memory_utilization",
        "null block",
        "max_model_len=-1",
        "Maximum concurrency",
        "GPU KV cache size",
        "tensor parallel",
        "FP8",
        "k8v4",
        "max_num_batched_tokens",
        "max_num_seqs",
        "prefix caching",
        "chunked prefill",
        "free_gpu_memory_fraction",
        "llama.cpp",
        "TGI",
        "admitting a waiting request",
        "preemption",
        "Preemptions: N",
        "TPOT",
        "ITL",
        "percentile",
        "token budget",
        "long_prefill_token_threshold",
    ):
        assert topic in text, topic
    assert "0.33.0" in text


# --- the pinned rows, computed --------------------------------------------------------------


def check_v1():
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B)
    assert s.parts.gpu_bytes == kv.H100_80GB.total_bytes != kv.H100_80GB.memory_bytes
    assert kv.memory_parts(90).gpu_bytes == 80 * 10**9  # notebooks 1-4: the data sheet's


def check_v2():
    for card, gib in (
        (kv.H100_80GB, "79.22"),
        (kv.A100_80GB, "79.32"),
        (kv.A100_40GB, "39.38"),
        (kv.RTX_3090, "23.58"),
    ):
        assert card.measured_bytes == round(float(gib) * GIB) and f"{gib} GiB" in row_text("V2")


def check_v3():
    assert vllm_defaults.SHARE_DEFAULT == 92 and vllm_defaults.SHARE_BEFORE_0_20 == 90
    assert vllm_defaults.v1_defaults(kv.H100_80GB).gpu_memory_utilization == 0.92
    assert "0.92" in row_text("V3") and "0.90" in row_text("V3") and "0.20" in row_text("V3")


def check_v5():
    assert vllm_defaults.CUDA_GRAPH_ESTIMATE_SINCE == "0.20.0"
    assert "0.20.0" in row_text("V5") and "since 0.21" not in row_text("V5")


def check_v6():
    assert BLOCK_TOKENS == vllm_defaults.BLOCK_SIZE == 16 and "16" in row_text("V6")


def check_v7():
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B)
    assert s.blocks == int(s.parts.pool_bytes // (16 * kv.LLAMA_31_8B.bytes_per_token))


def check_v8():
    model = kv.LLAMA_31_8B
    need = kv.blocks_for(8_192) * 16 * model.bytes_per_token
    card = kv.GPU("edge", 10**11, 1e14, 1e12, measured_bytes=model.weights_bytes + 3 * 10**9 + need)
    s = startup(card, model, 100, 8_192)
    assert s.blocks == kv.blocks_for(8_192) and not s.starts and s.usable_blocks == s.blocks - 1
    assert vllm_defaults.NULL_BLOCK_SINCE in row_text("V8")


def check_v9():
    fails = startup(kv.H100_80GB, kv.LLAMA_33_70B, tp=2).error()
    assert "To serve at least one request with the model's max seq len (131072)" in fails
    # Llama 3.1 8B fits a 3090, but 60% of it leaves no room past the weights and 3 GB
    assert (
        "No available memory for the cache blocks"
        in startup(kv.RTX_3090, kv.LLAMA_31_8B, 60, 4_096).error()
    )
    assert "No available memory for the cache blocks" in row_text("V9")


def check_v10():
    auto = startup(kv.H100_80GB, kv.LLAMA_33_70B, longest=AUTO, tp=2)
    assert auto.longest == 16 * (auto.blocks - 1) == 28_688 and auto.starts
    whole = startup(kv.H100_80GB, kv.LLAMA_31_8B, longest=AUTO)
    assert 16 * (whole.blocks - 1) == 451_616 > whole.longest == kv.LLAMA_31_8B.context == 131_072
    assert "16 x (blocks - 1)" in row_text("V10") and "131,072" in row_text("V10")


def check_v11():
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B, longest=100_001)
    assert s.concurrency == s.blocks / -(-100_001 // 16)


def check_v12():
    s = startup(kv.H100_80GB, kv.LLAMA_31_8B, longest=100_001)
    assert s.tokens == int(s.concurrency * 100_001) < 16 * s.blocks
    assert vllm_defaults.TOKENS_AS_CONCURRENCY_SINCE in row_text("V12")


def check_v13():
    m = kv.LLAMA_33_70B
    assert m.kv_heads_per_gpu(2) == 4 and m.kv_heads_per_gpu(16) == 1
    assert startup(kv.H100_80GB, m, tp=2).parts.weights_bytes == -(-m.weights_bytes // 2)
    with pytest.raises(
        ValueError,
        match=r"Total number of attention heads \(64\) must be "
        r"divisible by tensor parallel size \(3\)",
    ):
        m.kv_heads_per_gpu(3)
    assert kv.QWEN25_7B.tp_refusal(8) == (
        "ValueError: Total number of attention heads (28) "
        "must be divisible by tensor parallel size (8)."
    )
    assert kv.QWEN25_7B.tp_refusal(4) is None  # 28 heads over 4, one KV head each
    with pytest.raises(ValueError, match="Total number of attention heads"):
        startup(kv.H100_80GB, kv.QWEN25_7B, tp=8)
    # the MLP is split too: 28 GPUs take Qwen2.5 7B's heads (one KV head copied to 7 each),
    # not its MLP of 18,944 (the audit's Qwen2.5-14B at tp=40 likewise: 13,824 rows)
    assert kv.QWEN25_7B.mlp_size == 18_944 and "18,944" in row_text("V13")
    assert kv.QWEN25_7B.tp_refusal(28) == (
        "AssertionError: 18944 is not divisible by 28 (the MLP's 18,944 rows cannot be split "
        "evenly over tp=28 GPUs)"
    )
    qwen_14b = dataclasses.replace(kv.QWEN25_7B, heads=40, kv_heads=8, mlp_size=13_824)
    assert "13824 is not divisible by 40" in qwen_14b.tp_refusal(40)
    for m in (kv.LLAMA_31_8B, kv.LLAMA_33_70B):  # the course's other models: every split of
        assert all(m.tp_refusal(tp) is None for tp in (1, 2, 4, 8))  # their heads also splits
    assert "MLP" in row_text("V13") and "linear.py:497-502" in row_text("V13")


def check_v15():
    assert kv.LLAMA_31_8B.bytes_per_token == 2 * 32 * 8 * 128 * 2
    with pytest.raises(ValueError, match="hybrid"):
        kv.Model.from_hf_config(
            {**kv.memory.specs.LLAMA_31_8B_CONFIG, "full_attention_interval": 4}
        )


def check_v16():
    assert precisions("fp8", "auto").cache_bits == 16
    assert precisions("fp8", "auto", declared_cache="fp8").cache_bits == 8
    assert precisions("fp8", "bf16", declared_cache="fp8").cache_bits == 16


def check_v17():
    step = rig_measurements.k8v4_step()
    assert k8v4_slot_bytes(128) == 196
    for head, text in ((128, "+30.6%"), (256, "+32.0%")):
        assert f"+{step.layout_gain(head) * 100:.1f}%" == text and text in row_text("V17")
    # a dense model keeps its first and last two attention layers in BF16 (0.33's boundary
    # layers): Llama 3.1 8B's 32 layers, 28 compressed, gain 8.7%, not the layout's 30.6%
    dense = k8v4_gain_over_fp8(kv.LLAMA_31_8B.layers, kv.LLAMA_31_8B.head_size)
    assert dense == 32 * 256 / (28 * 196 + 4 * 512) - 1
    assert f"+{dense * 100:.1f}%" == "+8.7%" and "+8.7%" in row_text("V17")
    assert k8v4_gain_over_fp8(16, 128, hybrid=True) == step.layout_gain(128)


def check_v18():
    log = kv.read_vllm_log(
        "Model loading took 14.96 GiB memory and 6.271382 seconds\n"
        "Available KV cache memory: 55.13 GiB\n"
        "GPU KV cache size: 451,632 tokens, Maximum concurrency for 131,072 tokens per request: 3.45x\n"
    )
    assert (log.weights_gib, log.kv_cache_gib, log.kv_tokens, log.max_concurrency) == (
        14.96,
        55.13,
        451_632,
        3.45,
    )
    for wording in (
        "Model loading took %s GiB memory",
        "Available KV cache memory: %s GiB",
        "Maximum concurrency for %s tokens per request",
    ):
        assert wording in row_text("V18")
    # notebook 5's example log is a default 0.33 launch: Model Runner V2's tag
    cells = json.loads((ROOT / "solutions" / "05_real_server" / "real_server.ipynb").read_text())
    example = next(
        "".join(c["source"]) for c in cells["cells"] if "MY_LOG = " in "".join(c["source"])
    )
    assert "[model_runner.py:428] Model loading took" in example
    assert "gpu_model_runner.py" not in example and "model_runner.py:428" in row_text("V18")


def check_v19():
    small, large = vllm_defaults.v1_defaults(kv.A100_80GB), vllm_defaults.v1_defaults(kv.H100_80GB)
    largest = vllm_defaults.v1_defaults(
        kv.GPU("B200", 192 * 10**9, 2e15, 8e12, measured_bytes=round(178 * GIB))
    )
    text = row_text("V19")
    for defaults in (small, large, largest):
        for value in (
            defaults.max_num_batched_tokens,
            defaults.max_num_batched_tokens_offline,
            defaults.max_num_seqs,
        ):
            assert f"{value:,}" in text


def check_v20():
    defaults = vllm_defaults.v1_defaults(kv.A100_80GB)
    assert defaults.prefix_caching and defaults.chunked_prefill
    toy = make_setup(8)
    assert toy.budget is None and not toy.caching  # the toy's own switches stay off


def check_v21():
    defaults = vllm_defaults.v1_defaults(kv.H100_80GB)
    assert defaults.long_prefill_token_threshold == 0 and defaults.watermark == 0.0


def check_v22():
    assert share_each(2) == 0.45 and "0.45" in row_text("V22")


def check_v23():
    assert kv.LLAMA_31_8B.context == kv.LLAMA_33_70B.context == 131_072
    assert kv.QWEN25_7B.context == 32_768
    with pytest.raises(
        ValueError,
        match=r"User-specified max_model_len \(262144\) is greater than "
        r"the derived max_model_len \(max_position_embeddings="
        r"131072 or model_max_length=None",
    ):
        startup(kv.H100_80GB, kv.LLAMA_31_8B, longest=262_144)
    rope = {"max_position_embeddings": 4_096, "rope_scaling": {"type": "linear", "factor": 2.0}}
    assert derived_context(rope) == (8_192, "max_position_embeddings")
    assert (
        derived_context({**rope, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}})[0]
        == 4_096
    )
    assert "User-specified max_model_len" in row_text("V23")


def check_v24():
    alone = startup(kv.H100_80GB, kv.LLAMA_33_70B, 92, 4_096)
    assert not alone.loads and not alone.starts
    assert alone.error().startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert "No available memory" not in alone.error() and "max seq len" not in alone.error()
    assert startup(kv.H100_80GB, kv.LLAMA_33_70B, 92, 4_096, tp=2).loads
    assert "OutOfMemoryError" in row_text("V24")


def check_v25():
    step = rig_measurements.august_step()
    for length, logged in (
        (step.short_len, step.short_concurrency),
        (step.long_len, step.long_concurrency),
    ):
        assert step.concurrency_at(length) == pytest.approx(logged, rel=1e-9)
    assert step.ratio > 0.5 and round(step.state_tokens) == 17_384
    assert f"{round(step.pool_tokens):,}" in row_text("V25") and "17,384" in row_text("V25")


def check_v26():
    names = {refusal.name for refusal in REFUSALS}
    for name in (
        "no room for a cache",
        "one request does not fit",
        "free memory below the share",
        "memory profiling",
        "auto-fit found no room",
        "out of memory",
        "max_num_seqs past the Mamba cache blocks",
        "token budget below max_num_seqs",
        "token budget below max_model_len",
        "share out of range",
        "engine failed to start",
    ):
        assert name in names and name in row_text("V26")
    assert "EngineCore hit an exception" in row_text("V26") and "does not know" in row_text("V26")


def check_v28():
    log = kv.read_vllm_log(
        "ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (856)."
    )
    assert (log.max_num_seqs, log.mamba_blocks) == (1024, 856) and log.refused
    assert "at most 856" in kv.check_log(log, kv.H100_80GB, 95).reason
    hybrid = dataclasses.replace(kv.QWEN25_7B, hybrid=True)
    for card, seqs in ((kv.H100_80GB, "1,024"), (kv.A100_80GB, "256")):
        warned = startup(card, hybrid, longest=32_768).warning
        assert f"at max_num_seqs {seqs} (vLLM 0.33's default on this card)" in warned
    assert startup(kv.H100_80GB, kv.QWEN25_7B, longest=32_768).warning is None
    for blocks in ("856", "524", "969"):
        assert blocks in row_text("V28")
    assert "config/compilation.py:1510-1532" in row_text("V28")


def check_v27():
    assert vllm_defaults.ADMISSION_CAP_SINCE == "0.29.0"
    assert "--max-num-queued-reqs" in row_text("V27") and "0.29.0" in row_text("V27")
    assert "HTTP 503" in row_text("V27")


def check_s1():
    chats = [kv.Request(100, 20, 0.0), kv.Request(60, 5, 0.05)]
    runs = {
        rule: kv.trace(chats, 4, blocks=10, budget=32, admit_rule=rule)
        for rule in (WHOLE_PROMPT, FIRST_CHUNK)
    }
    joins = {rule: next(s.step for s in steps if 1 in s.joined) for rule, steps in runs.items()}
    assert joins[FIRST_CHUNK] < joins[WHOLE_PROMPT]
    assert make_setup(8).admit_rule == WHOLE_PROMPT
    assert vllm_defaults.WHOLE_PROMPT_SINCE in row_text("S1")


def check_s3():
    steps = kv.trace([(30, 10), (30, 10)], 10, blocks=4)
    paused = next(s for s in steps if s.paused)
    assert paused.paused == (1,)  # the newest gives way
    rejoined = next(s for s in steps if 1 in s.joined and s.step > paused.step)
    assert rejoined.slices[1] == rejoined.context[1] > 30  # its whole context, rebuilt


def check_s6():
    shared = (("system", 32),)
    steps = kv.trace(
        [kv.Request(32, 4, 0.0, shared), kv.Request(32, 4, 0.0, shared)],
        1,
        blocks=20,
        prefix_caching=True,
    )
    second = next(s for s in steps if 1 in s.joined)
    assert second.slices[1] == 16  # (32 - 1) // 16 = 1 block found: one token short of all


def check_m1():
    result = kv.serve([kv.Request(800, 5, 1.0)], 4)
    assert kv.chat_times(result)["ttft_s"].iloc[0] == result.first_token_s[0] - 1.0


def check_m2():
    times = kv.chat_times(kv.serve([kv.Request(300, 50), kv.Request(900, 20)], 4))
    expected = (times["e2e_s"] - times["ttft_s"]) / (times["reply"] - 1)
    assert np.allclose(times["tpot_s"], expected, rtol=1e-12, atol=0)


def check_m3():
    result = kv.serve([kv.Request(300, 50), kv.Request(900, 20)], 4)
    assert len(result.gaps.values()) == (50 - 1) + (20 - 1)


def check_m4():
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    assert Spread.of(values).p95 == float(np.percentile(values, 95)) == pytest.approx(9.55)
    assert kv.percentile(values, 95) == 10.0  # the nearest rank, named so


def check_o1():
    sheet = dataclasses.replace(kv.H100_80GB, measured_bytes=None)
    budgets = cache_budgets(0.9, sheet, kv.LLAMA_31_8B, 3e9)
    assert budgets.tensorrt_llm_bytes == pytest.approx(
        0.9 * (80e9 - kv.LLAMA_31_8B.weights_bytes - 3e9)
    )
    assert "default 0.9" in row_text("O1")


def check_o2():
    auto = llama_cpp_context(32_768)
    assert (auto.slots, auto.unified, auto.per_slot) == (4, True, 32_768)


def check_o3():
    assert [
        llama_cpp_context(c, p).per_slot
        for c, p in ((98_304, 3), (262_144, 10), (100, 3), (98_765, 8))
    ] == [32_768, 26_368, 256, 12_544]
    assert llama_cpp_context(262_144, 10).n_ctx == 263_680
    assert llama_cpp_context(65_536, 256).per_slot == 256
    with pytest.raises(ValueError, match=r"n_seq_max must be <= 256"):
        llama_cpp_context(65_536, 257)
    assert "LLAMA_MAX_SEQ" in row_text("O3") and "n_seq_max must be <= 256" in row_text("O3")


def check_o4():
    assert llama_cpp_context(131_072, 2, train_ctx=8_192).per_slot == 8_192


def check_o5():
    total = 80 * GIB
    assert tgi_kv_bytes(60 * GIB, total) == pytest.approx(60 * GIB - 0.1 * total)
    assert tgi_kv_bytes(60 * GIB, total, fraction=0.5) == pytest.approx(60 * GIB - 0.55 * total)
    assert tgi_kv_bytes(GIB, total) == 0
    assert "1 - 0.9 x fraction" in row_text("O5")


PINNED = {
    name[len("check_") :].upper(): check
    for name, check in globals().items()
    if name.startswith("check_")
}


def test_every_pinned_row_has_a_check_and_every_check_a_pinned_row():
    marked = {key for key, row in ROWS.items() if "*pinned*" in row["fidelity"]}
    assert marked == set(PINNED)


@pytest.mark.parametrize("key", sorted(PINNED))
def test_the_package_computes_what_the_row_says(key):
    PINNED[key]()
