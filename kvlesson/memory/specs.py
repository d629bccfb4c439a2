"""GPUs and models as data.

This module stays whole past ~300 lines: it is the course's catalogue, each card and model
beside the data sheet or config it comes from, and the one place a new card or model goes
(docs/architecture.md); the rules that read a config live in `hf_config`, vLLM's refusals
in `config_refusals`, the precisions in `precision`.

A GPU is its memory, its peak arithmetic speed and its memory bandwidth. Its
memory is read two ways: the size on the data sheet, which the lesson's
notebooks 1-4 take at its word ("80 GB" = 80e9 bytes), and the total that
`cudaMemGetInfo` reports on the card, which is what vLLM takes its share of
(notebook 5): a little less than the card's GiB, as public logs show it.
A model is what the floor plan and the step time need: how many numbers it has
(its parameters), and the shape of its cache (layers, KV heads, head size,
bytes per number). The cache for one token is derived from that shape, never
typed in, and a model can be built from a Hugging Face `config.json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kvlesson.arguments import of_type, positive, whole
from kvlesson.memory import config_refusals, hf_config
from kvlesson.memory.precision import precisions

GIB = 2**30  # one gibibyte, the "GiB" reading of a card's memory
MAX_TP = 64  # the most GPUs one model is split over here (an 8-node HGX H100 cluster)


@dataclass(frozen=True)
class GPU:
    """One accelerator: memory in bytes, peak dense FLOP/s, bandwidth in bytes/s.

    `memory_bytes` is the data sheet's size as the lesson reads it; `measured_bytes`
    the total `cudaMemGetInfo` reports (None: not known, the data sheet's size stands in).
    """

    name: str
    memory_bytes: int
    peak_flops: float
    bandwidth: float
    measured_bytes: int | None = None

    def __post_init__(self) -> None:
        of_type("name", self.name, str)
        whole("memory_bytes", self.memory_bytes, 1)
        positive("peak_flops", self.peak_flops)
        positive("bandwidth", self.bandwidth)
        if self.measured_bytes is not None:
            whole("measured_bytes", self.measured_bytes, 1, self.memory_bytes * 2)

    @property
    def total_bytes(self) -> int:
        """What vLLM's share is a share of: the measured total, else the data sheet's size."""
        return self.measured_bytes or self.memory_bytes


@dataclass(frozen=True)
class Model:
    """A decoder-only model as the server sees it.

    `params` is the count of weights; `bytes_per_number` is 2 for BF16. The
    cache keeps a key and a value (2) per layer, per KV head, `head_size`
    numbers each, for every token. `layers` counts the layers that keep a
    cache (all of them in a plain decoder). `cache_bits` is the cache's
    precision when it differs from the weights' (None: the same). `heads` is
    the count of attention (query) heads, which tensor parallel splits too
    (None: not known, and then only the KV heads are checked). `context` is
    the longest request the config allows (vLLM's "derived max_model_len",
    from `max_position_embeddings` or the key named by `context_key`; None:
    not known, no limit is checked). `hybrid` marks a model some of whose
    layers keep a fixed state per request instead of a KV cache (linear
    attention, Mamba): `layers` then counts only the layers with a KV cache.
    `mlp_size` is the MLP's inner size (`intermediate_size`), which tensor parallel
    splits too (None: not known, not checked).
    """

    name: str
    params: int
    layers: int
    kv_heads: int
    head_size: int
    bytes_per_number: int = 2
    cache_bits: int | None = None
    heads: int | None = None
    context: int | None = None
    context_key: str = "max_position_embeddings"
    hybrid: bool = False
    mlp_size: int | None = None

    def __post_init__(self) -> None:
        of_type("name", self.name, str)
        for field in ("params", "layers", "kv_heads", "head_size", "bytes_per_number"):
            whole(field, getattr(self, field), 1)
        if self.cache_bits is not None:
            whole("cache_bits", self.cache_bits, 1, 32)
        if self.heads is not None:
            whole("heads", self.heads, 1)
        if self.context is not None:
            whole("context", self.context, 1)
        if self.mlp_size is not None:
            whole("mlp_size", self.mlp_size, 1)
        of_type("context_key", self.context_key, str)
        of_type("hybrid", self.hybrid, bool)

    @property
    def weights_bytes(self) -> int:
        """Bytes the weights take, whatever the settings."""
        return self.params * self.bytes_per_number

    @property
    def bits_per_cached_number(self) -> int:
        """Bits each cached key or value number takes: 16 for BF16, 8 for an fp8 cache."""
        return self.cache_bits or 8 * self.bytes_per_number

    @property
    def bytes_per_token(self) -> int:
        """Cache for one token: K and V, for every layer and KV head."""
        return self.cache_bytes_per_token()

    def tp_refusal(self, tp: int) -> str | None:
        """Why vLLM refuses to split this model over `tp` GPUs, in its words, or None
        (`config_refusals.tp_refusal`: tp must divide the attention heads, the KV heads
        must split evenly or be copied evenly, and tp must divide the MLP's size).

        >>> QWEN25_7B.tp_refusal(8)
        'ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).'
        """
        tp = whole("tp", tp, 1, MAX_TP)
        return config_refusals.tp_refusal(self.heads, self.kv_heads, tp, self.mlp_size)

    def max_len_refusal(self, longest: int) -> str | None:
        """Why vLLM refuses `max_model_len=longest` for this model, in its words, or None: a
        length past `context`, what the config allows (`config_refusals.max_len_refusal`).

        >>> LLAMA_31_8B.max_len_refusal(131_072) is None
        True
        """
        return config_refusals.max_len_refusal(
            whole("longest", longest, 1), self.context, self.context_key
        )

    def kv_heads_per_gpu(self, tp: int = 1) -> int:
        """KV heads each of `tp` GPUs keeps: kv_heads // tp, and at least 1 (a head
        is copied, not split, when there are more GPUs than KV heads). A tp that vLLM
        refuses (see `tp_refusal`) is refused here with vLLM's words."""
        refusal = self.tp_refusal(tp)
        if refusal is not None:
            raise ValueError(f"vLLM refuses tp={tp} for {self.name}: {refusal}")
        return max(1, self.kv_heads // tp)

    def cache_bytes_per_token(self, tp: int = 1) -> int:
        """Cache for one token on each GPU when `tp` GPUs share the model (tensor parallel)."""
        per_gpu = 2 * self.layers * self.kv_heads_per_gpu(tp) * self.head_size
        return per_gpu * self.bits_per_cached_number // 8

    def with_dtypes(
        self, weights: str = "bf16", cache: str = "auto", declared_cache: str | None = None
    ) -> Model:
        """The same model with weights and cache in the precisions vLLM users name.

        `weights`: "bf16", "fp16" or "fp8" (also vLLM's long names); `cache`: "auto"
        (the model's dtype: 16 bits, even beside FP8 weights, unless the checkpoint
        declares an FP8 cache, `declared_cache`), "fp8", "fp8_e4m3" or "fp8_e5m2".

        >>> LLAMA_31_8B.with_dtypes(cache="fp8").bytes_per_token
        65536
        """
        chosen = precisions(weights, cache, declared_cache)
        bits = None if chosen.cache_bits == 8 * chosen.weight_bytes else chosen.cache_bits
        return replace(self, bytes_per_number=chosen.weight_bytes, cache_bits=bits)

    @classmethod
    def from_hf_config(
        cls,
        config: Mapping[str, Any] | str | Path,
        name: str | None = None,
        *,
        cache_layers: int | None = None,
        params: int | None = None,
    ) -> Model:
        """A model from a Hugging Face `config.json` (a dict, or a path to the file).

        The parameter count is worked out for a Llama-style decoder (see
        `kvlesson.memory.hf_config`): Llama, Mistral, Qwen2 and Qwen3, with `head_dim`
        taken from the config when it gives one. For Llama 3.1 8B it gives
        8,030,261,248. Hybrid, sliding-window, MLA and mixture-of-experts configs
        are refused with a message that says what to give (`cache_layers=`,
        `params=`) rather than sized wrongly.
        """
        fields = hf_config.model_fields(hf_config.load(config), cache_layers, params)
        if name is not None:
            fields["name"] = name
        return cls(**fields)


def measured(gib: float) -> int:
    """A total a log gives in GiB (two decimals), in bytes."""
    return round(gib * GIB)


# NVIDIA A100 Tensor Core GPU data sheet, 80GB SXM column: "80GB" read as 80e9
# bytes (as lesson 24 and this lesson do), 312 TFLOPS dense BF16, 2,039 GB/s.
# Measured: vLLM's start-up check on an A100 80GB, "Free memory on device
# (0.49/79.32 GiB)" (github.com/vllm-project/vllm-omni/issues/276).
A100_80GB = GPU("A100 80GB", 80 * 10**9, 312e12, 2.039e12, measured(79.32))
# The same card read as 80 GiB, as lessons 18 and 26 read it.
A100_80GIB = GPU("A100 80GB read as GiB", 80 * GIB, 312e12, 2.039e12)  # == as_gib(A100_80GB)
# Same data sheet, 40GB SXM column: 312 TFLOPS dense BF16, 1,555 GB/s. Measured: vLLM
# 0.8.3's profiler on four A100 40GB, "total_gpu_memory (39.38GiB)"
# (github.com/vllm-project/vllm/issues/16570; tests/data/vllm_logs).
A100_40GB = GPU("A100 40GB", 40 * 10**9, 312e12, 1.555e12, measured(39.38))
# NVIDIA H100 data sheet, SXM column: 80GB, 989 TFLOPS dense BF16 (1,979 is
# with sparsity), 3.35 TB/s. Measured: vLLM's profiler on an H100 80GB,
# "total_gpu_memory (79.22GiB)" (github.com/vllm-project/vllm/pull/12126, and the
# same total in pull/10511's log of Llama 3 8B).
H100_80GB = GPU("H100 80GB", 80 * 10**9, 989e12, 3.35e12, measured(79.22))
# NVIDIA Ampere GA102 architecture whitepaper, GeForce RTX 3090 column: 24 GB
# GDDR6X, read as 24e9 bytes as every card's data sheet is read here (the A100's "80GB" is
# 80e9; nvidia-smi shows 24,576 MiB, 24 GiB, the card's whole memory), 71 TFLOPS dense
# BF16 tensor with FP32 accumulate, 936 GB/s. Measured: vLLM's profiler on an RTX 3090,
# "total_gpu_memory=23.58GiB" (github.com/vllm-project/vllm/issues/10517; tests/data/vllm_logs).
RTX_3090 = GPU("RTX 3090 24GB", 24 * 10**9, 71e12, 936e9, measured(23.58))

# Llama 3.1 8B config.json: hidden 4096, 32 layers, 32 heads, 8 KV heads,
# MLP 14336, vocabulary 128256, untied LM head, BF16, a context of 131,072 tokens
# (max_position_embeddings; llama3 RoPE scaling, which vLLM does not multiply again).
LLAMA_31_8B_CONFIG = {
    "_name_or_path": "Llama 3.1 8B",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "max_position_embeddings": 131072,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
}
LLAMA_31_8B = Model.from_hf_config(LLAMA_31_8B_CONFIG)
# Llama 3.3 70B config.json: hidden 8192, 80 layers, 64 heads, 8 KV heads,
# MLP 28672, vocabulary 128256, BF16 (70.55e9 numbers, 320 KiB of cache a token), a
# context of 131,072 tokens (max_position_embeddings, llama3 RoPE scaling).
LLAMA_33_70B = Model.from_hf_config(
    {
        "_name_or_path": "Llama 3.3 70B",
        "hidden_size": 8192,
        "intermediate_size": 28672,
        "num_hidden_layers": 80,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
    }
)
# Qwen2.5 7B Instruct config.json: hidden 3584, 28 layers, 28 heads, 4 KV heads,
# MLP 18944, vocabulary 152064, untied, BF16 (56 KiB of cache a token), a context of
# 32,768 tokens (max_position_embeddings).
QWEN25_7B = Model.from_hf_config(
    {
        "_name_or_path": "Qwen2.5 7B",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": 32768,
    }
)

GPUS = {
    "A100_80GB": A100_80GB,
    "A100_80GIB": A100_80GIB,
    "A100_40GB": A100_40GB,
    "H100_80GB": H100_80GB,
    "RTX_3090": RTX_3090,
}
MODELS = {"LLAMA_31_8B": LLAMA_31_8B, "LLAMA_33_70B": LLAMA_33_70B, "QWEN25_7B": QWEN25_7B}


def gpu(name: str | GPU) -> GPU:
    """A GPU by its constant's name ("H100_80GB"), as a notebook parameter gives it."""
    return _lookup("gpu", name, GPUS, GPU)


def model(name: str | Model) -> Model:
    """A model by its constant's name ("LLAMA_31_8B"), as a notebook parameter gives it, or
    by the path of a Hugging Face config.json ("model_config.json": a course for a model of
    one's own, `kvlesson for --model-config`)."""
    if isinstance(name, str) and name.lower().endswith(".json"):
        try:
            return Model.from_hf_config(name)
        except FileNotFoundError as error:
            raise ValueError(
                f"model {name!r} names a config.json that is not there ({Path(name).resolve()})"
            ) from error
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
        raise ValueError(
            f"gpu memory must be a whole number of GB to read it as GiB, "
            f"got {gpu.memory_bytes:,} bytes"
        )
    return GPU(
        f"{gpu.name} read as GiB", gpu.memory_bytes // 10**9 * GIB, gpu.peak_flops, gpu.bandwidth
    )


def as_measured(gpu: GPU) -> GPU:
    """The same card with its memory as vLLM measures it (cudaMemGetInfo's total), for a
    real server's floor plan; a card with no measured total is returned as it is."""
    of_type("gpu", gpu, GPU)
    if gpu.measured_bytes is None or gpu.measured_bytes == gpu.memory_bytes:
        return gpu
    return GPU(
        f"{gpu.name} ({gpu.measured_bytes / GIB:.2f} GiB measured)",
        gpu.measured_bytes,
        gpu.peak_flops,
        gpu.bandwidth,
        gpu.measured_bytes,
    )
