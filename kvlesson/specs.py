"""GPUs and models as data.

A GPU is its memory, its peak arithmetic speed and its memory bandwidth. A
model is what the floor plan and the step time need: how many numbers it has
(its parameters), and the shape of its cache (layers, KV heads, head size,
bytes per number). The cache for one token is derived from that shape, never
typed in, and a model can be built from a Hugging Face `config.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from kvlesson.valid import of_type, positive, whole

GIB = 2**30  # one gibibyte, the "GiB" reading of a card's memory


@dataclass(frozen=True)
class GPU:
    """One accelerator: memory in bytes, peak dense FLOP/s, bandwidth in bytes/s."""

    name: str
    memory_bytes: int
    peak_flops: float
    bandwidth: float

    def __post_init__(self) -> None:
        of_type("name", self.name, str)
        whole("memory_bytes", self.memory_bytes, 1)
        positive("peak_flops", self.peak_flops)
        positive("bandwidth", self.bandwidth)


@dataclass(frozen=True)
class Model:
    """A decoder-only model as the server sees it.

    `params` is the count of weights; `bytes_per_number` is 2 for BF16. The
    cache keeps a key and a value (2) per layer, per KV head, `head_size`
    numbers each, for every token.
    """

    name: str
    params: int
    layers: int
    kv_heads: int
    head_size: int
    bytes_per_number: int = 2

    def __post_init__(self) -> None:
        of_type("name", self.name, str)
        for field in ("params", "layers", "kv_heads", "head_size", "bytes_per_number"):
            whole(field, getattr(self, field), 1)

    @property
    def weights_bytes(self) -> int:
        """Bytes the weights take, whatever the settings."""
        return self.params * self.bytes_per_number

    @property
    def bytes_per_token(self) -> int:
        """Cache for one token: K and V, for every layer and KV head."""
        return 2 * self.layers * self.kv_heads * self.head_size * self.bytes_per_number

    @classmethod
    def from_hf_config(cls, config: Mapping[str, Any] | str | Path, name: str | None = None) -> "Model":
        """A model from a Hugging Face `config.json` (a dict, or a path to the file).

        The parameter count is worked out for a Llama-style decoder (embeddings,
        attention with grouped KV heads, a gated MLP, RMS norms and an LM head
        that is tied or not), which covers Llama, Mistral and Qwen2 configs
        without biases. For Llama 3.1 8B it gives 8,030,261,248.
        """
        if isinstance(config, (str, Path)):
            config = json.loads(Path(config).read_text())
        if not isinstance(config, Mapping):
            raise TypeError(f"config must be a dict or the path of a config.json, "
                            f"not {type(config).__name__} {config!r}")
        needed = ("hidden_size", "intermediate_size", "num_hidden_layers",
                  "num_attention_heads", "vocab_size")
        missing = [key for key in needed if key not in config]
        if missing:
            raise ValueError(f"config is missing {', '.join(missing)}; a Llama-style config.json has them")
        hidden = whole("hidden_size", config["hidden_size"], 1)
        layers = whole("num_hidden_layers", config["num_hidden_layers"], 1)
        heads = whole("num_attention_heads", config["num_attention_heads"], 1)
        kv_heads = whole("num_key_value_heads", config.get("num_key_value_heads", heads), 1)
        head_size = whole("head_dim", config.get("head_dim") or hidden // heads, 1)
        vocab = whole("vocab_size", config["vocab_size"], 1)
        inner = whole("intermediate_size", config["intermediate_size"], 1)
        dtype = config.get("torch_dtype", "bfloat16")
        sizes = {"bfloat16": 2, "float16": 2, "float32": 4, "float8_e4m3fn": 1}
        if dtype not in sizes:
            raise ValueError(f"torch_dtype must be one of {', '.join(sizes)}, got {dtype!r}")
        attention = hidden * heads * head_size * 2 + hidden * kv_heads * head_size * 2
        per_layer = attention + 3 * hidden * inner + 2 * hidden
        head = 0 if config.get("tie_word_embeddings", False) else vocab * hidden
        params = vocab * hidden + layers * per_layer + hidden + head
        return cls(name or config.get("_name_or_path", "model"), params, layers, kv_heads,
                   head_size, sizes[dtype])


# NVIDIA A100 Tensor Core GPU data sheet, 80GB SXM column: "80GB" read as 80e9
# bytes (as lesson 24 and this lesson do), 312 TFLOPS dense BF16, 2,039 GB/s.
A100_80GB = GPU("A100 80GB", 80 * 10**9, 312e12, 2.039e12)
# The same card read as 80 GiB, as lessons 18 and 26 read it.
A100_80GIB = GPU("A100 80GB read as GiB", 80 * GIB, 312e12, 2.039e12)  # == as_gib(A100_80GB)
# Same data sheet, 40GB SXM column: 312 TFLOPS dense BF16, 1,555 GB/s.
A100_40GB = GPU("A100 40GB", 40 * 10**9, 312e12, 1.555e12)
# NVIDIA H100 data sheet, SXM column: 80GB, 989 TFLOPS dense BF16 (1,979 is
# with sparsity), 3.35 TB/s.
H100_80GB = GPU("H100 80GB", 80 * 10**9, 989e12, 3.35e12)

# Llama 3.1 8B config.json: hidden 4096, 32 layers, 32 heads, 8 KV heads,
# MLP 14336, vocabulary 128256, untied LM head, BF16.
LLAMA_31_8B_CONFIG = {
    "_name_or_path": "Llama 3.1 8B", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}
LLAMA_31_8B = Model.from_hf_config(LLAMA_31_8B_CONFIG)
# Llama 3.3 70B config.json: hidden 8192, 80 layers, 64 heads, 8 KV heads,
# MLP 28672, vocabulary 128256, BF16 (70.55e9 numbers, 320 KiB of cache a token).
LLAMA_33_70B = Model.from_hf_config({
    "_name_or_path": "Llama 3.3 70B", "hidden_size": 8192, "intermediate_size": 28672,
    "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
    "vocab_size": 128256, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
})
# Qwen2.5 7B Instruct config.json: hidden 3584, 28 layers, 28 heads, 4 KV heads,
# MLP 18944, vocabulary 152064, untied, BF16 (56 KiB of cache a token).
QWEN25_7B = Model.from_hf_config({
    "_name_or_path": "Qwen2.5 7B", "hidden_size": 3584, "intermediate_size": 18944,
    "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
    "vocab_size": 152064, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
})

GPUS = {"A100_80GB": A100_80GB, "A100_80GIB": A100_80GIB, "A100_40GB": A100_40GB,
        "H100_80GB": H100_80GB}
MODELS = {"LLAMA_31_8B": LLAMA_31_8B, "LLAMA_33_70B": LLAMA_33_70B, "QWEN25_7B": QWEN25_7B}


def gpu(name: str | GPU) -> GPU:
    """A GPU by its constant's name ("H100_80GB"), as a notebook parameter gives it."""
    return _lookup("gpu", name, GPUS, GPU)


def model(name: str | Model) -> Model:
    """A model by its constant's name ("LLAMA_31_8B"), as a notebook parameter gives it."""
    return _lookup("model", name, MODELS, Model)


def _lookup(kind: str, name: object, table: dict, cls: type):
    if isinstance(name, cls):
        return name
    if not isinstance(name, str) or name.upper() not in table:
        raise ValueError(f"{kind} must be one of {', '.join(table)}, got {name!r}")
    return table[name.upper()]


def as_gib(gpu: GPU) -> GPU:
    """The same card with its "GB" read as GiB (80 GB -> 80 GiB), as some lessons read it."""
    if gpu.memory_bytes % 10**9:
        raise ValueError(f"gpu memory must be a whole number of GB to read it as GiB, "
                         f"got {gpu.memory_bytes:,} bytes")
    return GPU(f"{gpu.name} read as GiB", gpu.memory_bytes // 10**9 * GIB, gpu.peak_flops,
               gpu.bandwidth)
