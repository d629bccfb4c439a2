"""Reading a vLLM start-up log, and holding it against the floor plan, with a verdict.

At start-up vLLM writes its floor plan to the log: what the weights took, the
memory left for the KV cache, the tokens that memory holds, and how many
requests of the longest length fit at once; or it stops, and says why. The
wording changed between versions; `log_wordings` holds every wording of 0.6 to
0.33, with its source.

`read_vllm_log` gives each figure as the log's last value (a log with restarts
describes the last start), None where the log does not say it, the refusal the
log shows, and the signs that its pool is not sized by the per-token formula
(pages that are not 16 tokens, a hybrid model's state, a TPU). `check_log` holds
it against a card, a share and a model, and ends in a verdict with its reason:
never a bare "does not agree".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from kvlesson.arguments import of_type, whole
from kvlesson.memory.floor import BLOCK_TOKENS, pool_tokens
from kvlesson.memory.log_wordings import (
    CACHE_WORDS,
    FIGURES,
    HYBRID_SIGNS,
    REFUSALS,
    TPU_SIGNS,
    WHOLE,
    Refusal,
)
from kvlesson.memory.specs import GIB, GPU, Model

LOG_PLACES = 2  # vLLM prints GiB and the concurrency with two decimals
HALF_STEP = 0.5 * 10**-LOG_PLACES  # the most a figure so printed is off by
SIGNS = ("refusal", "hybrid", "tpu", "unknown")  # what a log shows besides its figures


@dataclass(frozen=True)
class VllmLog:
    """What a vLLM start-up log says, per GPU; None where it does not say it.

    `refused_len` is the max_model_len a start-up error refused; `share` and
    `total_gib` come from the budget's line; `page_tokens` is the page (block)
    size the log states, when it states one. `refusal` is the way vLLM stopped,
    `hybrid` and `tpu` whether the log shows a hybrid model or a TPU, and
    `unknown` the lines about the cache in a wording this reader does not know.
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
    page_tokens: int | None = None
    refusal: Refusal | None = None
    hybrid: bool = False
    tpu: bool = False
    unknown: tuple[str, ...] = ()

    @property
    def found(self) -> dict[str, float | int]:
        """The figures the log gave, by name."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in SIGNS and getattr(self, f.name) is not None
        }

    @property
    def refused(self) -> bool:
        """True when the log shows vLLM stopping at start-up (or no room left for a cache)."""
        return self.refusal is not None or self.why_refused() is not None

    def why_refused(self) -> str | None:
        """Why vLLM did not start, in the course's words (None: the log shows no refusal)."""
        generic = self.refusal is not None and self.refusal.name == "engine failed to start"
        if self.refusal is not None and not generic:
            return f"vLLM stopped at start-up ({self.refusal.name}): {self.refusal.meaning}"
        if self.needed_gib is not None or self.refused_len is not None:
            return (
                "vLLM stopped at start-up (one request does not fit): the pool cannot hold "
                "one request of max_model_len tokens"
            )
        if self.kv_cache_gib is not None and self.kv_cache_gib <= 0:
            return (
                f"vLLM stopped at start-up (no room for a cache): the cache memory left is "
                f"{self.kv_cache_gib:g} GiB"
            )
        if self.gpu_blocks == 0:
            return "vLLM stopped at start-up (no room for a cache): 0 blocks"
        if generic:
            return f"vLLM stopped at start-up ({self.refusal.name}): {self.refusal.meaning}"
        return None

    @property
    def tokens(self) -> int | None:
        """The pool in tokens as the log gives it: its cache size, else its blocks x 16 (V0)."""
        if self.kv_tokens is not None:
            return self.kv_tokens
        return None if self.gpu_blocks is None else self.gpu_blocks * BLOCK_TOKENS

    def concurrency_at(self, longest: int) -> float | None:
        """Requests of `longest` tokens the logged pool holds at once (None without tokens),
        for a model whose every layer keeps a full cache: tokens / longest. A hybrid model's
        requests also hold a fixed state each, so there it is fewer (see `rig_measurements`)."""
        longest = whole("longest", longest, 1)
        return None if self.tokens is None else self.tokens / longest


def read_vllm_log(text: str) -> VllmLog:
    """Read a pasted vLLM start-up log. Garbage, an empty string or another server's log
    give a VllmLog with every figure None; only a non-string is an error.

    >>> read_vllm_log("GPU KV cache size: 652,346 tokens").kv_tokens
    652346
    """
    if not isinstance(text, str):
        hint = (
            " (decode bytes first: text.decode())" if isinstance(text, (bytes, bytearray)) else ""
        )
        raise TypeError(f"text must be the log as a str, not {type(text).__name__}{hint}")
    values: dict[str, object] = {}
    for name, patterns in FIGURES.items():
        found = _last(text, patterns)
        if found is not None:
            values[name] = int(found) if name in WHOLE else found
    refusal = next((r for r in REFUSALS if re.search(r.pattern, text, re.DOTALL)), None)
    read = [
        line
        for line in text.splitlines()
        if any(re.search(p, line, re.MULTILINE) for patterns in FIGURES.values() for p in patterns)
    ]
    unknown = tuple(
        line.strip()
        for line in text.splitlines()
        if re.search(CACHE_WORDS, line)
        and line not in read
        and not any(re.search(r.pattern, line) for r in REFUSALS)
    )
    return VllmLog(
        **values,
        refusal=refusal,
        hybrid=any(re.search(s, text, re.IGNORECASE) for s in HYBRID_SIGNS),
        tpu=any(re.search(s, text) for s in TPU_SIGNS),
        unknown=unknown,
    )


def _last(text: str, patterns: list[str]) -> float | None:
    """The number the last match of the first pattern that matches captures."""
    for pattern in patterns:
        matches = re.findall(pattern, text, re.MULTILINE)
        if matches:
            return float(matches[-1].replace(",", ""))
    return None


@dataclass(frozen=True)
class LogCheck:
    """A log held against a card, a share and (if given) a model, per GPU, and its verdict.

    `budget_gib` is the share of the card's measured total (what `cudaMemGetInfo`
    reports, `GPU.total_bytes`), as vLLM takes it. `non_cache_gib` is what the log
    implies for everything but weights and cache (activations, CUDA graphs,
    workspace, NCCL): budget - weights - cache, never below zero on a real log.
    `bytes_per_token` is what the log implies: its cache memory over its
    tokens. With a model, `predicted_tokens` is what the package makes of the
    logged cache memory, and `tokens_agree` says whether the logged tokens fall
    in the range the log's two-decimal rounding of the GiB allows.

    `verdict` is one of VERDICTS and `reason` says why, in a sentence.
    """

    log: VllmLog
    budget_gib: float
    non_cache_gib: float | None
    bytes_per_token: float | None
    predicted_tokens: int | None
    tokens_range: tuple[int, int] | None
    tokens_agree: bool | None
    concurrency_agree: bool | None
    verdict: str = ""
    reason: str = ""


VERDICTS = ("predicted", "refused", "cannot predict", "read", "unread", "disagrees")


def check_log(
    log: VllmLog, gpu: GPU, share: int, model: Model | None = None, tp: int = 1
) -> LogCheck:
    """Hold `log` against `gpu` at a whole-percent `share` of its measured total, and against
    `model` split over `tp` GPUs; end in a verdict and its reason."""
    of_type("log", log, VllmLog)
    of_type("gpu", gpu, GPU)
    share = whole("share", share, 1, 100)
    if model is not None:
        of_type("model", model, Model)
    budget = share / 100 * gpu.total_bytes / GIB
    rest = None
    if log.weights_gib is not None and log.kv_cache_gib is not None:
        rest = budget - log.weights_gib - log.kv_cache_gib
    per_token = None
    if log.kv_cache_gib is not None and log.kv_tokens:
        per_token = log.kv_cache_gib * GIB / log.kv_tokens
    predicted = span = agree = None
    if model is not None and log.kv_cache_gib is not None and log.kv_cache_gib > 0:
        predicted = pool_tokens(log.kv_cache_gib * GIB, model, tp)
        span = (
            pool_tokens((log.kv_cache_gib - HALF_STEP) * GIB, model, tp),
            pool_tokens((log.kv_cache_gib + HALF_STEP) * GIB, model, tp),
        )
        if log.tokens is not None:
            agree = any(span[0] <= tokens <= span[1] for tokens in _as_logged(span, log))
    concurrency = None
    if None not in (log.tokens, log.concurrency_len, log.max_concurrency):
        exact = log.tokens / log.concurrency_len
        concurrency = abs(exact - log.max_concurrency) <= HALF_STEP + 1e-9
    check = LogCheck(log, budget, rest, per_token, predicted, span, agree, concurrency)
    verdict, reason = _verdict(check, model, tp)
    return LogCheck(
        log, budget, rest, per_token, predicted, span, agree, concurrency, verdict, reason
    )


def _as_logged(span: tuple[int, int], log: VllmLog) -> list[int]:
    """The logged tokens, and, when the length is not whole blocks, what blocks x 16 would
    be: since 0.20.1 vLLM logs int(concurrency x max_model_len), under blocks x 16."""
    tokens = [log.tokens]
    length = log.concurrency_len
    if length and length % BLOCK_TOKENS and log.max_concurrency:
        per_request = -(-length // BLOCK_TOKENS)
        tokens.append(round(log.tokens / length * per_request) * BLOCK_TOKENS)
    return tokens


def cannot_predict(log: VllmLog, model: Model | None = None) -> list[str]:
    """Why the per-token formula with pages of 16 tokens cannot size this log's pool."""
    reasons = []
    if log.page_tokens is not None and log.page_tokens != BLOCK_TOKENS:
        reasons.append(
            f"its pages are {log.page_tokens:,} tokens, not {BLOCK_TOKENS}, so the "
            f"pool is cut into other blocks than the package's"
        )
    elif log.tpu:
        reasons.append(
            f"it is a TPU's log: the TPU backend sets its own page size (often 128 "
            f"or 256 tokens), not the {BLOCK_TOKENS} of vLLM on a GPU"
        )
    if log.hybrid or (model is not None and model.hybrid):
        reasons.append(
            "its model is hybrid: layers of linear attention or Mamba keep a fixed "
            "state per request in the same pool, which no per-token formula sizes "
            "(vllm/v1/kv_cache_interface.py:1135-1141)"
        )
    return reasons


def _verdict(check: LogCheck, model: Model | None, tp: int) -> tuple[str, str]:
    log = check.log
    if log.refused:
        return "refused", log.why_refused() + "."
    if not log.found:
        if log.unknown:
            lines = "1 line speaks" if len(log.unknown) == 1 else f"{len(log.unknown)} lines speak"
            return "unread", (
                f"no figure read: {lines} of the cache in a wording this reader "
                f"does not know (another server's, or a fork's), e.g. "
                f"{log.unknown[0][:80]!r}."
            )
        return "unread", "no figure read: nothing here is a vLLM start-up log's line."
    reasons = cannot_predict(log, model)
    if check.concurrency_agree is False:
        reasons.append(_concurrency_disagrees(log))
    if reasons:  # a log that fits no rule of the package, and why, or one that was edited
        kind = "cannot predict" if cannot_predict(log, model) else "disagrees"
        return kind, "; ".join(reasons) + "."
    if model is None:
        return "read", (
            "read, with no model to predict from"
            + (
                ": its cache size and its concurrency agree with each other."
                if check.concurrency_agree
                else "."
            )
        )
    if check.tokens_agree is None:
        if check.predicted_tokens is not None:
            return "read", (
                f"read: {log.kv_cache_gib:.2f} GiB of cache would hold "
                f"{check.predicted_tokens:,} tokens of {model.name}, and the log "
                f"gives no tokens to hold that against."
            )
        return "read", "read: the log gives no cache memory to predict its pool from."
    low, high = check.tokens_range
    if check.tokens_agree:
        return "predicted", (
            f"predicted: {log.kv_cache_gib:.2f} GiB hold {low:,} to {high:,} "
            f"tokens of {model.name}, and the log says {log.tokens:,}."
        )
    if tp > 1 and log.tokens < low:
        return "cannot predict", (
            f"with {tp} GPUs vLLM cuts every GPU to the smallest one's "
            f"blocks and logs only the first GPU's memory, so the "
            f"{log.tokens:,} tokens may be fewer than this GPU's "
            f"{log.kv_cache_gib:.2f} GiB hold ({low:,} to {high:,})."
        )
    return "disagrees", (
        f"{log.kv_cache_gib:.2f} GiB hold {low:,} to {high:,} tokens of "
        f"{model.name} at {model.cache_bytes_per_token(tp):,} bytes a token "
        f"per GPU, and the log says {log.tokens:,}: check the model, its "
        f"cache precision and the number of GPUs."
    )


def _concurrency_disagrees(log: VllmLog) -> str:
    exact = log.tokens / log.concurrency_len
    return (
        f"its cache size is not its concurrency times the length ({log.tokens:,} / "
        f"{log.concurrency_len:,} = {exact:.2f}, the log says {log.max_concurrency:.2f}x): "
        f"before vLLM 0.20.1 a model with several KV cache groups (hybrid or "
        f"sliding-window) logged its size per group (0.20.0's "
        f"vllm/v1/core/kv_cache_utils.py:1694), else the log was edited"
    )
