"""Reading a vLLM start-up log, and holding it against the floor plan.

At start-up vLLM writes its floor plan to the log: what the weights took, the
memory left for the KV cache, the tokens that memory holds, and how many
requests of the longest length fit at once. The wording changed between
versions; the patterns below follow vLLM's own format strings:

* weights: "Loading model weights took %.4f GB" (V0, in fact GiB; GiB in some forks), "Model loading
  took %.4f GiB and %.6f seconds", "Model loading took %s GiB memory and ... seconds";
  the V0 profiler's "model weights take %.2fGiB" when nothing else says it;
* cache memory: "Available KV cache memory: %s GiB" (V1), the V0 profiler's
  "the rest of the memory reserved for KV Cache is %.2fGiB", 0.6.4's
  "kv_cache_size=%.2fGiB", a development build's "available_kv_cache_memory %.2fGiB";
* the budget: "total_gpu_memory (%.2fGiB) x gpu_memory_utilization (%.2f)" (V0
  profiler; "=" in 0.6.4), and V1's "Free memory on device (%s/%s GiB) on startup ...
  Desired GPU memory utilization is (%s, %s GiB)" (the total is cudaMemGetInfo's);
* tokens: "GPU KV cache size: %s tokens" (thousands separated), blocks: "# GPU blocks: %d"
  (also "# cuda blocks", "# CUDA blocks", and without the "#" as some posts quote it);
* "Maximum concurrency for %s tokens per request: %.2fx", alone or on the cache-size line;
* the start-up errors: "To serve at least one request with the model's max seq len (%d),
  (%s GiB KV cache is needed, which is larger than the available KV cache memory (%s GiB).
  Based on the available memory, the estimated maximum model length is %d." (V1; "models's"
  before 0.22), and "The model's max seq len (%d) is larger than the maximum number of
  tokens that can be stored in KV cache (%d)." (V0).

Each field is the last value the log gives (a log with restarts describes the last
start); a field the log does not give is None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from kvlesson.arguments import of_type, whole
from kvlesson.memory.floor import BLOCK_TOKENS, pool_tokens
from kvlesson.memory.specs import GIB, GPU, Model

NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)"
LOG_PLACES = 2  # vLLM prints GiB and the concurrency with two decimals
HALF_STEP = 0.5 * 10**-LOG_PLACES  # the most a figure so printed is off by
PATTERNS = {
    "weights_gib": [rf"Loading model weights took\s+{NUMBER}\s*Gi?B",
                    rf"Model loading took\s+{NUMBER}\s*Gi?B",
                    rf"model weights take\s+{NUMBER}\s*GiB"],
    "kv_cache_gib": [rf"Available KV cache memory:\s*{NUMBER}\s*GiB",
                     rf"the rest of the memory reserved for KV Cache is\s+{NUMBER}\s*GiB",
                     rf"kv_cache_size\s*=\s*{NUMBER}\s*GiB",
                     rf"available_kv_cache_memory\s+{NUMBER}\s*GiB"],
    "total_gib": [rf"total_gpu_memory\s*[(=]?\s*{NUMBER}\s*GiB",
                  rf"Free memory on device[^(\n]*\(\s*[\d.]+\s*/\s*{NUMBER}\s*GiB\)"],
    "share": [rf"gpu_memory_utilization\s*[(=]?\s*{NUMBER}(?![\d.])",
              rf"[Dd]esired GPU memory utilization(?: is)?\s*\(\s*{NUMBER},"],
    "kv_tokens": [rf"KV cache size:\s*{NUMBER}\s+tokens",
                  rf"maximum number of tokens that can be stored in KV cache\s*\({NUMBER}\)"],
    # A block count must end at a comma or a line's end: a log cut inside it gives None.
    "gpu_blocks": [rf"(?:#\s*|^)(?:GPU|cuda|CUDA)\s+blocks:\s*{NUMBER}(?=\s*,|[ \t]*\r?\n)"],
    "concurrency_len": [rf"Maximum concurrency for\s+{NUMBER}\s+tokens per request"],
    "max_concurrency": [rf"Maximum concurrency for\s+[\d,]+\s+tokens per request:\s*{NUMBER}\s*x"],
    "needed_gib": [rf"\(?{NUMBER}\s*GiB KV\s+cache is needed"],
    "available_gib": [rf"larger than the available KV\s+cache\s+memory\s*\({NUMBER}\s*GiB\)"],
    "estimated_max_len": [rf"estimated maximum model length is\s+{NUMBER}\."],
    "refused_len": [rf"max seq len\s*\({NUMBER}\)"],
}
WHOLE = {"kv_tokens", "gpu_blocks", "concurrency_len", "estimated_max_len", "refused_len"}


@dataclass(frozen=True)
class VllmLog:
    """What a vLLM start-up log says, per GPU; None where it does not say it.

    `refused_len` is the max_model_len a start-up error refused; `share` and
    `total_gib` come from the V0 profiler's budget line.
    """

    weights_gib: float | None = None
    kv_cache_gib: float | None = None
    kv_tokens: int | None = None
    gpu_blocks: int | None = None
    concurrency_len: int | None = None
    max_concurrency: float | None = None
    needed_gib: float | None = None
    available_gib: float | None = None
    estimated_max_len: int | None = None
    refused_len: int | None = None
    total_gib: float | None = None
    share: float | None = None

    @property
    def found(self) -> dict[str, float | int]:
        """The fields the log gave, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @property
    def refused(self) -> bool:
        """True when the log shows the start-up check failing (or no room left for a cache)."""
        return (self.needed_gib is not None or self.refused_len is not None
                or (self.kv_cache_gib is not None and self.kv_cache_gib <= 0)
                or self.gpu_blocks == 0)

    @property
    def tokens(self) -> int | None:
        """The pool in tokens as the log gives it: its cache size, else its blocks x 16 (V0)."""
        if self.kv_tokens is not None:
            return self.kv_tokens
        return None if self.gpu_blocks is None else self.gpu_blocks * BLOCK_TOKENS

    def concurrency_at(self, longest: int) -> float | None:
        """Requests of `longest` tokens the logged pool holds at once (None without tokens)."""
        longest = whole("longest", longest, 1)
        return None if self.tokens is None else self.tokens / longest


def read_vllm_log(text: str) -> VllmLog:
    """Read a pasted vLLM start-up log. Garbage, an empty string or another server's log
    give a VllmLog with every field None; only a non-string is an error.

    >>> read_vllm_log("GPU KV cache size: 652,346 tokens").kv_tokens
    652346
    """
    if not isinstance(text, str):
        hint = " (decode bytes first: text.decode())" if isinstance(text, (bytes, bytearray)) else ""
        raise TypeError(f"text must be the log as a str, not {type(text).__name__}{hint}")
    values: dict[str, float | int] = {}
    for name, patterns in PATTERNS.items():
        found = _last(text, patterns)
        if found is not None:
            values[name] = int(found) if name in WHOLE else found
    return VllmLog(**values)


def _last(text: str, patterns: list[str]) -> float | None:
    """The number the last match of the first pattern that matches captures."""
    for pattern in patterns:
        matches = re.findall(pattern, text, re.MULTILINE)
        if matches:
            return float(matches[-1].replace(",", ""))
    return None


@dataclass(frozen=True)
class LogCheck:
    """A log held against a card, a share and (if given) a model, per GPU.

    `budget_gib` is the share of the card's measured total (what `cudaMemGetInfo`
    reports, `GPU.total_bytes`), as vLLM takes it. `non_cache_gib` is what the log
    implies for everything but weights and cache (activations, CUDA graphs,
    workspace, NCCL): budget - weights - cache, never below zero on a real log.
    `bytes_per_token` is what the log implies: its cache memory over its
    tokens. With a model, `predicted_tokens` is what the package makes of the
    logged cache memory, and `tokens_agree` says whether the logged tokens fall
    in the range the log's two-decimal rounding of the GiB allows.
    """

    log: VllmLog
    budget_gib: float
    non_cache_gib: float | None
    bytes_per_token: float | None
    predicted_tokens: int | None
    tokens_range: tuple[int, int] | None
    tokens_agree: bool | None
    concurrency_agree: bool | None


def check_log(log: VllmLog, gpu: GPU, share: int, model: Model | None = None,
              tp: int = 1) -> LogCheck:
    """Hold `log` against `gpu` at a whole-percent `share` of its measured total, and against
    `model` split over `tp` GPUs."""
    of_type("log", log, VllmLog)
    of_type("gpu", gpu, GPU)
    share = whole("share", share, 1, 100)
    budget = share / 100 * gpu.total_bytes / GIB
    rest = None
    if log.weights_gib is not None and log.kv_cache_gib is not None:
        rest = budget - log.weights_gib - log.kv_cache_gib
    per_token = None
    if log.kv_cache_gib is not None and log.kv_tokens:
        per_token = log.kv_cache_gib * GIB / log.kv_tokens
    predicted = span = agree = None
    if model is not None and log.kv_cache_gib is not None:
        of_type("model", model, Model)
        predicted = pool_tokens(log.kv_cache_gib * GIB, model, tp)
        span = (pool_tokens((log.kv_cache_gib - HALF_STEP) * GIB, model, tp),
                pool_tokens((log.kv_cache_gib + HALF_STEP) * GIB, model, tp))
        if log.tokens is not None:
            agree = span[0] <= log.tokens <= span[1]
    concurrency = None
    if None not in (log.tokens, log.concurrency_len, log.max_concurrency):
        exact = log.tokens / log.concurrency_len
        concurrency = abs(exact - log.max_concurrency) <= HALF_STEP + 1e-9
    return LogCheck(log, budget, rest, per_token, predicted, span, agree, concurrency)
