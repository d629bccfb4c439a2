"""Notebook 5's explorer: what it shows for a launch that starts, one that does not, and a paste."""

from __future__ import annotations

import json

import pytest

import kvlesson as kv
from kvlesson.lesson.real_server_explorer import PASTED, RealServerExplorer, real_view
from kvlesson.memory.specs import LLAMA_31_8B_CONFIG


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


@pytest.mark.parametrize("text, words", [
    ("", "Paste a config.json"),
    ("{not json", "This cannot be sized"),
    (json.dumps({**LLAMA_31_8B_CONFIG, "kv_lora_rank": 512}), "MLA"),
])
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
