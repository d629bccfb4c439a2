"""A vLLM start-up log held against the floor plan: what it implies, and a verdict.

`check_log` holds a log read by `vllm_log.read_vllm_log` against a card, a share
and a model: the budget (a share of the card as vLLM measures it), what the log
leaves for activations, CUDA graphs and workspace, the tokens the package makes of
its cache memory, and a verdict with its reason: predicted, refused (and why vLLM
stopped), cannot predict (and why), read, unread (and the lines it could not read:
a wording this reader does not know), or disagrees. Never a bare "does not agree".
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.arguments import of_type, whole
from kvlesson.memory.floor import BLOCK_TOKENS, pool_tokens
from kvlesson.memory.specs import GIB, GPU, Model
from kvlesson.memory.vllm_log import HALF_STEP, VllmLog


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
    if log.errors:
        return "unread", _unknown_error(log)
    if not log.found:
        if log.unknown:
            lines = "1 line speaks" if len(log.unknown) == 1 else f"{len(log.unknown)} lines speak"
            return "unread", (
                f"no figure read: {lines} of the cache in a wording this reader "
                f"does not know (another server's, or a fork's), e.g. "
                f"{log.unknown[0][:80]!r}."
            )
        return "unread", "no figure read: nothing here is a vLLM start-up log's line."
    return _figures_verdict(check, model, tp)


def _unknown_error(log: VllmLog) -> str:
    """What the verdict says of an error line no refusal this reader knows names: that it
    does not know this wording, and the line itself, never "not a start-up log"."""
    read = "figures read, and then" if log.found else "no figure read:"
    return (
        f"{read} an error in a wording this reader does not know: {log.errors[-1][:160]!r}. "
        f"If vLLM stopped at start-up, that line says why, in words this course does not "
        f"cover: read it there (the reader knows vLLM 0.6 to 0.33's refusals by their words)."
    )


def _figures_verdict(check: LogCheck, model: Model | None, tp: int) -> tuple[str, str]:
    """The verdict on a log that gives figures and no refusal."""
    log = check.log
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
