"""A test cell's probe search, kept between builds: read back only for the same search (the
kernel's state above the cell, the cell, its answer, the numbers in view, the names of each
argument's kind, the package's code), unread when its file is damaged, the oldest dropped."""

from __future__ import annotations

import os

import pytest

from kvlesson.authoring import search_cache
from kvlesson.authoring.probe_search import Choice, Search
from kvlesson.authoring.search_cache import SearchCache

ASKED = dict(
    state="s", source="cell", right="def f(x): ...", shown={1.0, 2.5}, like={"f": {0: ["a"]}}
)
FOUND = Search(
    "cell with f(3)",
    {"def f(x): return 0": "abc"},
    Choice({"verify": [{"args": ["3"]}], "record": []}, {"verify": set(), "record": {2}}),
    ["02_ceiling/ex: no input tried catches the mistake m on the record side"],
)


def test_a_search_is_read_back_as_it_was_kept(tmp_path):
    cache = SearchCache(tmp_path)
    asked = cache.ask(**ASKED)
    assert cache.get(asked) is None
    cache.put(asked, FOUND)
    assert cache.get(asked) == FOUND
    assert cache.get(cache.ask(**ASKED)) == FOUND  # asked again: the same name
    nothing = Search("cell")  # a cell that calls no function on written inputs
    cache.put(cache.ask(**{**ASKED, "source": "other"}), nothing)
    assert cache.get(cache.ask(**{**ASKED, "source": "other"})) == nothing


@pytest.mark.parametrize(
    "change",
    [
        {"state": "a cell above changed"},
        {"source": "cell changed"},
        {"right": "def f(x): return 1"},
        {"shown": {1.0}},
        {"like": {}},
    ],
)
def test_anything_the_search_depends_on_makes_it_another(change):
    cache = SearchCache("unused")
    assert cache.ask(**ASKED) != cache.ask(**{**ASKED, **change})


def test_the_packages_code_is_part_of_the_name(monkeypatch):
    cache = SearchCache("unused")
    before = cache.ask(**ASKED)
    monkeypatch.setattr(search_cache, "code_digest", lambda *patterns: "another package")
    assert cache.ask(**ASKED) != before


def test_a_damaged_search_is_not_read(tmp_path):
    cache = SearchCache(tmp_path)
    asked = cache.ask(**ASKED)
    cache.put(asked, FOUND)
    (tmp_path / f"{asked}.json").write_text('{"source": 1')
    assert cache.get(asked) is None
    (tmp_path / f"{asked}.json").write_text('{"source": "x"}')
    assert cache.get(asked) is None


def test_only_the_newest_searches_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(search_cache, "MOST_KEPT", 3)
    cache = SearchCache(tmp_path)
    names = [cache.ask(**{**ASKED, "state": str(n)}) for n in range(5)]
    for age, asked in enumerate(names[:4]):
        cache.put(asked, FOUND)
        os.utime(tmp_path / f"{asked}.json", (age, age))  # written long ago, oldest first
    cache.put(names[4], FOUND)
    assert sorted(p.stem for p in tmp_path.glob("*.json")) == sorted(names[2:])
