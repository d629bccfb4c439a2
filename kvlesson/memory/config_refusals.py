"""What vLLM 0.33 refuses before it loads anything, in its own words.

Two checks of a launch's configuration stop vLLM before a byte of the card is
used, and the start-up (`startup`) and notebook 5's explorer both give their
reasons:

* tensor parallel: tp must divide the attention heads (vllm/config/model.py:1557-1564),
  and the KV heads are split evenly over the GPUs or each is copied to the same
  number of them (`divide` in vllm/model_executor/layers/linear.py:1063-1071);
* the longest request: `max_model_len` may not pass the length the model's config
  allows, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set
  (`_get_and_verify_max_len`, vllm/config/model.py:2655-2680).
"""

from __future__ import annotations


def tp_refusal(heads: int | None, kv_heads: int, tp: int) -> str | None:
    """Why vLLM refuses to split a model of `heads` attention heads (None: not known) and
    `kv_heads` KV heads over `tp` GPUs, or None.

    >>> tp_refusal(28, 4, 8)
    'ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).'
    """
    if heads is not None and heads % tp:
        return (
            f"ValueError: Total number of attention heads ({heads}) must be "
            f"divisible by tensor parallel size ({tp})."
        )
    if kv_heads % tp and tp % kv_heads:
        larger, smaller = max(tp, kv_heads), min(tp, kv_heads)
        return (
            f"AssertionError: {larger} is not divisible by {smaller} (the {kv_heads} "
            f"KV heads cannot be split evenly over tp={tp} GPUs, nor each copied to "
            f"the same number of them)"
        )
    return None


def max_len_refusal(
    longest: int, context: int | None, key: str = "max_position_embeddings"
) -> str | None:
    """Why vLLM refuses `max_model_len=longest` for a model whose config allows `context`
    tokens (read from `key`), or None (a length within it, or no length known).

    >>> max_len_refusal(32_768, 32_768) is None
    True
    """
    if context is None or longest <= context:
        return None
    given = context if key == "model_max_length" else None
    return (
        f"ValueError: User-specified max_model_len ({longest}) is greater than the derived "
        f"max_model_len ({key}={context} or model_max_length={given} in model's "
        f"config.json). To allow overriding this maximum, set the env var "
        f"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with "
        f"extreme caution. If the model uses relative position encoding (RoPE), positions "
        f"exceeding derived_max_model_len lead to nan. If the model uses absolute position "
        f"encoding, positions exceeding derived_max_model_len will cause a CUDA array "
        f"out-of-bounds error."
    )
