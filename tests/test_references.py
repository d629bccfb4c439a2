"""Every name and file the package, the guides and the scripts point to exists.

Long docstrings drift: a function renamed, a module moved, a file gone, and the sentence
that sent a reader there stays. Read as text: every dotted `kvlesson.x.y` name in the
package, the docs, the README, the benchmarks and the scripts must import (a module, then
attributes), and every path of this repository they or the tests name (`kvlesson/...py`,
`tests/...py`, `docs/...md`, `scripts/...`, `hub/...`, `binder/...`, `benchmarks/...`) must
be a file here. docs/fidelity.md is left out of the paths: its paths are vLLM's source.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from support.paths import ROOT

DOTTED = re.compile(r"(?<![\w./])(kvlesson(?:\.\w+)+)")
PATH = re.compile(
    r"(?<![\w/.-])((?:kvlesson|tests|docs|benchmarks|scripts|hub|binder)"
    r"/[\w./-]+\.(?:py|md|sh|txt|json|toml))"
)
NAMED = [
    *ROOT.glob("kvlesson/**/*.py"),
    *ROOT.glob("docs/*.md"),
    ROOT / "README.md",
    *ROOT.glob("benchmarks/*.py"),
    *ROOT.glob("scripts/*"),
    *ROOT.glob("hub/*"),
]
PATHS_ONLY = [
    p for p in ROOT.glob("tests/**/*.py") if p.name != "test_references.py"
]  # not its own examples
# a file's name that starts like a module (the site's logo, kvlesson.svg), not a dotted name
FILE_NAME = re.compile(r"\.(svg|png|css|js|html|json|toml|ipynb|txt|md|csv)$")
EXTERNAL_PATHS = {ROOT / "docs" / "fidelity.md"}  # its paths are files of vLLM's source


def resolves(dotted: str) -> bool:
    """Whether `dotted` is a module of kvlesson, or an attribute (at any depth) of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr, None)
            if found is None:
                return False
        return True
    return False


def stale(paths: list[Path], dotted: bool) -> list[str]:
    """`file: name` for each name in `paths` that does not resolve (a path with `...` in it
    is a pattern, not a file)."""
    found = []
    for path in paths:
        text = path.read_text()
        if path not in EXTERNAL_PATHS:
            found += [
                f"{path.name}: {name}"
                for name in PATH.findall(text)
                if "..." not in name and not (ROOT / name).exists()
            ]
        if dotted:
            found += [
                f"{path.name}: {name}"
                for name in DOTTED.findall(text)
                if not FILE_NAME.search(name) and not resolves(name.rstrip("."))
            ]
    return sorted(set(found))


def test_every_name_and_file_the_package_and_guides_point_to_exists():
    assert stale(NAMED, dotted=True) == []


def test_every_file_the_tests_point_to_exists():
    assert stale(PATHS_ONLY, dotted=False) == []


@pytest.mark.parametrize(
    "text, found",
    [
        (
            "see `kvlesson.grading.marking.mark_notebook`",
            ["page.md: kvlesson.grading.marking.mark_notebook"],
        ),
        ("in kvlesson/grading/marking.py", ["page.md: kvlesson/grading/marking.py"]),
        ("`kvlesson.memory.floor.memory_parts` and kvlesson/memory/floor.py, tests/...py", []),
    ],
)
def test_the_reader_finds_a_stale_name_and_a_stale_file(tmp_path, text, found):
    page = tmp_path / "page.md"
    page.write_text(text)
    assert stale([page], dotted=True) == found
