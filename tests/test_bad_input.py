"""Wrong input stops with a message that names the parameter and what is allowed.

A share of 0, 90.5, "90" or True, a cap of 0, an empty list of chats: each
public function refuses them with the right error type (TypeError for the
wrong kind of thing, ValueError for a wrong value) before it computes a
wrong number. A server that cannot start says what it needs and what to do.
"""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pandas as pd
import pytest

import kvlesson as kv
from kvlesson.grading.checks import probes
from kvlesson.lesson.numbers import lesson_numbers
from kvlesson.memory.specs import LLAMA_31_8B_CONFIG
from support.command import kvlesson

CHATS = [(30, 10)]  # one small chat: the argument under test fails before any serving
NAN, INF = float("nan"), float("inf")
reference_sweep = partial(kv.cap_sweep, engine="reference")  # the fast engine is tested apart


# --- Shares: whole percents, 1..100 --------------------------------------------

SHARE_CALLS = {
    "memory_parts": lambda share: kv.memory_parts(share),
    "room": lambda share: kv.room(share, 8_000),
    "serve": lambda share: kv.serve(CHATS, 8, share=share),
    "trace": lambda share: kv.trace(CHATS, 8, share=share),
    "cap_sweep": lambda share: reference_sweep(CHATS, [1], share=share),
    "lesson_numbers": lambda share: lesson_numbers(share=share),
}
BAD_SHARES = [
    (0, ValueError, r"share must be in 1\.\.100, got 0"),
    (101, ValueError, r"share must be in 1\.\.100, got 101"),
    (-5, ValueError, r"share must be in 1\.\.100, got -5"),
    (90.5, ValueError, r"share must be a whole number \(1\.\.100\), got 90\.5"),
    (NAN, ValueError, r"share must be a whole number \(1\.\.100\), got nan"),
    (INF, ValueError, r"share must be a whole number \(1\.\.100\), got inf"),
    ("90", TypeError, r"share must be a whole number \(1\.\.100\), not str '90'"),
    (True, TypeError, r"share must be a whole number \(1\.\.100\), not bool True"),
]


@pytest.mark.parametrize("share, error, match", BAD_SHARES)
@pytest.mark.parametrize("call", SHARE_CALLS.values(), ids=SHARE_CALLS.keys())
def test_bad_share(call, share, error, match):
    with pytest.raises(error, match=match):
        call(share)


@pytest.mark.parametrize(
    "call",
    [lambda: kv.memory_parts(None), lambda: kv.room(None, 8_000)],
    ids=["memory_parts", "room"],
)
def test_share_none_where_a_number_is_meant(call):
    with pytest.raises(TypeError, match=r"share must be a whole number \(1\.\.100\), not NoneType"):
        call()


@pytest.mark.parametrize("share", [90.0, np.int64(90), 90])
def test_a_whole_share_of_any_number_type_is_accepted(share):
    assert kv.memory_parts(share).blocks == 25_720


# --- Whole numbers of 1 or more: tokens, caps, blocks, model sizes --------------

WHOLE_CALLS = [
    ("tokens", "blocks_for", lambda v: kv.blocks_for(v)),
    ("tokens", "prefill_seconds", lambda v: kv.prefill_seconds(v)),
    ("prompt", "Chat", lambda v: kv.Chat(v, 10)),
    ("reply", "Chat", lambda v: kv.Chat(10, v)),
    ("n", "lesson_chats", lambda v: kv.lesson_chats(n=v)),
    ("longest", "room", lambda v: kv.room(90, v)),
    ("longest", "lowest_share", lambda v: kv.lowest_share(v)),
    ("longest", "serve", lambda v: kv.serve(CHATS, 8, longest=v)),
    ("longest", "lesson_numbers", lambda v: lesson_numbers(longest=v)),
    ("cap", "serve", lambda v: kv.serve(CHATS, v)),
    ("cap", "trace", lambda v: kv.trace(CHATS, v)),
    ("cap", "cap_sweep", lambda v: reference_sweep(CHATS, [v])),
    ("blocks", "serve", lambda v: kv.serve(CHATS, 8, longest=None, blocks=v)),
    ("max_steps", "trace", lambda v: kv.trace(CHATS, 8, max_steps=v)),
    ("params", "Model", lambda v: kv.Model("m", v, 32, 8, 128)),
    ("layers", "Model", lambda v: kv.Model("m", 10**9, v, 8, 128)),
    ("kv_heads", "Model", lambda v: kv.Model("m", 10**9, 32, v, 128)),
    ("head_size", "Model", lambda v: kv.Model("m", 10**9, 32, 8, v)),
    ("bytes_per_number", "Model", lambda v: kv.Model("m", 10**9, 32, 8, 128, v)),
    ("memory_bytes", "GPU", lambda v: kv.GPU("g", v, 312e12, 2.039e12)),
]
BAD_WHOLES = [
    (0, ValueError),
    (-3, ValueError),
    (1.5, ValueError),
    (NAN, ValueError),
    ("10", TypeError),
    (True, TypeError),
]


@pytest.mark.parametrize("value, error", BAD_WHOLES)
@pytest.mark.parametrize(
    "name, where, call", WHOLE_CALLS, ids=[f"{w}-{n}" for n, w, _ in WHOLE_CALLS]
)
def test_bad_whole_number(name, where, call, value, error):
    with pytest.raises(error, match=rf"^{name} must be .*1 or more"):
        call(value)


@pytest.mark.parametrize(
    "name, call",
    [
        ("tokens", lambda: kv.blocks_for(None)),
        ("cap", lambda: kv.serve(CHATS, None)),
        ("longest", lambda: kv.room(90, None)),
        ("longest", lambda: kv.lowest_share(None)),
        ("max_steps", lambda: kv.trace(CHATS, 8, max_steps=None)),
    ],
)
def test_none_where_a_whole_number_is_meant(name, call):
    with pytest.raises(TypeError, match=rf"^{name} must be a whole number \(1 or more\), not None"):
        call()


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (1.5, ValueError), ("2026", TypeError)])
def test_bad_seed(seed, error):
    with pytest.raises(error, match=r"seed must be .*0 or more"):
        kv.lesson_chats(seed=seed)


# --- Positive real numbers: speeds, the reserve, what pays -----------------------

POSITIVE_CALLS = [
    ("peak_flops", lambda v: kv.GPU("g", 80 * 10**9, v, 2.039e12), False),
    ("bandwidth", lambda v: kv.GPU("g", 80 * 10**9, 312e12, v), False),
    ("reserve_bytes", lambda v: kv.memory_parts(90, reserve_bytes=v), True),
    ("reserve_bytes", lambda v: kv.serve(CHATS, 8, blocks=500, reserve_bytes=v), True),
    (
        "pays",
        lambda v: kv.stops_paying(
            pd.DataFrame({"cap": [1, 2], "tokens_per_s": [1.0, 2.0]}), pays=v
        ),
        False,
    ),
]
BAD_POSITIVES = [
    (-1, ValueError),
    (NAN, ValueError),
    (INF, ValueError),
    ("1", TypeError),
    (None, TypeError),
    (True, TypeError),
]


@pytest.mark.parametrize("value, error", BAD_POSITIVES)
@pytest.mark.parametrize("name, call, zero_ok", POSITIVE_CALLS, ids=[c[0] for c in POSITIVE_CALLS])
def test_bad_positive_number(name, call, zero_ok, value, error):
    bound = ">= 0" if zero_ok else "> 0"
    with pytest.raises(error, match=rf"^{name} must be .*{bound}"):
        call(value)


@pytest.mark.parametrize("name, call", [(n, c) for n, c, zero_ok in POSITIVE_CALLS if not zero_ok])
def test_zero_speed_or_pays_is_refused(name, call):
    with pytest.raises(ValueError, match=rf"^{name} must be > 0, got 0"):
        call(0)


def test_a_reserve_of_zero_is_allowed():
    assert kv.memory_parts(90, reserve_bytes=0).blocks == (72 * 10**9 - 16_060_522_496) // 2_097_152


# --- reserved is True or False ------------------------------------------------------

RESERVED_CALLS = {
    "room": lambda v: kv.room(90, 8_000, reserved=v),
    "serve": lambda v: kv.serve(CHATS, 8, reserved=v),
    "trace": lambda v: kv.trace(CHATS, 8, longest=8_000, reserved=v),
    "cap_sweep": lambda v: reference_sweep(CHATS, [1], reserved=v),
}


@pytest.mark.parametrize("value", [1, 0, "yes", None])
@pytest.mark.parametrize("call", RESERVED_CALLS.values(), ids=RESERVED_CALLS.keys())
def test_reserved_must_be_a_bool(call, value):
    with pytest.raises(TypeError, match="reserved must be True or False"):
        call(value)


# --- Chats: a non-empty list of Chat or (prompt, reply) pairs -----------------------

CHATS_CALLS = {
    "serve": lambda chats: kv.serve(chats, 8),
    "trace": lambda chats: kv.trace(chats, 8),
    "cap_sweep": lambda chats: reference_sweep(chats, [1]),
    "prefill_floor": lambda chats: kv.prefill_floor(chats),
    "lesson_numbers": lambda chats: lesson_numbers(chats=chats),
}
BAD_CHATS = [
    ([], ValueError, "chats must hold at least one chat"),
    ("abc", TypeError, "chats must be a list of Chat or"),
    (5, TypeError, "chats must be a list of Chat or"),
    ([(30, 10, 5)], TypeError, r"chats\[0\] must be a Chat or a \(prompt, reply\) pair"),
    ([(30, 10), 7], TypeError, r"chats\[1\] must be a Chat or a \(prompt, reply\) pair"),
    ([(0, 10)], ValueError, r"prompt must be in 1 or more, got 0"),
    ([("30", 10)], TypeError, r"prompt must be a whole number \(1 or more\)"),
]


@pytest.mark.parametrize("chats, error, match", BAD_CHATS)
@pytest.mark.parametrize("call", CHATS_CALLS.values(), ids=CHATS_CALLS.keys())
def test_bad_chats(call, chats, error, match):
    with pytest.raises(error, match=match):
        call(chats)


# --- GPUs and models: objects, or names where a lookup is meant ----------------------

SPEC_CALLS = {
    "memory_parts": lambda **kw: kv.memory_parts(90, **kw),
    "room": lambda **kw: kv.room(90, 8_000, **kw),
    "lowest_share": lambda **kw: kv.lowest_share(8_000, **kw),
    "serve": lambda **kw: kv.serve(CHATS, 8, **kw),
    "cap_sweep": lambda **kw: reference_sweep(CHATS, [1], **kw),
    "prefill_seconds": lambda **kw: kv.prefill_seconds(100, **kw),
    "prefill_floor": lambda **kw: kv.prefill_floor(CHATS, **kw),
}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"gpu": "A100_80GB"}, "gpu must be a GPU, not str"),
        ({"gpu": None}, "gpu must be a GPU, not NoneType"),
        ({"model": "LLAMA_31_8B"}, "model must be a Model, not str"),
        ({"model": kv.A100_80GB}, "model must be a Model, not GPU"),
    ],
)
@pytest.mark.parametrize("call", SPEC_CALLS.values(), ids=SPEC_CALLS.keys())
def test_gpu_and_model_must_be_specs(call, kwargs, match):
    with pytest.raises(TypeError, match=match):
        call(**kwargs)


@pytest.mark.parametrize(
    "lookup, name, kind",
    [
        (kv.gpu, "B200", "gpu"),
        (kv.gpu, 5, "gpu"),
        (kv.gpu, None, "gpu"),
        (kv.gpu, "", "gpu"),
        (kv.model, "gpt-4", "model"),
        (kv.model, 8, "model"),
        (kv.model, "LLAMA", "model"),
    ],
)
def test_unknown_names_list_the_known_ones(lookup, name, kind):
    known = "A100_80GB, A100_80GIB, A100_40GB, H100_80GB" if kind == "gpu" else "LLAMA_31_8B"
    with pytest.raises(ValueError, match=rf"^{kind} must be one of {known}"):
        lookup(name)


def test_lookups_take_any_case_and_pass_specs_through():
    assert kv.gpu("h100_80gb") is kv.H100_80GB
    assert kv.gpu(kv.A100_40GB) is kv.A100_40GB
    assert kv.model("llama_33_70b") is kv.LLAMA_33_70B


# --- Model.from_hf_config ----------------------------------------------------------


def config(**changes) -> dict:
    out = dict(LLAMA_31_8B_CONFIG, **changes)
    return {key: value for key, value in out.items() if value is not ...}


@pytest.mark.parametrize(
    "cfg, error, match",
    [
        (config(vocab_size=...), ValueError, "config is missing vocab_size"),
        (
            config(hidden_size=..., num_hidden_layers=...),
            ValueError,
            "config is missing hidden_size, num_hidden_layers",
        ),
        (config(torch_dtype="int4"), ValueError, "torch_dtype must be one of bfloat16, float16"),
        (
            config(hidden_size="4096"),
            TypeError,
            r"hidden_size must be a whole number \(1 or more\)",
        ),
        (config(num_key_value_heads=0), ValueError, "num_key_value_heads must be in 1 or more"),
        (config(num_hidden_layers=31.5), ValueError, "num_hidden_layers must be a whole number"),
        (config(intermediate_size=True), TypeError, "intermediate_size must be a whole number"),
    ],
)
def test_bad_hf_config(cfg, error, match):
    with pytest.raises(error, match=match):
        kv.Model.from_hf_config(cfg)


def test_hf_config_from_a_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_31_8B_CONFIG))
    assert kv.Model.from_hf_config(path) == kv.LLAMA_31_8B
    assert kv.Model.from_hf_config(str(path)) == kv.LLAMA_31_8B
    with pytest.raises(FileNotFoundError, match="nope.json"):
        kv.Model.from_hf_config(tmp_path / "nope.json")


# --- The pool: share or blocks, and room for one chat of the ceiling -----------------

POOL_CALLS = {
    "serve": lambda **kw: kv.serve(CHATS, 8, **kw),
    "trace": lambda **kw: kv.trace(CHATS, 8, **kw),
    "cap_sweep": lambda **kw: reference_sweep(CHATS, [1], **kw),
}


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (
            {"share": 90, "blocks": 1_000},
            ValueError,
            r"give the pool as share \(percent\) or as blocks, not both",
        ),
        (
            {"blocks": 499, "longest": 8_000},
            kv.ServerWontStart,
            r"blocks must be at least 500 to hold one chat of the longest length \(8,000 tokens\), got 499",
        ),
        (
            {"blocks": 100, "longest": None, "reserved": True},
            ValueError,
            "reserved=True needs a ceiling",
        ),
        (
            {"blocks": 100, "longest": 39},
            ValueError,
            r"every chat passes the ceiling \(39 tokens\)",
        ),
        (
            {"blocks": 2, "longest": None},
            ValueError,
            r"every chat passes the ceiling \(the pool of 2 blocks\)",
        ),
    ],
)
@pytest.mark.parametrize("call", POOL_CALLS.values(), ids=POOL_CALLS.keys())
def test_bad_pool(call, kwargs, error, match):
    with pytest.raises(error, match=match):
        call(**kwargs)


WONT_START = {
    "serve": lambda: kv.serve(CHATS, 8, share=40, longest=128_000),
    "trace": lambda: kv.trace(CHATS, 8, share=40, longest=128_000),
    "cap_sweep": lambda: reference_sweep(CHATS, [1], share=40, longest=128_000),
    "check_starts": lambda: kv.check_starts(kv.memory_parts(40), 128_000),
}


@pytest.mark.parametrize("call", WONT_START.values(), ids=WONT_START.keys())
def test_server_wont_start_at_40_percent_with_128000(call):
    with pytest.raises(kv.ServerWontStart) as caught:
        call()
    message = str(caught.value)
    assert "the cache needs 16.78 GB (8,000 blocks)" in message
    assert "only 13.94 GB (6,646 blocks) is available at a share of 40%" in message
    assert "Raise the memory share (gpu_memory_utilization; to at least 44%)" in message
    assert "lower the longest chat (max_model_len; at most 106,336 tokens)" in message


def test_server_wont_start_is_a_value_error():
    assert issubclass(kv.ServerWontStart, ValueError)


def test_server_wont_start_without_a_block():
    with pytest.raises(
        kv.ServerWontStart,
        match="to at least 24%.: at this share the weights and the reserve leave no block for any chat",
    ):
        kv.serve(CHATS, 8, share=20)


def test_no_share_is_enough_for_a_model_larger_than_the_card():
    with pytest.raises(
        kv.ServerWontStart, match="no share of this GPU is enough for Llama 3.3 70B"
    ):
        kv.lowest_share(8_000, model=kv.LLAMA_33_70B)


def test_trace_is_for_small_cases():
    with pytest.raises(ValueError, match="trace is for small cases: the run passed max_steps=5"):
        kv.trace([(10, 100)], 1, max_steps=5)


# --- The sweep ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "caps, error, match",
    [
        ([], TypeError, "caps must be a non-empty list"),
        (5, TypeError, "caps must be a non-empty list"),
        ("1248", TypeError, "caps must be a non-empty list"),
        ([8, 4], ValueError, r"caps must rise, got \[8, 4\]"),
        ([4, 4], ValueError, r"caps must rise, got \[4, 4\]"),
        ([1, 0], ValueError, "cap must be in 1 or more, got 0"),
    ],
)
def test_bad_caps(caps, error, match):
    with pytest.raises(error, match=match):
        reference_sweep(CHATS, caps)


@pytest.mark.parametrize("engine", ["turbo", None, "Reference"])
def test_bad_engine(engine):
    with pytest.raises(ValueError, match="engine must be 'fast' or 'reference'"):
        reference_sweep(CHATS, [1], engine=engine)


@pytest.mark.parametrize(
    "sweep, error, match",
    [
        ([1, 2], TypeError, "sweep must be a DataFrame, not list"),
        (
            pd.DataFrame({"cap": [1, 2]}),
            ValueError,
            "sweep must have the columns cap and tokens_per_s.*missing tokens_per_s",
        ),
        (
            pd.DataFrame({"cap": [1], "tokens_per_s": [1.0]}),
            ValueError,
            "sweep must have at least 2 rows",
        ),
    ],
)
def test_bad_sweep_for_stops_paying(sweep, error, match):
    with pytest.raises(error, match=match):
        kv.stops_paying(sweep)


# --- Students' answers, as the self-checks read them ----------------------------------------


def pool_probe(kind):
    """A self-check probe of the variable answer `pool`, in GB, of the given kind."""
    make = {
        "number": lambda: probes.number("pool", lambda: None, "GB", 1),
        "count": lambda: probes.count("pool", lambda: None, "GB"),
        "yes_no": lambda: probes.yes_no("pool", lambda: None),
    }
    return make[kind]()


@pytest.mark.parametrize(
    "kind, value, error, match",
    [
        (
            "number",
            "53.9 GB",
            probes.WrongKind,
            "Not yet: pool should be a number of GB, not the str '53.9 GB'. Write the number "
            "alone, without quotes or units: pool = 53.9",
        ),
        ("number", True, probes.WrongKind, "Not yet: pool should be a number of GB"),
        ("number", None, probes.WrongKind, "Not yet: pool should be a number of GB"),
        ("number", NAN, probes.NotYet, "Not yet: pool should be a finite number of GB, got nan"),
        ("number", INF, probes.NotYet, "Not yet: pool should be a finite number of GB, got inf"),
        (
            "count",
            "205",
            probes.WrongKind,
            "Not yet: pool should be a whole number of GB, not the str '205'. Write the number "
            "alone, without quotes or units: pool = 205",
        ),
        ("count", 205.0, probes.WrongKind, "Not yet: pool should be a whole number of GB, an int"),
        ("count", False, probes.WrongKind, "Not yet: pool should be a whole number of GB"),
        ("yes_no", "yes", probes.WrongKind, r"Not yet: pool should be True or False \(no quotes\)"),
        ("yes_no", 1, probes.WrongKind, r"Not yet: pool should be True or False \(no quotes\)"),
    ],
)
def test_bad_answers(kind, value, error, match):
    with pytest.raises(error, match=match):
        probes.normal(pool_probe(kind), value)


def test_a_function_that_returns_none_is_told_so():
    probe = probes.count("chat_blocks(17)", lambda: None, "blocks")
    with pytest.raises(
        probes.WrongKind,
        match=r"Not yet: chat_blocks\(17\) returned None\. "
        r"The function chat_blocks should end with a `return`",
    ):
        probes.normal(probe, None)


def test_good_answers_come_back_in_the_checked_form():
    assert probes.normal(pool_probe("number"), 53.94) == "num:53.9"
    assert probes.normal(pool_probe("number"), 8) == "num:8.0"
    assert probes.normal(pool_probe("count"), 205) == "int:205"
    assert probes.normal(pool_probe("yes_no"), False) == "bool:False"


# --- kvlesson numbers --------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--share", "0"], "share must be in 1..100, got 0"),
        (["--share", "101"], "share must be in 1..100, got 101"),
        (["--share", "ninety"], "argument --share: invalid int value: 'ninety'"),
        (["--longest", "0"], "longest must be in 1 or more, got 0"),
        (["--reserve-gb", "-1"], "--reserve-gb must be >= 0, got -1.0"),
        (["--gpu", "B200"], "argument --gpu: invalid choice: 'B200'"),
    ],
)
def test_cli_usage_errors(args, message):
    run = kvlesson("numbers", *args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert "usage: kvlesson numbers" in run.stderr
    assert message in run.stderr


def test_cli_says_when_the_server_will_not_start():
    run = kvlesson("numbers", "--share", "40", "--longest", "128000")
    assert run.returncode == 0
    assert "the server will not start" in run.stdout
    assert "to at least 44%" in run.stdout
