"""One card model, stated: the course reads a card two ways, and says so where it changes.

Notebooks 1 to 4 keep the lesson's card (the data sheet's size, the toy's fixed
2 GB reserve: their figures are pinned); notebook 5 draws a card as vLLM measures
it, with 3 GB assumed for profiling. Every setting line and explorer names its
reading with `card_sentences.card_phrase`. Read in course order, a notebook that
prints a card with another reading (or reserve) than the notebook before it printed
for that card must say so in a "Which card." sentence naming both readings; else a
student meets two figures for one card and one setting, and nothing says which.
"""

from __future__ import annotations

import re

import nbformat
import pytest

import kvlesson as kv
from kvlesson.authoring.shown_numbers import cell_text
from kvlesson.lesson import card_sentences
from support.paths import ROOT

READING = (
    r"the (?P<name>[A-Z][\w .]*?) (?P<how>as vLLM measures it|as its data sheet reads it) "
    r"\((?P<size>[^)]*)\), with (?P<reserve>the toy's fixed reserve of [\d.]+ GB|"
    r"[\d.]+ GB assumed for what profiling takes)"
)
SWITCH = re.compile(
    re.escape(card_sentences.SWITCH)
    + r" .*? drew "
    + READING
    + r"; .*? draws it (?P<how2>as vLLM measures it|as its data sheet reads it) "
    r"\((?P<size2>[^)]*)\), with (?P<reserve2>the toy's fixed reserve of [\d.]+ "
    r"GB|[\d.]+ GB assumed for what profiling takes)\."
)


def notebook_texts() -> list[tuple[str, str]]:
    """Each solution notebook in course order: its name and all it shows (markdown and the
    text of every output)."""
    texts = []
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        texts.append((path.parent.name, "\n".join(cell_text(cell) for cell in nb.cells)))
    return texts


def unstated_switches(texts: list[tuple[str, str]]) -> list[str]:
    """Where a notebook draws a card another way than the last notebook that drew it, with no
    "Which card." sentence from that reading to this one."""
    last: dict[str, tuple[str, str, str]] = {}
    problems = []
    for name, text in texts:
        stated = {
            (m["name"], (m["how"], m["size"], m["reserve"]), (m["how2"], m["size2"], m["reserve2"]))
            for m in SWITCH.finditer(text)
        }
        seen_here: dict[str, tuple[str, str, str]] = {}
        for match in re.finditer(READING, text):
            card, reading = match["name"], (match["how"], match["size"], match["reserve"])
            before = last.get(card)
            changed = before is not None and before != reading and card not in seen_here
            if changed and (card, before, reading) not in stated:
                problems.append(
                    f"{name}: {card} {reading[0]} ({reading[1]}), after "
                    f"{before[0]} ({before[1]}), with no 'Which card.' sentence"
                )
            seen_here.setdefault(card, reading)
        last.update(seen_here)
    return problems


def test_every_change_of_reading_is_stated_in_the_notebook_that_makes_it():
    texts = notebook_texts()
    assert not unstated_switches(texts)
    cards = {m["name"] for _, text in texts for m in re.finditer(READING, text)}
    assert {"A100 80GB", "H100 80GB", "RTX 3090 24GB"} <= cards  # the checks are not empty
    assert sum(len(SWITCH.findall(text)) for _, text in texts) >= 3


def test_the_check_fails_when_a_notebook_switches_without_saying_so():
    toy, real = (
        card_sentences.card_phrase(reading)
        for reading in (card_sentences.toy(kv.A100_80GB), card_sentences.real(kv.A100_80GB))
    )
    course = [("01", f"The card: {toy}; pool 53.9 GB."), ("05", f"The card: {real}; pool 57.6 GB.")]
    assert unstated_switches(course) == [
        (
            "05: A100 80GB as vLLM measures it (79.32 GiB, 85.2 GB), after as its data sheet reads "
            "it (80.0 GB), with no 'Which card.' sentence"
        )
    ]
    said = card_sentences.switch_sentence(
        card_sentences.toy(kv.A100_80GB),
        "notebook 1",
        card_sentences.real(kv.A100_80GB),
        90,
        kv.LLAMA_31_8B,
    )
    assert unstated_switches([course[0], (course[1][0], course[1][1] + "\n" + said)]) == []


@pytest.mark.parametrize("name", ["01_floor_plan", "05_real_server", "06_traffic", "07_wrap_up"])
def test_every_setting_line_names_its_reading(name):
    text = dict(notebook_texts())[name]
    setting = next(line for line in text.splitlines() if line.startswith("**The setting.**"))
    assert re.search(READING, setting), setting


def test_notebook_5_gives_the_reserve_it_uses():
    """Its setting line does not print the toy's 2.0 GB beside the walk's 3 GB."""
    text = dict(notebook_texts())["05_real_server"]
    setting = next(line for line in text.splitlines() if line.startswith("**The setting.**"))
    assert "3.0 GB assumed for what profiling takes" in setting and "2.0 GB" not in setting
