"""What vLLM 0.33 refuses before it loads anything, in its own words.

Two checks of a launch's configuration stop vLLM before a byte of the card is
used, and the start-up (`startup`) and notebook 5's explorer both give their
reasons:

* tensor parallel: tp must divide the attention heads (vllm/config/model.py:1557-1564),
  the KV heads are split evenly over the GPUs or each is copied to the same number of
  them (`divide` in vllm/model_executor/layers/linear.py:1063-1071), and the MLP's
  inner size is split evenly too (`divide(output_size, tp)` and `divide(input_size, tp)`
  for its column and row layers, linear.py:497-502 and :1708; `divide` asserts it,
  vllm/distributed/utils.py:51-55): Qwen2.5 7B, 28 heads, 4 KV heads and an MLP of
  18,944, splits its heads over 28 GPUs but not its MLP;
* the longest request: `max_model_len` may not pass the length the model's config
  allows, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set
  (`_get_and_verify_max_len`, vllm/config/model.py:2655-2680).
"""

from __future__ import annotations


def tp_refusal(
    heads: int | None, kv_heads: int, tp: int, mlp_size: int | None = None
) -> str | None:
    """Why vLLM refuses to split a model of `heads` attention heads (None: not known),
    `kv_heads` KV heads and an MLP of `mlp_size` (None: not known) over `tp` GPUs, or None.

    >>> tp_refusal(28, 4, 8)
    'ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).'
    >>> tp_refusal(28, 4, 28, mlp_size=18_944)
    "AssertionError: 18944 is not divisible by 28 (the MLP's 18,944 rows cannot be split evenly over tp=28 GPUs)"
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
    if mlp_size is not None and mlp_size % tp:
        return (
            f"AssertionError: {mlp_size} is not divisible by {tp} (the MLP's {mlp_size:,} "
            f"rows cannot be split evenly over tp={tp} GPUs)"
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
