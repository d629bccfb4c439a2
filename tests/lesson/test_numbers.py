"""Every figure the lesson quotes, pinned exactly, as the lesson rounds it.

The figures are the ones the notebooks quote, from the lesson's model (docs/model.md).
Each test asserts one of them from the package's own functions; the last
part checks that `lesson_numbers()` and `kvlesson numbers` say the same.
"""

from __future__ import annotations

import json
import math
import random
from collections import deque

import pytest

import kvlesson as kv
from kvlesson.lesson import quote
from kvlesson.lesson.numbers import lesson_numbers
from kvlesson.lesson.printout import TITLES
from kvlesson.memory.specs import LLAMA_31_8B_CONFIG
from kvlesson.serving.sweep import (
    CAPS,
    cap_sweep,
    prefill_floor,
    prefill_seconds,
    stops_paying,
)
from support.command import kvlesson


def one(x: float, places: int = 1) -> str:
    """A number as the lesson writes it: 47.3, 1.68."""
    return f"{x:.{places}f}"


@pytest.fixture(scope="module")
def chats() -> list[kv.Chat]:
    return kv.lesson_chats()


@pytest.fixture(scope="module")
def sweep(chats):
    """The lesson's sweep at 90%, ceiling 8,000, caps 1..512, indexed by cap."""
    return cap_sweep(chats, engine="reference").set_index("cap", drop=False)


# --- Constants ----------------------------------------------------------------


def test_gpu_memory_is_80e9_bytes_or_80_gib():
    assert kv.A100_80GB.memory_bytes == 80e9
    assert kv.A100_80GIB.memory_bytes == 85_899_345_920
    assert kv.as_gib(kv.A100_80GB).memory_bytes == 85_899_345_920


def test_gpu_speeds_from_the_data_sheet():
    assert kv.A100_80GB.peak_flops == 312e12
    assert kv.A100_80GB.bandwidth == 2.039e12


def test_llama_weights_from_its_config():
    model = kv.Model.from_hf_config(LLAMA_31_8B_CONFIG)
    assert model.params == 8_030_261_248
    assert model.weights_bytes == 16_060_522_496
    assert kv.LLAMA_31_8B == model


def test_cache_per_token_and_per_block():
    assert kv.LLAMA_31_8B.bytes_per_token == 2 * 32 * 8 * 128 * 2 == 131_072
    assert kv.BLOCK_TOKENS == 16
    assert kv.memory_parts(90).block_bytes == 2_097_152


def test_reserve_and_typical_chat():
    assert kv.RESERVE_BYTES == 2e9
    assert kv.TYPICAL_CHAT == 2_000


# --- The memory floor ---------------------------------------------------------


@pytest.mark.parametrize("share", range(1, 101))
def test_blocks_follow_the_floor_rule_at_every_share(share):
    pool = share * 80 * 10**9 // 100 - 16_060_522_496 - 2 * 10**9  # whole bytes: 80e9 is
    assert kv.memory_parts(share).blocks == max(0, pool // (16 * 131_072))


@pytest.mark.parametrize(
    "tokens, blocks", [(1, 1), (16, 1), (17, 2), (2_000, 125), (8_000, 500), (128_000, 8_000)]
)
def test_blocks_for_rounds_up_to_whole_blocks(tokens, blocks):
    assert kv.blocks_for(tokens) == blocks


@pytest.mark.parametrize("longest", [1_000, 2_000, 8_000, 128_000])
def test_chats_that_fit_count_typical_chats_or_the_ceiling_if_lower(longest):
    per_chat = -(-min(2_000, longest) // 16)
    assert kv.room(90, longest).typical == 25_720 // per_chat
    assert kv.room(90, longest, reserved=True).typical == 25_720 // -(-longest // 16)


@pytest.mark.parametrize("share", [1, 23, 44, 90, 100])
def test_the_four_parts_add_up_to_the_gpu(share):
    p = kv.memory_parts(share)
    parts = p.weights_bytes + p.reserve_bytes + p.pool_bytes + p.unused_bytes
    assert math.isclose(parts, 80e9, rel_tol=1e-12)


def test_floor_at_90():
    p = kv.memory_parts(90)
    assert quote.gb(p.pool_bytes) == "53.9 GB"
    assert p.blocks == 25_720
    assert p.tokens == 411_520
    assert quote.gb(p.unused_bytes) == "8.0 GB"
    assert kv.room(90, 8_000).typical == 205


@pytest.mark.parametrize("longest, chats", [(8_000, 51), (32_000, 12), (128_000, 3), (4_000, 102)])
def test_chats_that_fit_with_the_ceiling_reserved(longest, chats):
    assert kv.room(90, longest, reserved=True).typical == chats


@pytest.mark.parametrize(
    "share, pool, chats",
    [(30, "5.9 GB", 22), (50, "21.9 GB", 83), (90, "53.9 GB", 205), (98, "60.3 GB", 230)],
)
def test_table_of_shares(share, pool, chats):
    r = kv.room(share, 8_000)
    assert quote.gb(r.parts.pool_bytes) == pool
    assert r.typical == chats


def test_40_percent_does_not_start_at_128000():
    r = kv.room(40, 128_000)
    assert quote.gb(r.parts.pool_bytes) == "13.9 GB"
    assert r.parts.blocks == 6_646
    assert r.parts.tokens == 106_336
    assert kv.blocks_for(128_000) == 8_000
    assert not r.starts


def test_44_percent_starts_at_128000():
    r = kv.room(44, 128_000)
    assert r.parts.blocks == 8_172
    assert r.starts


@pytest.mark.parametrize(
    "longest, share",
    [(4_000, 24), (8_000, 24), (16_000, 26), (32_000, 28), (64_000, 34), (128_000, 44)],
)
def test_lowest_working_share(longest, share):
    assert kv.lowest_share(longest) == share
    assert kv.room(share, longest).starts
    assert not kv.room(share - 1, longest).starts


def test_below_23_percent_no_block_is_left():
    assert kv.memory_parts(22).blocks == 0
    assert kv.memory_parts(23).blocks > 0
    assert kv.first_share_with_blocks() == 23


def test_80_gib_reading():
    r = kv.room(90, 8_000, gpu=kv.A100_80GIB)
    assert quote.gb(r.parts.pool_bytes) == "59.2 GB"
    assert r.parts.blocks == 28_252
    assert r.typical == 226


# --- The 600 chats ------------------------------------------------------------


def test_the_draw_follows_the_rule():
    rng = random.Random(2026)

    def draw(low, high):
        return round(math.exp(rng.uniform(math.log(low), math.log(high))))

    expected = []
    for _ in range(600):
        prompt = draw(300, 6000)
        expected.append((prompt, draw(40, 400)))
    assert [(c.prompt, c.reply) for c in kv.lesson_chats()] == expected


def test_the_600_chats(chats):
    prompts, replies = [c.prompt for c in chats], [c.reply for c in chats]
    assert len(chats) == 600
    assert (min(prompts), max(prompts), sum(prompts)) == (305, 5_965, 1_129_059)
    assert (min(replies), max(replies), sum(replies)) == (40, 400, 94_117)
    assert chats[0] == kv.Chat(429, 127)


# --- The cap sweep at 90%, ceiling 8,000 ----------------------------------------


@pytest.mark.parametrize(
    "cap, tokens_per_s, wait_ms",
    [
        (1, 117, "8.0"),
        (8, 590, "12.8"),
        (32, 1_049, "28.5"),
        (64, 1_202, "47.3"),
        (128, 1_300, "79.4"),
        (256, 1_284, "106.6"),
        (512, 1_284, "106.6"),
    ],
)
def test_cap_sweep(sweep, cap, tokens_per_s, wait_ms):
    row = sweep.loc[cap]
    assert round(row.tokens_per_s) == tokens_per_s
    assert one(row.wait_ms) == wait_ms


@pytest.mark.parametrize("cap", [256, 512])
def test_top_caps_pause_and_rebuild(sweep, cap):
    row = sweep.loc[cap]
    assert row.pauses == 11
    assert row.rebuilt_tokens == 21_333
    assert one(row.avg_running) == "194.9"


def test_every_doubling_up_to_64_adds_at_least_14_6_percent(sweep):
    gains = sweep.loc[2:64, "gain"]
    assert len(gains) == 6
    assert (gains >= 0.146).all()
    assert round(gains.min() * 100, 1) == 14.6


def test_64_to_128_adds_8_2_percent_and_the_wait_grows_1_68_times(sweep):
    row = sweep.loc[128]
    assert round(row.gain * 100, 1) == 8.2
    assert one(row.wait_ratio, 2) == "1.68"


def test_stops_paying_at_64(sweep):
    assert stops_paying(sweep) == 64


@pytest.mark.parametrize(
    "longest, tokens_per_s, running, wait_ms",
    [(8_000, 1_161, "49.7", "39.9"), (32_000, 732, "11.9", "15.6")],
)
def test_reserving_the_ceiling_at_cap_512(chats, longest, tokens_per_s, running, wait_ms):
    r = kv.serve(chats, 512, longest=longest, reserved=True)
    assert round(r.tokens_per_s) == tokens_per_s
    assert one(r.avg_running) == running
    assert one(r.wait_ms) == wait_ms


def test_at_50_percent_the_knee_moves(chats):
    assert kv.memory_parts(50).tokens == 167_376
    at_64, at_128 = kv.serve(chats, 64, share=50), kv.serve(chats, 128, share=50)
    assert (round(at_64.tokens_per_s), at_64.pauses) == (1_202, 0)
    assert (round(at_128.tokens_per_s), at_128.pauses) == (1_168, 26)


def test_at_35_percent_pauses_cost_more_than_a_larger_cap_gives(chats):
    assert kv.memory_parts(35).tokens == 75_824
    small = cap_sweep(chats, CAPS[5:], share=35, engine="reference").set_index("cap")
    assert (round(small.loc[32].tokens_per_s), small.loc[32].pauses) == (1_038, 4)
    for cap in (64, 128, 256, 512):
        assert (round(small.loc[cap].tokens_per_s), small.loc[cap].pauses) == (1_018, 39)


def test_prefill_floor(chats):
    floor = prefill_floor(chats)
    assert one(floor.seconds) == "58.1"
    assert one(floor.per_token_s * 1e6) == "51.5"
    assert round(floor.max_tokens_per_s) == 1_619
    mean_prompt = round(sum(c.prompt for c in chats) / len(chats))
    assert mean_prompt == 1_882
    assert quote.ms(prefill_seconds(mean_prompt)) == "96.9 ms"


def test_hand_case():
    chats = [(30, 10), (30, 10)]
    tight = kv.trace(chats, cap=10, blocks=4, longest=None)
    roomy = kv.trace(chats, cap=10, blocks=100, longest=None)
    assert (len(tight), sum(len(s.paused) for s in tight)) == (18, 1)
    assert (len(roomy), sum(len(s.paused) for s in roomy)) == (10, 0)


# --- An unlimited pool is plain continuous batching ----------------------------


def plain_continuous_batching(chats, cap):
    """No blocks at all: join while fewer than `cap` run; time each step as docs/model.md says.

    Returns the run's seconds, steps, mean wait between words (ms) and chats running on
    average (time-weighted)."""
    params, weights, per_token = 8_030_261_248, 16_060_522_496, 131_072
    peak, bandwidth = 312e12, 2.039e12
    waiting, running = deque(range(len(chats))), []
    made = [0] * len(chats)
    first, last = [0.0] * len(chats), [0.0] * len(chats)
    clock, busy, steps = 0.0, 0.0, 0
    while waiting or running:
        joined = []
        while waiting and len(running) < cap:
            joined.append(waiting.popleft())
            running.append(joined[-1])
        context = {i: chats[i].prompt + made[i] for i in running}
        read = sum(context[i] for i in joined) + len(running) - len(joined)
        seconds = max(
            2 * params * read / peak, (weights + per_token * sum(context.values())) / bandwidth
        )
        clock += seconds
        busy += seconds * len(running)
        steps += 1
        for i in running:
            made[i] += 1
            if made[i] == 1:
                first[i] = clock
            last[i] = clock
        running = [i for i in running if made[i] < chats[i].reply]
    gaps = [(last[i] - first[i]) / (c.reply - 1) for i, c in enumerate(chats)]
    return clock, steps, 1000 * sum(gaps) / len(gaps), busy / clock


@pytest.mark.parametrize("cap", [4, 64, 512])
def test_unlimited_pool_is_plain_continuous_batching(chats, cap):
    r = kv.serve(chats, cap, blocks=10**9, longest=None)
    assert (r.seconds, r.steps, r.wait_ms, r.avg_running) == plain_continuous_batching(chats, cap)
    assert (r.pauses, r.refused, r.tokens) == (0, 0, 94_117)


# --- lesson_numbers() and kvlesson numbers say the lesson's strings -----------

LESSON = {
    "floor": {
        "pool": "53.9 GB",
        "blocks": "25,720",
        "tokens": "411,520",
        "unused": "8.0 GB",
        "typical": "205",
        "bytes_per_token": "131,072",
        "block_bytes": "2,097,152",
        "pool_30": "5.9 GB",
        "typical_30": "22",
        "pool_50": "21.9 GB",
        "typical_50": "83",
        "pool_90": "53.9 GB",
        "typical_90": "205",
        "pool_98": "60.3 GB",
        "typical_98": "230",
        "first_share_with_blocks": "23%",
        "gib_pool": "59.2 GB",
        "gib_blocks": "28,252",
        "gib_typical": "226",
    },
    "ceiling": {
        "blocks_typical": "205",
        "reserved_4000": "102",
        "reserved_8000": "51",
        "reserved_32000": "12",
        "reserved_128000": "3",
        "pool_40": "13.9 GB",
        "blocks_40": "6,646",
        "tokens_40": "106,336",
        "starts_40": "does not start",
        "blocks_44": "8,172",
        "starts_44": "starts",
        "long_needs": "8,000",
        "lowest_4000": "24%",
        "lowest_8000": "24%",
        "lowest_16000": "26%",
        "lowest_32000": "28%",
        "lowest_64000": "34%",
        "lowest_128000": "44%",
    },
    "sweep": {
        "prompt_min": "305",
        "prompt_max": "5,965",
        "prompt_total": "1,129,059",
        "prompt_mean": "1,882",
        "reply_min": "40",
        "reply_max": "400",
        "reply_total": "94,117",
        "tps_1": "117",
        "wait_1": "8.0 ms",
        "tps_8": "590",
        "wait_8": "12.8 ms",
        "tps_32": "1,049",
        "wait_32": "28.5 ms",
        "tps_64": "1,202",
        "wait_64": "47.3 ms",
        "tps_128": "1,300",
        "wait_128": "79.4 ms",
        "tps_256": "1,284",
        "wait_256": "106.6 ms",
        "tps_512": "1,284",
        "wait_512": "106.6 ms",
        "pauses_256": "11",
        "pauses_512": "11",
        "rebuilt_top": "21,333",
        "running_top": "194.9",
        "stops_paying": "64",
        "min_gain_before": "14.6%",
        "gain_after": "8.2%",
        "wait_ratio_after": "1.68",
        "reserved_tps_8000": "1,161",
        "reserved_running_8000": "49.7",
        "reserved_wait_8000": "39.9 ms",
        "reserved_tps_32000": "732",
        "reserved_running_32000": "11.9",
        "reserved_wait_32000": "15.6 ms",
        "tokens_50": "167,376",
        "tps_50_64": "1,202",
        "pauses_50_64": "0",
        "tps_50_128": "1,168",
        "pauses_50_128": "26",
        "tokens_35": "75,824",
        "tps_35_32": "1,038",
        "pauses_35_32": "4",
        **{f"tps_35_{cap}": "1,018" for cap in (64, 128, 256, 512)},
        **{f"pauses_35_{cap}": "39" for cap in (64, 128, 256, 512)},
        "prefill_s": "58.1 s",
        "prefill_us_per_token": "51.5 us",
        "prefill_max_tps": "1,619",
        "prefill_mean_prompt": "96.9 ms",
    },
    "preemption": {
        "hand_steps": "18",
        "hand_pauses": "1",
        "hand_first_pause": "3",
        "hand_steps_room": "10",
    },
}
QUOTED = [
    (section, key, text) for section, figures in LESSON.items() for key, text in figures.items()
]


@pytest.fixture(scope="module")
def numbers():
    return lesson_numbers()


@pytest.fixture(scope="module")
def printed() -> dict[str, dict[str, str]]:
    """`kvlesson numbers` as {section title: {about: text}}."""
    out = run_cli().stdout
    sections: dict[str, dict[str, str]] = {}
    for line in out.splitlines()[1:]:
        if line and not line.startswith(" "):
            title = sections.setdefault(line, {})
        elif line.strip():
            about, text = line.strip().split("  ", 1)
            title[about] = text.strip()
    return sections


@pytest.fixture(scope="module")
def as_json() -> dict:
    return json.loads(run_cli("--json").stdout)


def run_cli(*args: str):
    return kvlesson("numbers", *args)


@pytest.mark.parametrize("section, key, text", QUOTED)
def test_lesson_numbers_says_the_lessons_strings(numbers, section, key, text):
    assert numbers[section][key].text == text


@pytest.mark.parametrize("section, key, text", QUOTED)
def test_python_m_kvlesson_prints_the_lessons_strings(numbers, printed, section, key, text):
    assert printed[TITLES[section]][numbers[section][key].about] == text


def test_json_agrees_with_lesson_numbers(numbers, as_json):
    assert as_json.keys() == numbers.keys()
    for section, figures in numbers.items():
        assert as_json[section].keys() == figures.keys()
        for key, figure in figures.items():
            assert as_json[section][key] == {
                "value": figure.value,
                "text": figure.text,
                "about": figure.about,
            }, (section, key)


def test_json_values_are_the_lessons(as_json):
    values = {
        key: figure["value"] for figures in as_json.values() for key, figure in figures.items()
    }
    assert values["blocks"] == 25_720
    assert values["weights"] == 16_060_522_496
    assert values["gpu"] == 80 * 10**9
    assert values["stops_paying"] == 64
    assert values["starts_40"] is False and values["starts_44"] is True
    assert values["rebuilt_top"] == 21_333
