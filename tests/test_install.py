"""What a plain `pip install "kvlesson[course]"` brings: nothing that slows down every
nbgrader process. rfc3987-syntax (jsonschema 4.25's format-nongpl extra, which jupyter-events
asks for) costs 1.4 s in each process that imports nbformat and halved the speed of grading;
the course extra keeps jsonschema below 4.25 (pyproject.toml), so the jsonschema this
environment's install chose must not ask for it."""

from __future__ import annotations

import importlib.metadata


def test_the_installed_jsonschema_does_not_ask_for_rfc3987_syntax():
    wants = [
        r for r in importlib.metadata.requires("jsonschema") or [] if r.startswith("rfc3987-syntax")
    ]
    assert wants == [], (importlib.metadata.version("jsonschema"), wants)
