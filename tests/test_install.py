"""What a plain `pip install "kvlesson[course]"` brings: nothing that slows down every
nbgrader process. rfc3987-syntax (jsonschema 4.25's format-nongpl extra, which jupyter-events
asks for) costs 1.4 s in each process that imports nbformat and halved the speed of grading;
the course extra keeps jsonschema below 4.25 (pyproject.toml), so the jsonschema this
environment's install chose must not ask for it. And what `pip install -e ".[author]"` brings:
everything an instructor's `kvlesson check` runs."""

from __future__ import annotations

import ast
import importlib.metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from support.paths import ROOT


def test_the_installed_jsonschema_does_not_ask_for_rfc3987_syntax():
    wants = [
        r for r in importlib.metadata.requires("jsonschema") or [] if r.startswith("rfc3987-syntax")
    ]
    assert wants == [], (importlib.metadata.version("jsonschema"), wants)


def closure(extras: set[str]) -> set[str]:
    """Every distribution `pip install kvlesson[extras]` installs, as this environment's
    metadata says (kvlesson's own extras followed where they name kvlesson again)."""
    found, todo = set(), [("kvlesson", frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker and not any(marker.evaluate({"extra": e}) for e in wanted or {""}):
                continue
            key = canonicalize_name(requirement.name)
            if key == "kvlesson":
                todo.append((key, frozenset(requirement.extras)))
            elif key not in found:
                found.add(key)
                todo.append((key, frozenset(requirement.extras)))
    return found


def test_the_author_extra_installs_what_the_one_exercise_check_imports():
    """`pip install -e ".[author]"` (docs/first-exercise.md) brings every package that
    `kvlesson check` and the tests it runs import (the walk of 2026-12-07 found no pytest in
    the documented install, and ran the machine's pytest instead)."""
    from kvlesson.authoring.exercise_check import TESTS

    files = [ROOT / f for f in TESTS] + [ROOT / "tests" / "conftest.py"]
    files += sorted((ROOT / "tests" / "support").glob("*.py"))
    imported = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    sources = importlib.metadata.packages_distributions()
    needed = {
        canonicalize_name(dist)
        for module in imported
        for dist in sources.get(module, [])
        if canonicalize_name(dist) != "kvlesson"
    }
    assert {"pytest", "nbformat", "nbclient", "nbgrader"} <= needed  # the check reads them
    assert needed - closure({"author"}) == set()
    assert {"pytest", "ruff", "nbval"} <= closure({"author"}) and "pytest" not in closure(
        {"course"}
    )
