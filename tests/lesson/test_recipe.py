"""How an explorer was made, as JSON (kvlesson.lesson.recipe): the course's values go in and
come back equal, an explorer remembers its own arguments, and nothing else is made again."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import kvlesson as kv
from kvlesson.lesson import explorers, recipe
from kvlesson.lesson.traffic_explorer import TrafficExplorer
from kvlesson.memory.specs import as_measured
from kvlesson.serving.arrivals import Request


def again(value):
    """`value` written, sent through JSON text (as a notebook stores it) and read back."""
    return recipe.read(json.loads(json.dumps(recipe.written(value))))


@pytest.mark.parametrize(
    "value",
    [
        90,
        0.9,
        "LLAMA_31_8B",
        None,
        True,
        kv.gpu("A100_80GB"),
        as_measured(kv.gpu("H100_80GB")),  # a card made by the lesson, not a named one
        kv.model("QWEN25_7B").with_dtypes(weights="fp8", cache="fp8"),
        (kv.Chat(30, 10), kv.Chat(40, 12)),
        (Request(30, 10, arrives=1.5, shared=(("system", 16),)), Request(5, 6)),
        ((30, 10), (30, 10)),
    ],
)
def test_the_courses_values_come_back_equal(value):
    assert again(value) == value


def test_numpy_numbers_and_dicts_of_settings_are_written_plainly():
    assert again(np.int64(64)) == 64 and type(again(np.int64(64))) is int
    settings = {"share": 90, "gpu": kv.gpu("A100_80GB")}
    assert again(settings) == settings


def test_a_value_json_cannot_carry_is_named():
    with pytest.raises(recipe.Unwritable, match="function"):
        recipe.written(lambda share: share)
    with pytest.raises(recipe.Unwritable, match="dict"):
        recipe.written({1: "a key that is no word"})


def test_only_the_courses_own_classes_are_made_again():
    with pytest.raises(ValueError, match="not one of the course's classes"):
        recipe.read({"of": "os:system", "fields": ["true"]})
    with pytest.raises(ValueError, match="not one of the course's classes"):
        recipe.made_again({"explorer": "subprocess:Popen", "args": [["true"]], "kwargs": {}})


def test_an_explorer_remembers_its_arguments_even_a_generator_it_used_up():
    chats = (kv.Chat(30 + n, 10) for n in range(4))  # a generator: read once by the explorer
    explorer = explorers.PauseExplorer(chats, blocks=4, cap=10)
    assert explorer.recipe["explorer"] == "kvlesson.lesson.explorers:PauseExplorer"
    made = recipe.made_again(json.loads(json.dumps(explorer.recipe)))
    assert made.steps == explorer.steps and made.png == explorer.png


def test_keyword_settings_are_kept_with_their_names():
    explorer = TrafficExplorer(
        kv.lesson_chats(n=40), rate=2.0, budget=128, cap=8, share=80, gpu=kv.gpu("A100_80GB")
    )
    assert explorer.recipe["kwargs"]["share"] == 80
    made = recipe.made_again(json.loads(json.dumps(explorer.recipe)))
    assert made.caption.value == explorer.caption.value


def test_a_class_outside_the_course_leaves_no_recipe_not_its_bases():
    class Wider(explorers.FloorExplorer):
        """A floor plan that starts at another share (a notebook's own class)."""

        def __init__(self, start: int):
            super().__init__(share=start)

    wider = Wider(40)  # cannot be found again: no recipe, not FloorExplorer's (share=40)
    assert wider.recipe is None and "At a 40% share" in wider.caption.value


@dataclasses.dataclass(frozen=True)
class Card:
    """A card of the tests' own: JSON could carry it, but a recipe never makes it again."""

    name: str


def test_a_dataclass_outside_the_course_is_not_written():
    with pytest.raises(recipe.Unwritable, match="not one of the course's classes"):
        recipe.written(Card("mine"))


def test_an_explorer_with_an_argument_json_cannot_carry_keeps_no_recipe():
    class Odd(explorers.FloorExplorer):
        def __init__(self, pick):
            super().__init__(share=pick())

    odd = Odd(lambda: 50)
    assert odd.recipe is None
    bundle, metadata = odd._repr_mimebundle_()
    assert metadata == {} and "A still of this explorer" in bundle["text/html"]
