"""Reading a vLLM start-up log: its figures, its refusal, and what it shows besides.

At start-up vLLM writes its floor plan to the log: what the weights took, the
memory left for the KV cache, the tokens that memory holds, and how many
requests of the longest length fit at once; or it stops, and says why. The
wording changed between versions; `log_wordings` holds every wording of 0.6 to
0.33, with its source.

`read_vllm_log` gives each figure as the log's last value (a log with restarts
describes the last start), None where the log does not say it, the refusal the
log shows, the signs that its pool is not sized by the per-token formula (pages
that are not 16 tokens, a hybrid model's state, a TPU), and the lines it could not
read: about the cache, or an error no refusal it knows names. `log_check` holds it
against a card, a share and a model, and ends in a verdict with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from kvlesson.arguments import whole
from kvlesson.memory.floor import BLOCK_TOKENS
from kvlesson.memory.log_wordings import (
    CACHE_WORDS,
    ERROR_LINE,
    FIGURES,
    HYBRID_SIGNS,
    REFUSALS,
    TPU_SIGNS,
    WHOLE,
    Refusal,
)

LOG_PLACES = 2  # vLLM prints GiB and the concurrency with two decimals
HALF_STEP = 0.5 * 10**-LOG_PLACES  # the most a figure so printed is off by
SIGNS = ("refusal", "hybrid", "tpu", "unknown", "errors")  # what a log shows besides figures


@dataclass(frozen=True)
class VllmLog:
    """What a vLLM start-up log says, per GPU; None where it does not say it.

    `refused_len` is the max_model_len a start-up error refused; `share` and
    `total_gib` come from the budget's line; `page_tokens` is the page (block)
    size the log states, when it states one; `max_num_seqs` the cap on running
    requests the launch gave (its arguments, or an error that names it) and
    `mamba_blocks` the pool's blocks a hybrid model's refusal names. `refusal` is
    the way vLLM stopped, `hybrid` and `tpu` whether the log shows a hybrid model
    or a TPU, `unknown` the lines about the cache in a wording this reader does not
    know, and `errors` the error lines no refusal it knows names.
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
    max_num_seqs: int | None = None
    mamba_blocks: int | None = None
    refused_len: int | None = None
    total_gib: float | None = None
    share: float | None = None
    page_tokens: int | None = None
    refusal: Refusal | None = None
    hybrid: bool = False
    tpu: bool = False
    unknown: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

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
            return f"vLLM stopped at start-up ({self.refusal.name}): {self._meaning()}"
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

    def _meaning(self) -> str:
        """The refusal's meaning, with the numbers its line gives where it names them."""
        seqs, blocks = self.max_num_seqs, self.mamba_blocks
        if self.refusal.name.startswith("max_num_seqs") and None not in (seqs, blocks):
            return (
                f"max_num_seqs is {seqs:,} and the pool has {blocks:,} blocks; "
                f"{self.refusal.meaning.replace('the blocks the line names', f'{blocks:,}')}"
            )
        return self.refusal.meaning

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
        errors=() if refusal is not None else _errors(text, unknown),
    )


def _errors(text: str, unknown: tuple[str, ...]) -> tuple[str, ...]:
    """The error lines of a log that shows no refusal this reader knows (each once, those
    about the cache already among `unknown` left out): a wording it does not know."""
    lines = (line.strip() for line in text.splitlines() if re.search(ERROR_LINE, line))
    return tuple(dict.fromkeys(line for line in lines if line not in unknown))


def _last(text: str, patterns: list[str]) -> float | None:
    """The number the last match of the first pattern that matches captures."""
    for pattern in patterns:
        matches = re.findall(pattern, text, re.MULTILINE)
        if matches:
            return float(matches[-1].replace(",", ""))
    return None
