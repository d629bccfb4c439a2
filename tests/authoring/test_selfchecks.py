"""The self-checks tell the truth, and every key is true.

For each exercise of every notebook, wrong versions of the instructor's answer are made
systematically (`kvlesson.authoring.mutants`: off by one, // for a ceiling, / for //, a
factor 2 dropped, a term dropped, > for >=, GB for GiB and back, the percent not divided,
the notebook's global for the argument, a float for an int), taken from the exercise's own
declared mistakes (`kvlesson.grading.checks.rules`), and written by hand below (`HAND`: the
mistakes a student makes that no mutation makes). Each runs in the released notebook answered
right up to that exercise (tests/support/variants.py): its answer, the released self-check
(what the student sees), then the hidden test, whose record line `kvlesson.grading.marking`
scores against the key outside the kernel (the grade). The right answer must pass both; a
wrong one the grade rejects must fail the self-check with a message that starts "Not yet:"
(no lie), and the grade must reject every answer that is wrong somewhere in the exercise's
domain (none blind). Every probe, hidden and visible, is also worked out by the exercise's
declared authority and held against the key and the stamp.

One exercise alone: `pytest tests/authoring/test_selfchecks.py -k ex2_1` runs notebook 2 up
to Exercise 2.1 and that exercise's answers only.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest

from kvlesson.authoring import command
from kvlesson.grading.course import notebooks
from kvlesson.grading.course.key import key_path, read_key
from support.paths import ROOT
from support.variants import Exercise, bound_names, exercises_of, read, run_variants

pytestmark = pytest.mark.process  # every test here runs kernels (the notebooks' own)

NAMES = command.assignments(ROOT)
EXERCISES = [(name, grade_id) for name in NAMES for grade_id in exercises_of(name)]
REPORT = ROOT / "artifacts" / "selfcheck_variants.json"
THIS = Path(__file__).resolve()
MOST_WRITTEN = 3  # hand-written wrong answers an exercise has at least

# Mistakes no one-spot mutation of the solution makes, written as a student would: (label,
# answer code, text the self-check's message must contain or None). "static" in a label: the
# grade rejects it by reading the answer cell (a forbidden name), not by its values; the
# self-check reads the cell that set the variable in IPython's history.
_Q1_POOL = (
    "pool_gb = (Q1_SHARE / 100 * gpu.memory_bytes - model.weights_bytes - kv.RESERVE_BYTES) / 1e9"
)
_Q1_UNUSED = "unused_gb = (gpu.memory_bytes - Q1_SHARE / 100 * gpu.memory_bytes) / 1e9"
_Q3_POOL = "pool_q3 = Q3_SHARE / 100 * gpu.memory_bytes - model.weights_bytes - kv.RESERVE_BYTES"
_Q3_BLOCKS = "blocks_q3 = max(0, int(pool_q3 // (kv.BLOCK_TOKENS * model.bytes_per_token)))"
_Q3 = f"{_Q3_POOL}\npool_gb_q3 = pool_q3 / 1e9\n{_Q3_BLOCKS}\n"
_TRACE = (
    "case = [kv.Chat(prompt=20, reply=30), kv.Chat(prompt=40, reply=12), "
    "kv.Chat(prompt=10, reply=25)]\n"
    "tight = kv.trace(case, cap=10, blocks=6, gpu=gpu, model=model)\n"
    "wide = kv.trace(case, cap=10, blocks=100, gpu=gpu, model=model)\n"
)
_H100 = (
    "def starts_on_h100(model, tp, share, longest=131_072):\n"
    "    if model.heads % tp or (model.kv_heads % tp and tp % model.kv_heads):\n"
    "        return False\n"
    "    per_token = 2 * model.layers * max(1, model.kv_heads // tp) * model.head_size * "
    "model.bytes_per_number\n"
)
_POOL = "    pool = share / 100 * kv.H100_80GB.total_bytes - model.weights_bytes / tp - 3e9\n"
_BLOCKS = "    blocks = max(0, int(pool // (16 * per_token)))\n"
_CHOICES = {
    "assistant": "dict(share=90, longest=32_000, cap=4, budget=1_024, admission=None)",
    "office": "dict(share=95, longest=16_000, cap=64, budget=256, admission=None)",
    "app": "dict(share=90, longest=8_000, cap=64, budget=256, admission=None)",
}
_Q7 = (
    "q7_freeze_ms = kv.latency(kv.serve(bob_day, CAP, budget=Q7_BUDGET, **card))"
    ".itl.worst * 1000\n"
    "long_day = traffic_numbers.reasoning_agents()\nrig = traffic_numbers.rig()\n"
    "q7_pauses_budget = kv.serve_fast(long_day, traffic_numbers.SERVER_CAP, "
    "**{**rig, 'budget': Q7_RIG_BUDGET}).pauses\n"
    "q7_pauses_pool = kv.serve_fast(long_day, traffic_numbers.SERVER_CAP, "
    "**{**rig, 'blocks': Q7_BLOCKS}).pauses\n"
)


def _choices(user: str, choice: str) -> str:
    """The capstone's answer cell with `user`'s choice replaced."""
    return "\n".join(
        f"{name}_choice = {choice if name == user else right}" for name, right in _CHOICES.items()
    )


HAND = {
    "ex0_1_tests": [
        (
            "the notebook's model, 2 bytes written in",
            "def cache_bytes_per_token(m):\n"
            "    return 2 * model.layers * model.kv_heads * model.head_size * 2",
            "not the notebook's `model`",
        ),
        (
            "the package's answer",
            "def cache_bytes_per_token(m):\n    return m.bytes_per_token",
            "calls",
        ),
        (
            "no return",
            "def cache_bytes_per_token(m):\n    2 * m.layers * m.kv_heads * m.head_size"
            " * m.bytes_per_number",
            "returned None",
        ),
        (
            "bits, not bytes",
            "def cache_bytes_per_token(m):\n    return 2 * m.layers * m.kv_heads * "
            "m.head_size * m.bytes_per_number * 8",
            "Re-read the formula above",
        ),
        (
            "a string",
            "def cache_bytes_per_token(m):\n    return f'{2 * m.layers * m.kv_heads} KB'",
            "should give a number",
        ),
        (
            "the bytes per number written in as 2",
            "def cache_bytes_per_token(m):\n    return 2 * m.layers * m.kv_heads * m.head_size * 2",
            None,
        ),
        (
            "a head's size for the KV heads' size",
            "def cache_bytes_per_token(m):\n    return 2 * m.layers * m.heads * m.bytes_per_number",
            None,
        ),
    ],
    "ex0_2_tests": [
        (
            "in bytes",
            "def weights_gb(m):\n    return m.params * m.bytes_per_number",
            "looks like it is in bytes; the question asks for GB",
        ),
        (
            "the parameters alone",
            "def weights_gb(m):\n    return m.params / 1e9",
            "a factor is missing: `m.bytes_per_number`",
        ),
        ("bits for bytes", "def weights_gb(m):\n    return m.params * 16 / 1e9", None),
        ("the package's answer", "def weights_gb(m):\n    return m.weights_bytes / 1e9", "calls"),
        ("a string", 'def weights_gb(m):\n    return "16.06 GB"', "should give a number"),
        (
            "rounded by formatting",
            "def weights_gb(m):\n    return float(f'{m.params * m.bytes_per_number / 1e9:.2f}')",
            "that is rounded, and the self-check compares three decimals",
        ),
        ("in GiB", "def weights_gb(m):\n    return m.params * m.bytes_per_number / 2**30", "GiB"),
    ],
    "practice_tests": [
        (
            "a float",
            "block_bytes = 16.0 * model.bytes_per_token",
            "is the right number, but a float",
        ),
        (
            "in KiB",
            "block_bytes = kv.BLOCK_TOKENS * model.bytes_per_token / 1024",
            "looks like it is in KiB; the question asks for bytes",
        ),
        ("one token", "block_bytes = model.bytes_per_token", "not one block's bytes"),
        ("in MiB", "block_bytes = kv.BLOCK_TOKENS * model.bytes_per_token / 2**20", "MiB"),
        ("K only", "block_bytes = kv.BLOCK_TOKENS * model.bytes_per_token // 2", None),
    ],
    "q1_pool_tests": [
        (
            "the notebook's share",
            "pool_gb = (SHARE / 100 * gpu.memory_bytes - "
            f"model.weights_bytes - kv.RESERVE_BYTES) / 1e9\n{_Q1_UNUSED}",
            "Re-read the sum above",
        ),
        (
            "the card in GiB",
            "pool_gb = (Q1_SHARE / 100 * 80 * 2**30 - model.weights_bytes - "
            f"kv.RESERVE_BYTES) / 1e9\n{_Q1_UNUSED}",
            None,
        ),
        (
            "in bytes",
            "pool_gb = Q1_SHARE / 100 * gpu.memory_bytes - model.weights_bytes - "
            f"kv.RESERVE_BYTES\n{_Q1_UNUSED}",
            "looks like it is in bytes; the question asks for GB",
        ),
        ("a string", f'pool_gb = "53.9 GB"\n{_Q1_UNUSED}', "should be a number of GB"),
        (
            "static: the package's answer",
            f"pool_gb = kv.memory_parts(Q1_SHARE, gpu, model).pool_bytes / 1e9\n{_Q1_UNUSED}",
            "worked out with memory_parts",
        ),
        (
            "static: an alias of the package's answer",
            "from kvlesson.memory.floor import memory_parts as mp\n"
            f"pool_gb = mp(Q1_SHARE, gpu, model).pool_bytes / 1e9\n{_Q1_UNUSED}",
            "worked out with memory_parts",
        ),
    ],
    "q1_unused_tests": [
        (
            "the allowed part",
            f"{_Q1_POOL}\nunused_gb = Q1_SHARE / 100 * gpu.memory_bytes / 1e9",
            "Re-read the sum above",
        ),
        (
            "the notebook's share",
            f"{_Q1_POOL}\nunused_gb = (gpu.memory_bytes - SHARE / 100 * gpu.memory_bytes) / 1e9",
            None,
        ),
        (
            "the reserve taken too",
            f"{_Q1_POOL}\nunused_gb = (gpu.memory_bytes - Q1_SHARE / 100 * "
            "gpu.memory_bytes - kv.RESERVE_BYTES) / 1e9",
            None,
        ),
        ("a percent", f"{_Q1_POOL}\nunused_gb = 100 - Q1_SHARE", None),
    ],
    "ex1_1_tests": [
        (
            "in GB",
            "def pool_bytes(share):\n    return (share / 100 * gpu.memory_bytes - "
            "model.weights_bytes - kv.RESERVE_BYTES) / 1e9",
            "looks like it is in GB; the question asks for bytes",
        ),
        (
            "never negative",
            "def pool_bytes(share):\n    return max(0, share / 100 * "
            "gpu.memory_bytes - model.weights_bytes - kv.RESERVE_BYTES)",
            "a negative pool is fine here",
        ),
        (
            "the unused part",
            "def pool_bytes(share):\n    return gpu.memory_bytes - share / 100 * gpu.memory_bytes",
            None,
        ),
        (
            "a fraction",
            "def pool_bytes(share):\n    return share * gpu.memory_bytes - "
            "model.weights_bytes - kv.RESERVE_BYTES",
            "percent",
        ),
        (
            "the package's answer",
            "def pool_bytes(share):\n    return kv.memory_parts(share, gpu, model).pool_bytes",
            "calls",
        ),
        (
            "an alias of the package's answer",
            "from kvlesson.memory.floor import memory_parts as mp\ndef pool_bytes(share):\n"
            "    return mp(share, gpu, model).pool_bytes",
            "calls",
        ),
        (
            "no return",
            "def pool_bytes(share):\n    share / 100 * gpu.memory_bytes",
            "returned None",
        ),
    ],
    "ex1_2_tests": [
        (
            "a float",
            "def blocks_in(pool):\n    return max(0, pool // (kv.BLOCK_TOKENS * "
            "model.bytes_per_token))",
            "a float",
        ),
        (
            "negative pools",
            "def blocks_in(pool):\n    return int(pool // (kv.BLOCK_TOKENS * "
            "model.bytes_per_token))",
            None,
        ),
        (
            "tokens, not blocks",
            "def blocks_in(pool):\n    return max(0, int(pool // model.bytes_per_token))",
            "a factor is missing: `kv.BLOCK_TOKENS`",
        ),
        (
            "a block rounded up",
            "def blocks_in(pool):\n    return max(0, -(-int(pool) // (kv.BLOCK_TOKENS * "
            "model.bytes_per_token)))",
            None,
        ),
        (
            "another model's cache",
            "def blocks_in(pool):\n    return max(0, int(pool // "
            "(kv.BLOCK_TOKENS * kv.LLAMA_33_70B.bytes_per_token)))",
            "Re-read the exercise",
        ),
    ],
    "ex2_1_tests": [
        (
            "rounds down",
            "def chat_blocks(tokens):\n    return tokens // kv.BLOCK_TOKENS",
            "whole block",
        ),
        (
            "a float",
            "def chat_blocks(tokens):\n    return tokens / kv.BLOCK_TOKENS",
            "whole number",
        ),
        (
            "at least one, else rounded down",
            "def chat_blocks(tokens):\n    return tokens // kv.BLOCK_TOKENS or 1",
            "Re-read the exercise",
        ),
        ("blocks of 8", "def chat_blocks(tokens):\n    return -(-tokens // 8)", None),
        (
            "a block added to the floor, by int",
            "def chat_blocks(tokens):\n    return int(tokens / kv.BLOCK_TOKENS) + 1",
            "fills them all",
        ),
        (
            "the package's answer",
            "def chat_blocks(tokens):\n    return kv.blocks_for(tokens)",
            "calls",
        ),
    ],
    "ex2_2_tests": [
        (
            "strictly more",
            "def lowest_share_for(longest):\n    for share in range(1, 101):\n"
            "        if kv.memory_parts(share, gpu, model).blocks > kv.blocks_for(longest):\n"
            "            return share\n    return None",
            "boundary",
        ),
        (
            "the package's answer",
            "def lowest_share_for(longest):\n    try:\n        return "
            "kv.lowest_share(longest, gpu, model)\n    except kv.ServerWontStart:\n"
            "        return None",
            "calls",
        ),
        (
            "the ceiling's blocks rounded down",
            "def lowest_share_for(longest):\n    need = longest // kv.BLOCK_TOKENS\n"
            "    for share in range(1, 101):\n"
            "        if kv.memory_parts(share, gpu, model).blocks >= need:\n            return share",
            "partly filled block counts whole",
        ),
        (
            "the first block",
            "def lowest_share_for(longest):\n    for share in range(1, 101):\n"
            "        if kv.memory_parts(share, gpu, model).blocks > 0:\n            return share\n"
            "    return None",
            None,
        ),
        (
            "the highest share that fits",
            "def lowest_share_for(longest):\n    found = None\n"
            "    for share in range(1, 101):\n        if kv.memory_parts(share, gpu, model).blocks >= "
            "kv.blocks_for(longest):\n            found = share\n    return found",
            None,
        ),
    ],
    "q3_pool_tests": [
        (
            "no reserve",
            "pool_q3 = Q3_SHARE / 100 * gpu.memory_bytes - model.weights_bytes\n"
            "pool_gb_q3 = pool_q3 / 1e9\nblocks_q3 = 0\nstarts_q3 = False",
            "RESERVE_BYTES",
        ),
        (
            "the notebook's share",
            "pool_q3 = SHARE / 100 * gpu.memory_bytes - model.weights_bytes "
            "- kv.RESERVE_BYTES\npool_gb_q3 = pool_q3 / 1e9\nblocks_q3 = 0\nstarts_q3 = False",
            None,
        ),
        (
            "in bytes",
            f"{_Q3_POOL}\npool_gb_q3 = pool_q3\nblocks_q3 = 0\nstarts_q3 = False",
            "looks like it is in bytes",
        ),
    ],
    "q3_blocks_tests": [
        (
            "a float",
            f"{_Q3_POOL}\npool_gb_q3 = pool_q3 / 1e9\nblocks_q3 = pool_q3 // "
            "(kv.BLOCK_TOKENS * model.bytes_per_token)\nstarts_q3 = False",
            "a float",
        ),
        (
            "tokens",
            f"{_Q3_POOL}\npool_gb_q3 = pool_q3 / 1e9\nblocks_q3 = int(pool_q3 // "
            "model.bytes_per_token)\nstarts_q3 = False",
            "a factor is missing: `kv.BLOCK_TOKENS`",
        ),
        (
            "the ceiling's blocks",
            f"{_Q3_POOL}\npool_gb_q3 = pool_q3 / 1e9\n"
            "blocks_q3 = kv.blocks_for(Q3_LONGEST)\nstarts_q3 = False",
            None,
        ),
    ],
    "q3_starts_tests": [
        (
            "the verdict flipped",
            f"{_Q3}starts_q3 = True\nstarts_half_q3 = True",
            "not every yes-or-no answer here is right yet, though blocks_q3 is right",
        ),
        (
            "any block at all",
            f"{_Q3}starts_q3 = blocks_q3 > 0\nstarts_half_q3 = blocks_q3 > 0",
            "though blocks_q3 is right",
        ),
        (
            "both the wrong way",
            f"{_Q3}starts_q3 = True\nstarts_half_q3 = False",
            "(the self-check does not say which or how many",
        ),
        (
            "the ceiling's blocks rounded down",
            f"{_Q3}starts_q3 = blocks_q3 >= Q3_LONGEST // 16\n"
            "starts_half_q3 = blocks_q3 >= Q3_LONGEST // 2 // 16",
            None,
        ),
        (
            "the blocks not worked out",
            f"{_Q3_POOL}\npool_gb_q3 = pool_q3 / 1e9\nblocks_q3 = 0\nstarts_q3 = False\n"
            "starts_half_q3 = False",
            "blocks_q3",
        ),
    ],
    "ex3_1_tests": [
        ("the package's answer", "def knee_of(sweep):\n    return kv.stops_paying(sweep)", "calls"),
        (
            "the notebook's sweep",
            "def knee_of(table):\n    return knee_of_rows(sweep)\n"
            "def knee_of_rows(table):\n"
            "    caps, rates = list(table['cap']), list(table['tokens_per_s'])\n"
            "    for cap, rate, nxt in zip(caps, rates, rates[1:]):\n"
            "        if nxt / rate - 1 < 0.1:\n            return int(cap)\n    return None",
            None,
        ),
        (
            "the sweep's gain column",
            "def knee_of(sweep):\n    for cap, gain in zip(sweep['cap'], "
            "sweep['gain'][1:]):\n        if gain < 0.1:\n            return int(cap)\n"
            "    return None",
            "raised KeyError",
        ),
        (
            "exactly 10% as under, as a ratio",
            "def knee_of(sweep):\n    caps, rates = list(sweep['cap']), list(sweep['tokens_per_s'])\n"
            "    for cap, rate, nxt in zip(caps, rates, rates[1:]):\n"
            "        if (nxt - rate) / rate <= 0.1:\n            return int(cap)\n    return None",
            "a step that adds exactly 10% pays",
        ),
        (
            "10 tokens/s, not 10%",
            "def knee_of(sweep):\n    caps, rates = list(sweep['cap']), "
            "list(sweep['tokens_per_s'])\n    for cap, rate, nxt in zip(caps, rates, rates[1:]):\n"
            "        if nxt - rate < 10:\n            return int(cap)\n    return None",
            None,
        ),
    ],
    "ex3_2_tests": [
        (
            "the notebook's chats",
            "def prefill_floor_s(some_chats):\n    return sum(c.prompt for c"
            " in chats) * 2 * model.params / gpu.peak_flops",
            None,
        ),
        (
            "the package's answer",
            "def prefill_floor_s(chats):\n    return kv.prefill_floor(chats, gpu, model).seconds",
            "calls",
        ),
        (
            "in ms",
            "def prefill_floor_s(chats):\n    return 1000 * sum(c.prompt for c in chats) * 2 "
            "* model.params / gpu.peak_flops",
            "looks like it is in ms; the question asks for seconds",
        ),
        (
            "one operation a weight",
            "def prefill_floor_s(chats):\n    return sum(c.prompt for c in chats) * "
            "model.params / gpu.peak_flops",
            "a factor of 2 is missing",
        ),
        (
            "chats, not tokens",
            "def prefill_floor_s(chats):\n    return len(chats) * 2 * "
            "model.params / gpu.peak_flops",
            "Re-read the exercise",
        ),
    ],
    "q4_numbers_tests": [
        (
            "the notebook's share",
            "top = sweep.iloc[-1]\nrunning_top = float(top['avg_running'])\n"
            "pauses_top = int(top['pauses'])",
            None,
        ),
        (
            "a float",
            "running_top = float(q4_sweep.iloc[-1]['avg_running'])\n"
            "pauses_top = float(q4_sweep.iloc[-1]['pauses'])",
            "is the right number, but a float",
        ),
        (
            "the first row",
            "top = q4_sweep.iloc[0]\nrunning_top = float(top['avg_running'])\n"
            "pauses_top = int(top['pauses'])",
            "not the highest cap's row",
        ),
        (
            "the cap for the chats running",
            "top = q4_sweep.iloc[-1]\nrunning_top = float(top.cap)\npauses_top = int(top.pauses)",
            "that is the cap",
        ),
        (
            "the tokens rebuilt",
            "running_top = float(q4_sweep['avg_running'].iloc[-1])\n"
            "pauses_top = int(q4_sweep['rebuilt_tokens'].iloc[-1])",
            "the tokens the pauses rebuilt",
        ),
        (
            "rounded to a whole chat",
            "running_top = round(float(q4_sweep.iloc[-1]['avg_running']))\n"
            "pauses_top = int(q4_sweep.iloc[-1]['pauses'])",
            "rounded to a whole number",
        ),
        (
            "the sweep's mean",
            "running_top = float(q4_sweep['avg_running'].mean())\n"
            "pauses_top = int(q4_sweep['pauses'].mean())",
            None,
        ),
    ],
    "ex4_1_tests": [
        (
            "the hand case",
            "first_pause_step, paused_chat = 3, 1\nsteps_tight, steps_roomy = 18, 10",
            None,
        ),
        (
            "pauses for steps",
            f"{_TRACE}first_pause_step = next(s.step for s in tight if s.paused)\n"
            "paused_chat = next(s.paused[0] for s in tight if s.paused)\n"
            "steps_tight = sum(1 for s in tight if s.paused)\nsteps_roomy = len(wide)",
            None,
        ),
        (
            "the roomy run for both",
            f"{_TRACE}first_pause_step = next(s.step for s in tight if "
            "s.paused)\npaused_chat = next(s.paused[0] for s in tight if s.paused)\n"
            "steps_tight = len(wide)\nsteps_roomy = len(wide)",
            "Re-read the steps",
        ),
        (
            "one step short each",
            f"{_TRACE}first_pause_step = next(s.step for s in tight if s.paused)\n"
            "paused_chat = next(s.paused[0] for s in tight if s.paused)\n"
            "steps_tight = len(tight) - 1\nsteps_roomy = len(wide) - 1",
            "the length of its trace",
        ),
        (
            "the step's place in the list",
            f"{_TRACE}first_pause_step = [i for i, s in enumerate(tight) if s.paused][0]\n"
            "paused_chat = next(s.paused[0] for s in tight if s.paused)\n"
            "steps_tight = len(tight)\nsteps_roomy = len(wide)",
            "`.step` is the step's own number",
        ),
        (
            "the last pause",
            f"{_TRACE}first_pause_step = [s.step for s in tight if s.paused][-1]\n"
            "paused_chat = next(s.paused[0] for s in tight if s.paused)\n"
            "steps_tight = len(tight)\nsteps_roomy = len(wide)",
            None,
        ),
    ],
    "ex5_1_tests": [
        (
            "every number in 2 bytes",
            "def bytes_per_token_of(config):\n    heads = "
            "config['num_attention_heads']\n    kv_heads = config.get('num_key_value_heads', heads)\n"
            "    head = config.get('head_dim') or config['hidden_size'] // heads\n"
            "    return 2 * config['num_hidden_layers'] * kv_heads * head * 2",
            None,
        ),
        (
            "a float head",
            "def bytes_per_token_of(config):\n"
            "    heads = config['num_attention_heads']\n"
            "    kv_heads = config.get('num_key_value_heads', heads)\n"
            "    head = config.get('head_dim') or config['hidden_size'] / heads\n"
            "    size = {'bfloat16': 2, 'float16': 2, 'float32': 4}[config.get('torch_dtype', "
            "'bfloat16')]\n    return 2 * config['num_hidden_layers'] * kv_heads * head * size",
            "a float",
        ),
        (
            "KV heads always given",
            "def bytes_per_token_of(config):\n    head = config.get("
            "'head_dim') or config['hidden_size'] // config['num_attention_heads']\n    size = {"
            "'bfloat16': 2, 'float16': 2, 'float32': 4}[config.get('torch_dtype', 'bfloat16')]\n"
            "    return 2 * config['num_hidden_layers'] * config['num_key_value_heads'] * head * size",
            "raised KeyError",
        ),
        (
            "the package's answer",
            "def bytes_per_token_of(config):\n    return "
            "kv.Model.from_hf_config(config).bytes_per_token",
            "calls",
        ),
    ],
    "ex5_2_tests": [
        (
            "the package's answer",
            "def concurrency_at_length(log_text, longest):\n"
            "    return kv.read_vllm_log(log_text).concurrency_at(longest)",
            "calls",
        ),
        (
            "blocks, not tokens",
            "def concurrency_at_length(log_text, longest):\n"
            "    return kv.read_vllm_log(log_text).kv_tokens // 16 / longest",
            None,
        ),
        (
            "whole requests",
            "def concurrency_at_length(log_text, longest):\n"
            "    return kv.read_vllm_log(log_text).kv_tokens // longest",
            None,
        ),
        (
            "the log's concurrency scaled and rounded",
            "def concurrency_at_length(log_text, longest):\n    log = kv.read_vllm_log(log_text)\n"
            "    return round(log.max_concurrency * log.concurrency_len / longest, 2)",
            "the log prints its concurrency rounded to two decimals",
        ),
        (
            "the GiB line",
            "def concurrency_at_length(log_text, longest):\n"
            "    return kv.read_vllm_log(log_text).kv_cache_gib * 2**30 / longest",
            "raised TypeError",
        ),
    ],
    "ex5_3_tests": [
        (
            "the heads rule only",
            "def starts_on_h100(model, tp, share, longest=131_072):\n"
            "    if model.heads % tp:\n        return False\n    per_token = 2 * model.layers * "
            "max(1, model.kv_heads // tp) * model.head_size * model.bytes_per_number\n"
            f"{_POOL}{_BLOCKS}    return blocks - 1 >= -(-longest // 16)",
            "yes-or-no answer",
        ),
        (
            "tp ignored in the weights",
            f"{_H100}    pool = share / 100 * kv.H100_80GB.total_bytes - model.weights_bytes - 3e9\n"
            f"{_BLOCKS}    return blocks - 1 >= -(-longest // 16)",
            "yes-or-no answer",
        ),
        (
            "tp ignored in the cache",
            "def starts_on_h100(model, tp, share, longest=131_072):\n"
            "    if model.heads % tp or (model.kv_heads % tp and tp % model.kv_heads):\n"
            "        return False\n"
            "    per_token = 2 * model.layers * model.kv_heads * model.head_size * "
            f"model.bytes_per_number\n{_POOL}{_BLOCKS}    return blocks - 1 >= -(-longest // 16)",
            "yes-or-no answer",
        ),
        (
            "copies only by twos",
            "def starts_on_h100(model, tp, share, longest=131_072):\n"
            "    if model.heads % tp or (model.kv_heads % tp and tp % 2):\n"
            "        return False\n"
            "    per_token = 2 * model.layers * max(1, model.kv_heads // tp) * model.head_size * "
            f"model.bytes_per_number\n{_POOL}{_BLOCKS}    return blocks - 1 >= -(-longest // 16)",
            "yes-or-no answer",
        ),
        (
            "the data sheet's 80 GB",
            f"{_H100}    pool = share / 100 * 80e9 - "
            f"model.weights_bytes / tp - 3e9\n{_BLOCKS}    return blocks - 1 >= -(-longest // 16)",
            None,
        ),
        ("no null block", f"{_H100}{_POOL}{_BLOCKS}    return blocks >= -(-longest // 16)", None),
        (
            "> for >= in tokens",
            f"{_H100}{_POOL}{_BLOCKS}    return (blocks - 1) * 16 > longest",
            None,
        ),
        (
            "the max(1, ...) dropped",
            "def starts_on_h100(model, tp, share, longest=131_072):\n"
            "    per_token = 2 * model.layers * (model.kv_heads // tp) * model.head_size * "
            "model.bytes_per_number\n    if model.heads % tp or (model.kv_heads % tp and tp % "
            f"model.kv_heads):\n        return False\n{_POOL}{_BLOCKS}"
            "    return blocks - 1 >= -(-longest // 16)",
            "raised ZeroDivisionError",
        ),
    ],
    "ex5_4_tests": [
        (
            "blocks, not tokens",
            "def fp8_pool_tokens(pool_bytes, model):\n    per_token = 2 * "
            "model.layers * model.kv_heads * model.head_size\n    return max(0, int(pool_bytes // "
            "(16 * per_token)))",
            "looks like it is in blocks; the question asks for tokens",
        ),
        (
            "tokens, not whole blocks",
            "def fp8_pool_tokens(pool_bytes, model):\n    per_token = 2 * "
            "model.layers * model.kv_heads * model.head_size\n    return max(0, int(pool_bytes // "
            "per_token))",
            "Re-read the exercise",
        ),
        (
            "a pool below zero",
            "def fp8_pool_tokens(pool_bytes, model):\n    per_token = 2 * "
            "model.layers * model.kv_heads * model.head_size\n    return int(pool_bytes // "
            "(16 * per_token)) * 16",
            None,
        ),
        (
            "half the package's figure",
            "def fp8_pool_tokens(pool_bytes, model):\n    return max(0, "
            "int(pool_bytes // (16 * model.bytes_per_token // 2))) * 16",
            "calls",
        ),
    ],
    "ex5_5_tests": [
        (
            "no padding",
            "def slot_context(ctx_size, parallel):\n    return -(-ctx_size // parallel)",
            None,
        ),
        (
            "rounded",
            "def slot_context(ctx_size, parallel):\n    return round(ctx_size / parallel)",
            None,
        ),
        (
            "the share rounded up before padding",
            "def slot_context(ctx_size, parallel):\n    if parallel > 256:\n        return None\n"
            "    padded = -(-ctx_size // 256) * 256\n    return -(-(-(-padded // parallel)) // 256) * 256",
            None,
        ),
        (
            "257 slots let in",
            "def slot_context(ctx_size, parallel):\n    if parallel > 257:\n        return None\n"
            "    padded = -(-ctx_size // 256) * 256\n    return -(-(padded // parallel) // 256) * 256",
            None,
        ),
        (
            "padded once, at the end",
            "def slot_context(ctx_size, parallel):\n"
            "    return -(-(ctx_size // parallel) // 256) * 256",
            None,
        ),
        (
            "the package's answer",
            "from kvlesson.memory.other_servers import "
            "llama_cpp_slot_context\ndef slot_context(ctx_size, parallel):\n"
            "    return llama_cpp_slot_context(ctx_size, parallel)",
            "calls",
        ),
    ],
    "ex5_6_tests": [
        (
            "the default share",
            "def share_per_server(servers, total=0.9):\n    return 0.9 / servers",
            None,
        ),
        (
            "a percent",
            "def share_per_server(servers, total=0.9):\n    return 100 * total / servers",
            "looks like a percent; the question asks for a fraction of 1",
        ),
        (
            "two decimals",
            "def share_per_server(servers, total=0.9):\n    return round(total / servers, 2)",
            None,
        ),
        (
            "the package's answer",
            "from kvlesson.memory.other_servers import share_each\n"
            "def share_per_server(servers, total=0.9):\n    return share_each(servers, total)",
            "calls",
        ),
    ],
    "ex6_1_tests": [
        (
            "the rounding the text warns of",
            "import math\ndef nearest_rank(values, p):\n"
            "    return sorted(values)[math.ceil(p / 100 * len(values)) - 1]",
            "not 8",
        ),
        (
            "the largest first",
            "import math\ndef nearest_rank(values, p):\n"
            "    return sorted(values, reverse=True)[math.ceil(p * len(values) / 100) - 1]",
            None,
        ),
        (
            "the rank as an index",
            "import math\ndef nearest_rank(values, p):\n    ordered = "
            "sorted(values)\n    return ordered[min(len(ordered) - 1, math.ceil(p * len(ordered) / "
            "100))]",
            None,
        ),
        (
            "the middle value",
            "def nearest_rank(values, p):\n    return sorted(values)[len(values) // 2]",
            None,
        ),
    ],
    "ex6_2_tests": [
        (
            "writing as a percent",
            "def steps_to_read(prompt, budget, writing):\n    return -(-prompt"
            " // int(budget * (1 - writing / 100)))",
            None,
        ),
        (
            "rounded down, one added",
            "def steps_to_read(prompt, budget, writing):\n"
            "    return prompt // (budget - writing) + 1",
            None,
        ),
        (
            "one more token kept back",
            "def steps_to_read(prompt, budget, writing):\n    return "
            "-(-prompt // (budget - writing - 1))",
            None,
        ),
    ],
    "ex6_3_assistant_tests": [
        (
            "a ceiling below the documents",
            _choices(
                "assistant", "dict(share=90, longest=8_000, cap=4, budget=1_024, admission=None)"
            ),
            "does not meet the assistant's targets",
        ),
        (
            "chunked prefill off",
            _choices(
                "assistant", "dict(share=85, longest=32_000, cap=64, budget=None, admission=16)"
            ),
            None,
        ),
        ("the office's choice", _choices("assistant", _CHOICES["office"]), None),
    ],
    "ex6_3_office_tests": [
        (
            "a small cap",
            _choices(
                "office", "dict(share=95, longest=16_000, cap=4, budget=1_024, admission=None)"
            ),
            "does not meet the office's targets",
        ),
        (
            "a ceiling below the threads",
            _choices(
                "office", "dict(share=95, longest=8_000, cap=64, budget=1_024, admission=None)"
            ),
            None,
        ),
        ("the app's choice", _choices("office", _CHOICES["app"]), None),
    ],
    "ex6_3_app_tests": [
        (
            "a small cap",
            _choices("app", "dict(share=90, longest=8_000, cap=4, budget=1_024, admission=None)"),
            "does not meet the app's targets",
        ),
        (
            "the admission cap",
            _choices("app", "dict(share=85, longest=8_000, cap=64, budget=None, admission=16)"),
            None,
        ),
        ("the assistant's choice", _choices("app", _CHOICES["assistant"]), None),
    ],
    "q7_tests": [
        (
            "a verdict flipped",
            f"{_Q7}q7_freeze = True\nq7_pauses = True\nq7_memory = True",
            "not every yes-or-no answer here is right yet",
        ),
        (
            "the worst gap in seconds",
            _Q7.replace(".itl.worst * 1000", ".itl.worst")
            + "q7_freeze = True\nq7_pauses = False\nq7_memory = True",
            "looks like it is in seconds; the question asks for ms",
        ),
        (
            "the rig as it was",
            _Q7.replace("'budget': Q7_RIG_BUDGET", "'budget': 2_048")
            + "q7_freeze = True\nq7_pauses = False\nq7_memory = True",
            "Re-read the question",
        ),
        (
            "every fix helps",
            f"{_Q7}q7_freeze = True\nq7_pauses = True\nq7_memory = False",
            "(the self-check does not say which or how many",
        ),
        (
            "a thousand one milliseconds a second",
            _Q7.replace("kv.latency(", "1001 * kv.latency(").replace(
                ".itl.worst * 1000", ".itl.worst"
            )
            + "q7_freeze = True\nq7_pauses = False\nq7_memory = True",
            "one of the exercise's numbers one up or one down",
        ),
    ],
}
# Not an answer but a changed setting: the self-check must say it holds for the release's.
SETTING_CHANGES = {"q1_pool_tests": "SHARE = 50", "ex2_1_tests": 'GPU = "H100_80GB"'}
# Exercises whose key no second source in the package can check, and why.
NO_AUTHORITY = {
    "ex4_1_tests": "the answers are read off the package's own trace, kv.trace",
    "ex6_2_tests": "the package's server cannot start chats mid-reply on cue",
    "ex6_3_assistant_tests": "the probe calls the package's own judge, capstone.meets",
    "ex6_3_office_tests": "the probe calls the package's own judge, capstone.meets",
    "ex6_3_app_tests": "the probe calls the package's own judge, capstone.meets",
}


@pytest.fixture(scope="module")
def runs(request) -> dict[str, dict[str, Exercise]]:
    """The selected exercises' runs (every exercise of the notebooks a notebook-wide test
    asks for), the notebooks in kernels side by side; also saved to artifacts/."""
    wanted: dict[str, set[str]] = {}
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if Path(str(item.path)).resolve() != THIS:
            continue
        if "exercise" in params:
            name, grade_id = params["exercise"]
            wanted.setdefault(name, set()).add(grade_id)
        if "name" in params:
            wanted.setdefault(params["name"], set()).update(exercises_of(params["name"]))

    async def every() -> list[dict[str, Exercise]]:
        side_by_side = asyncio.Semaphore(os.cpu_count() or 1)  # a kernel a core, no more

        async def one(name: str, chosen: set[str]) -> dict[str, Exercise]:
            async with side_by_side:
                return await run_variants(name, chosen, HAND, SETTING_CHANGES)

        return await asyncio.gather(*(one(name, chosen) for name, chosen in wanted.items()))

    found = dict(zip(wanted, asyncio.run(every())))
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {
                name: {g: [o.__dict__ for o in e.outcomes] for g, e in exercises.items()}
                for name, exercises in found.items()
            },
            indent=1,
        )
    )
    return found


def built(runs: dict[str, dict[str, Exercise]], name: str, grade_id: str) -> Exercise:
    """The run of one exercise; a clear failure when the release or the key lacks it (the
    test reads what `kvlesson build` wrote: an exercise added since is not in them yet)."""
    if grade_id not in runs[name]:
        pytest.fail(
            f"{grade_id} is not in notebooks/{name} or keys/{name}.json yet: this test runs "
            f"the built release against the key, so build first: kvlesson build {name}",
            pytrace=False,
        )
    return runs[name][grade_id]


def lies_and_blind(results: list) -> tuple[int, int, int]:
    """An exercise's wrong variants, lies (the self-check passes a variant the grade
    rejects) and blind ones (the grade passes a variant that differs from the solution on
    an input in the exercise's domain)."""
    wrong = [o for o in results if o.variant != "solution"]
    return (
        len(wrong),
        sum(not o.grade_right and o.check_passed for o in wrong),
        sum(o.grade_right and o.wrong_somewhere for o in wrong),
    )


@pytest.mark.parametrize("exercise", EXERCISES, ids=[g for _, g in EXERCISES])
def test_the_self_checks_reject_what_the_grade_rejects(exercise, runs):
    name, grade_id = exercise
    results = built(runs, name, grade_id).outcomes
    problems = []
    for o in results:
        if o.variant == "solution":
            if not (o.check_passed and o.grade_right):
                problems.append(
                    f"the solution: check {o.check_error or 'passed'}, grade "
                    f"{'right' if o.grade_right else 'wrong'} {o.flags}"
                )
            continue
        if not o.grade_right and o.check_passed:
            problems.append(f"the self-check passes a wrong answer ({o.variant})")
        if o.grade_right and not o.check_passed:
            problems.append(
                f"the self-check fails an answer the grade accepts ({o.variant}): {o.check_error}"
            )
        if not o.check_passed and not re.match(r"\w+: Not yet:", o.check_error):
            problems.append(f"a failure without 'Not yet:' ({o.variant}): {o.check_error}")
        if o.expect and o.expect not in o.check_error:
            problems.append(f"{o.variant}: {o.expect!r} not in {o.check_error!r}")
        if o.variant.startswith("static") and o.grade_right:
            problems.append(f"the grade accepts a forbidden answer ({o.variant})")
        if o.grade_right and o.wrong_somewhere:
            problems.append(
                f"the grade accepts an answer that is wrong in the exercise's domain ({o.variant})"
            )
    total, lies, blind = lies_and_blind(results)
    print(
        f"\n{grade_id}: {total} wrong variants ({len(HAND.get(grade_id, []))} by hand), "
        f"{lies} lies, {blind} blind"
    )
    for o in results:
        if o.grade_right and o.variant != "solution":
            print(f"  equivalent: {o.variant.splitlines()[0][:100]}")
    assert not problems, f"{grade_id}:\n" + "\n".join(problems)


@pytest.mark.parametrize("exercise", EXERCISES, ids=[g for _, g in EXERCISES])
def test_every_key_is_true(exercise, runs):
    """Every probe, hidden and visible, worked out by the exercise's authority (the package's
    own answer: `startup` and `tp_refusal` for "does vLLM start", `latency.percentile`, ...)
    agrees with the key and the released stamp; an exercise without one says why."""
    name, grade_id = exercise
    held = built(runs, name, grade_id).authority
    if held is None:
        assert grade_id in NO_AUTHORITY, f"{grade_id} declares no authority and no reason"
        print(f"\n{grade_id}: no authority ({NO_AUTHORITY[grade_id]})")
        return
    assert grade_id not in NO_AUTHORITY, f"{grade_id} has an authority: take it off NO_AUTHORITY"
    wrong = [f"{label} ({side})" for label, side, agrees in held if not agrees]
    print(f"\n{grade_id}: {len(held)} probes held against the authority, {len(wrong)} disagree")
    assert held and not wrong, f"{grade_id}: the key is not the authority's on {wrong}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=[g for _, g in EXERCISES])
def test_each_exercise_has_wrong_answers_of_a_students_own(exercise, runs):
    """At least MOST_WRITTEN hand-written wrong answers, none of them one of the package's
    mutations or the exercise's declared mistakes."""
    name, grade_id = exercise
    results = built(runs, name, grade_id).outcomes
    made = {o.source for o in results if o.origin == "generated"}
    written = [o.source for o in results if o.origin == "hand"]
    assert len(written) >= MOST_WRITTEN, (
        f"{grade_id}: only {len(written)} hand-written answers: add at least {MOST_WRITTEN} to "
        f"HAND[{grade_id!r}] in tests/authoring/test_selfchecks.py"
    )
    assert not set(written) & made, f"{grade_id}: a hand-written answer is a generated one"
    [solution] = [o.source for o in results if o.origin == "solution"]
    for label, code, _ in HAND[grade_id]:  # an answer to this exercise, not to another one
        assert set(bound_names(code)) & set(bound_names(solution)), (
            f"{grade_id}: HAND's {label!r} defines none of {', '.join(bound_names(solution))}, "
            f"what the answer cell defines: write it as an answer to this exercise"
        )


@pytest.mark.parametrize("name", [n for n in NAMES if command.has_exercises(n)])
def test_every_notebook_names_some_mistake(name, runs):
    """Some wrong answer of the notebook gets a hint for its mistake."""
    hinted = [
        o
        for e in runs[name].values()
        for o in e.outcomes
        if o.check_error and "is not right:" in o.check_error
    ]
    assert hinted, f"{name}: no wrong answer got a hint for its mistake"


@pytest.mark.parametrize("assignment, grade_id", EXERCISES, ids=[g for _, g in EXERCISES])
def test_the_release_holds_no_expected_value(assignment, grade_id):
    """No expected answer of the exercise's key appears in a released test cell of its
    notebook, in any form written there (the digits of a count, a number to its places)."""
    exercise = read_key(key_path(ROOT, assignment))["exercises"].get(grade_id)
    if exercise is None:
        pytest.fail(f"{grade_id} is not in keys/{assignment}.json: kvlesson build {assignment}")
    [release] = (ROOT / "notebooks" / assignment).glob("*.ipynb")
    text = "\n".join(c.source for c in read(release).cells if notebooks.is_test_cell(c))
    leaks = []
    for probe in exercise["probes"]:
        shown = probe["normal"].split(":", 1)[-1]
        digits = shown.replace(".", "").replace("-", "").strip("0")
        if (
            probe["kind"] != "yes_no"
            and digits.isdigit()
            and len(digits) >= 3
            and re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d])", text)
        ):
            leaks.append(f"{probe['label']}: {shown}")
    assert not leaks, f"{grade_id}: the release's test cells write these answers: {leaks}"
