"""Counts in the lesson's sentences agree with their nouns: "1 chat", "2 chats", "0 chats".

The class of slip is a count written before a fixed plural ("1 chats a second",
"1 chats pass the ceiling"). Every builder that puts a variable count before a
noun goes through `units.counted` (or `settings.past_the_ceiling`), and each is
tried here at 0, 1 and 2.
"""

from __future__ import annotations

import pandas as pd
import pytest

import kvlesson as kv
from kvlesson.lesson import sentences
from kvlesson.lesson.traffic_explorer import TrafficExplorer
from kvlesson.memory.units import counted
from kvlesson.serving.settings import past_the_ceiling
from kvlesson.serving.static_batching import static_batches

SAID = {0: "0 chats", 1: "1 chat", 2: "2 chats"}


@pytest.mark.parametrize("n", [0, 1, 2])
def test_a_count_and_its_noun(n):
    assert counted(n, "chat") == SAID[n]
    assert counted(float(n), "chat") == SAID[n]  # 1.0 chats a second is 1 chat a second
    assert counted(n, "pause") == SAID[n].replace("chat", "pause")
    assert counted(n, "child", "children") == SAID[n].replace("chats", "children").replace(
        "chat", "child"
    )


def test_fractions_and_thousands():
    assert counted(0.5, "chat") == "0.5 chats" and counted(1_218, "pause") == "1,218 pauses"


@pytest.mark.parametrize(
    "n, said", [(0, "0 chats pass"), (1, "1 chat passes"), (2, "2 chats pass")]
)
def test_past_the_ceiling(n, said):
    assert past_the_ceiling(n) == f"{said} the ceiling"


@pytest.mark.parametrize("refused", [1, 2])
def test_static_batching_says_how_many_pass_the_ceiling(refused):
    chats = [kv.Chat(50, 10)] + [kv.Chat(500, 10)] * refused
    with pytest.raises(ValueError, match=f"^{past_the_ceiling(refused)};"):
        static_batches(chats, 4, longest=100, blocks=100)


@pytest.mark.parametrize("n", [1, 2])
def test_the_chats_summary(n):
    assert str(sentences.chats_summary([kv.Chat(10, 5)] * n)).startswith(f"{SAID[n]}, all waiting")


@pytest.mark.parametrize("pauses", [0, 1, 2])
def test_the_sweep_caption(pauses):
    sweep = pd.DataFrame(
        [{"cap": 8, "tokens_per_s": 900.0, "wait_ms": 9.0, "avg_running": 8.0, "pauses": pauses}]
    )
    caption = str(sentences.SweepView(90, sweep, None).caption(8))
    assert caption.endswith(f"{SAID[pauses].replace('chat', 'pause')}.")


def test_the_traffic_explorer_at_one_chat_a_second():
    explorer = TrafficExplorer(kv.lesson_chats(n=20), cap=8, rate=1.0)
    assert "1 chat a second," in explorer.caption.value and "1 chats" not in explorer.caption.value
