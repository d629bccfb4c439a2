"""The capstone's table in the key: the grid search (some 20 s of a core) runs again only
when the model's code changed since the key was written; a course for other hardware keeps
the course's own table."""

from __future__ import annotations

import json

import pytest

from kvlesson.authoring import tables

CAPSTONE = [f"x = 1\n{tables.CAPSTONE_IMPORT}\n"]
TABLE = {"assistant/2026": {"choice": {"cap": 4}, "tokens_per_s": 3.4}}


@pytest.fixture
def searched(monkeypatch):
    runs = []
    monkeypatch.setattr(tables, "capstone_table", lambda: runs.append(1) or {"fresh": {}})
    return runs


def key_with(path, made_with):
    key = {"exercises": {}, "tables": {"capstone": TABLE}}
    if made_with is not None:
        key[tables.MADE_WITH] = made_with
    path.write_text(json.dumps(key))
    return path


def test_a_notebook_without_the_capstone_has_no_table(searched, tmp_path):
    assert tables.tables_for(["print(1)"], key_with(tmp_path / "k.json", None)) == {}
    assert searched == []


def test_a_rebuild_keeps_the_table_while_the_model_code_is_the_same(searched, tmp_path):
    made_with = tables.code_digest(*tables.MODEL_CODE)
    key = key_with(tmp_path / "k.json", made_with)
    kept = tables.tables_for(CAPSTONE, key, same_code_only=True)
    assert kept == {"tables": {"capstone": TABLE}, tables.MADE_WITH: made_with}
    assert searched == []


@pytest.mark.parametrize("made_with", ["older model code", None])
def test_a_rebuild_searches_again_when_the_model_code_changed(searched, tmp_path, made_with):
    key = key_with(tmp_path / "k.json", made_with)
    found = tables.tables_for(CAPSTONE, key, same_code_only=True)
    assert found["tables"] == {"capstone": {"fresh": {}}} and searched == [1]
    assert found[tables.MADE_WITH] == tables.code_digest(*tables.MODEL_CODE)


def test_a_course_for_other_hardware_keeps_the_courses_table(searched, tmp_path):
    key = key_with(tmp_path / "k.json", "older model code")
    assert tables.tables_for(CAPSTONE, key)["tables"] == {"capstone": TABLE}
    assert tables.tables_for(CAPSTONE, tmp_path / "none.json")["tables"] == {
        "capstone": {"fresh": {}}
    }
    assert searched == [1]
