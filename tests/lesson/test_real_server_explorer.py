"""Notebook 5's explorer: what it shows for a launch that starts, one that does not, and a paste."""

from __future__ import annotations

import html
import json

import nbformat
import pytest

import kvlesson as kv
from kvlesson.lesson.real_server_explorer import (
    PASTED,
    TP_CHOICES,
    RealServerExplorer,
    preset_name,
    real_view,
)
from kvlesson.lesson.real_server_launches import FULL_LENGTH, TWO_H100
from kvlesson.memory.specs import LLAMA_31_8B_CONFIG, MODELS
from kvlesson.memory.startup import VLLM_SHARE, startup
from support.paths import ROOT


def test_a_launch_that_starts_shows_tokens_and_concurrency():
    view = real_view(kv.H100_80GB, kv.LLAMA_31_8B, 1, "bf16", "auto", 92, 131_072)
    assert view.launch.tokens == 451_632  # the H100 as vLLM measures it, 79.22 GiB
    assert "**451,632 tokens**" in view.caption and "79.22 GiB measured" in view.caption
    assert "Maximum concurrency for 131,072 tokens per request: 3.45x" in view.caption


def test_a_launch_that_fails_shows_vllms_error():
    view = real_view(kv.H100_80GB, kv.LLAMA_33_70B, 2, "bf16", "auto", 92, 131_072)
    assert "**The server does not start.**" in view.caption
    assert "(20.0 GiB KV cache is needed" in view.caption  # vLLM 0.33's format_gib
    assert "the estimated maximum model length is 28688." in view.caption


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "Paste a config.json"),
        ("{not json", "This cannot be sized"),
        (json.dumps({**LLAMA_31_8B_CONFIG, "kv_lora_rank": 512}), "MLA"),
    ],
)
def test_a_paste_that_cannot_be_sized_says_why(text, words):
    view = real_view(kv.H100_80GB, text, 1, "bf16", "auto", 92, 131_072)
    assert view.launch is None and words in view.caption


def test_the_controls_redraw():
    explorer = RealServerExplorer()
    first = explorer.image.value
    explorer.model.value = "LLAMA_33_70B"
    explorer.tp.value = 2
    assert "does not start" in explorer.caption.value
    assert explorer.image.value != first
    explorer.weights.value = "fp8"
    assert "244,016 tokens" in explorer.caption.value
    explorer.config.value = json.dumps(LLAMA_31_8B_CONFIG)
    explorer.model.value = PASTED
    explorer.weights.value, explorer.tp.value = "bf16", 1
    assert "451,632 tokens" in explorer.caption.value


# --- a tensor-parallel size vLLM refuses (issue 18): the explorer says so, in vLLM's words


def vllm_splits(heads: int, kv_heads: int, tp: int) -> bool:
    """vLLM's rule, written out apart from the package: tp divides the attention heads, and
    it divides the KV heads or is a multiple of them."""
    return heads % tp == 0 and (kv_heads % tp == 0 or tp % kv_heads == 0)


def config_with_heads(heads: int, kv_heads: int) -> str:
    return json.dumps(
        {
            **LLAMA_31_8B_CONFIG,
            "_name_or_path": f"{heads}/{kv_heads} heads",
            "num_attention_heads": heads,
            "num_key_value_heads": kv_heads,
            "head_dim": 128,
        }
    )


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("tp", TP_CHOICES)
def test_every_model_and_tp_the_explorer_offers_follows_vllms_rule(model, tp):
    m = MODELS[model]
    view = real_view(kv.H100_80GB, m, tp, "bf16", "auto", 92, 4_096)
    refusal = m.tp_refusal(tp)
    assert (refusal is None) == vllm_splits(m.heads, m.kv_heads, tp)
    if refusal is None and -(-m.weights_bytes // tp) <= kv.H100_80GB.total_bytes:
        assert view.launch is not None
    elif refusal is None:  # the weights pass the card: out of memory in step 2, nothing to draw
        assert (
            view.launch is None and "runs out of memory while it loads the weights" in view.caption
        )
    else:
        assert view.launch is None
        assert "**The server does not start.**" in view.caption and refusal in view.caption


def test_qwen_on_eight_gpus_is_refused_as_the_start_up_check_refuses_it():
    refusal = kv.QWEN25_7B.tp_refusal(8)
    assert refusal == (
        "ValueError: Total number of attention heads (28) must be divisible by "
        "tensor parallel size (8)."
    )
    view = real_view(kv.H100_80GB, kv.QWEN25_7B, 8, "bf16", "auto", 92, 32_768)
    assert view.launch is None and view.caption.endswith(f"vLLM says: {refusal}")
    with pytest.raises(ValueError) as start_up:  # the package's start-up, the same words
        startup(kv.H100_80GB, kv.QWEN25_7B, 92, 32_768, tp=8)
    assert refusal in str(start_up.value)


@pytest.mark.parametrize(
    "heads, kv_heads, tp, words",
    [
        (40, 10, 4, "AssertionError: 10 is not divisible by 4"),  # tp divides heads, not KV heads
        (40, 10, 8, "AssertionError: 10 is not divisible by 8"),
        (48, 12, 8, "AssertionError: 12 is not divisible by 8"),
        (24, 3, 8, "AssertionError: 8 is not divisible by 3"),  # more GPUs, but not a multiple
        (
            20,
            4,
            8,
            "Total number of attention heads (20) must be divisible by tensor parallel size (8)",
        ),
        (32, 4, 8, None),  # more GPUs than KV heads: each head copied to 2 of them
        (56, 8, 8, None),
    ],
)
def test_a_pasted_config_is_held_to_the_same_rule(heads, kv_heads, tp, words):
    view = real_view(
        kv.H100_80GB, config_with_heads(heads, kv_heads), tp, "bf16", "auto", 92, 4_096
    )
    assert vllm_splits(heads, kv_heads, tp) == (words is None)
    if words is None:
        assert view.launch is not None and "does not start" not in view.caption
    else:
        assert view.launch is None and words in view.caption
        assert "**The server does not start.**" in view.caption


def test_the_explorer_clears_the_bar_when_vllm_refuses_the_split():
    explorer = RealServerExplorer("H100_80GB", "QWEN25_7B", 4, 92, 32_768)
    assert "does not start" not in explorer.caption.value
    explorer.tp.value = 8
    assert "Total number of attention heads (28)" in explorer.caption.value
    assert all(bar.get_width() == 0 for bar in explorer.chart.bar.bars)
    assert "nothing to draw" in explorer.chart.ax.get_title()


# --- the suggested preset is section 5's launch


def section_5_error() -> str:
    """The start-up error printed under section 5's walk in the executed instructor notebook."""
    notebook = nbformat.read(ROOT / "solutions" / "05_real_server" / "real_server.ipynb", 4)
    start = next(
        i
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown" and cell.source.startswith("## 5 ")
    )
    walk = next(cell for cell in notebook.cells[start:] if cell.cell_type == "code")
    printed = "".join(
        output.get("text") or output.get("data", {}).get("text/plain", "")
        for output in walk.outputs
    )
    return printed[printed.index("ValueError") :].strip()


def test_the_preset_button_reproduces_section_5():
    explorer = RealServerExplorer("A100_80GB", "LLAMA_31_8B", 1, 90, 8_000)
    explorer.weights.value = "fp8"
    explorer.preset.click()
    assert (explorer.gpu.value, explorer.model.value, explorer.tp.value) == (
        "H100_80GB",
        "LLAMA_33_70B",
        2,
    )
    assert (explorer.share.value, explorer.longest.value, explorer.weights.value) == (
        VLLM_SHARE,
        FULL_LENGTH,
        "bf16",
    )
    assert section_5_error() in html.unescape(explorer.caption.value)
    assert TWO_H100.start().error() == section_5_error()


def test_the_preset_redraws_once():
    explorer = RealServerExplorer("A100_80GB", "LLAMA_31_8B", 1, 90, 8_000)
    drawn = []
    explorer.refresh = lambda: drawn.append(1)
    explorer.launch(TWO_H100)
    assert drawn == [1]


def test_notebook_5_points_at_the_preset_button():
    notebook = nbformat.read(ROOT / "solutions" / "05_real_server" / "real_server.ipynb", 4)
    explore = next(
        cell.source
        for cell in notebook.cells
        if cell.cell_type == "markdown" and cell.source.startswith("## 8 ")
    )
    button = preset_name(TWO_H100)
    assert button.split(":")[0] in explore and "70B" in button


@pytest.mark.parametrize(
    "tp, words",
    [(1, "One GPU (H100 80GB"), (2, "Each of 2 GPUs (H100 80GB"), (8, "Each of 8 GPUs (H100 80GB")],
)  # Llama 3.1 8B fits one
def test_the_caption_counts_its_gpus(tp, words):
    caption = real_view(kv.H100_80GB, kv.LLAMA_31_8B, tp, "bf16", "auto", 92, 4_096).caption
    assert caption.startswith(words) and "1 GPUs" not in caption and "Each of 1 " not in caption


def test_a_courses_model_config_starts_out_pasted(tmp_path, monkeypatch):
    """A course for a model's config.json (`kvlesson for --model-config`) gives the notebook
    MODEL = "model_config.json", the file beside it: the explorer sizes that model."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model_config.json").write_text(json.dumps(LLAMA_31_8B_CONFIG))
    explorer = RealServerExplorer("A100_80GB", "model_config.json")
    assert (explorer.model.value, json.loads(explorer.config.value)) == (PASTED, LLAMA_31_8B_CONFIG)
    view = explorer.compute(explorer.setting())
    assert view.launch is not None and view.launch.starts, view.caption
