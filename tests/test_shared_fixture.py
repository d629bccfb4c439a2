"""support.shared.once: a folder built once a run, whichever worker asks first."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.shared import once


class Workers:
    """A tmp_path_factory as one xdist worker of a run sees it (its own popen-gwN folder)."""

    def __init__(self, run: Path, worker: str):
        self.base = run / f"popen-{worker}"
        self.base.mkdir(parents=True, exist_ok=True)

    def getbasetemp(self) -> Path:
        return self.base


def test_the_first_worker_builds_and_the_second_reads_the_same_folder(tmp_path):
    built = []

    def build(folder: Path) -> None:
        built.append(folder)
        (folder / "graded.txt").write_text("42")

    first = once(Workers(tmp_path, "gw0"), "class", build)
    second = once(Workers(tmp_path, "gw1"), "class", build)
    assert first == second == tmp_path / "class"
    assert built == [first] and (second / "graded.txt").read_text() == "42"


def test_a_build_that_failed_fails_every_later_ask_with_its_words(tmp_path):
    def build(folder: Path) -> None:
        raise RuntimeError("the box would not start")

    with pytest.raises(RuntimeError):
        once(Workers(tmp_path, "gw0"), "class", build)
    with pytest.raises(pytest.fail.Exception, match="the box would not start"):
        once(Workers(tmp_path, "gw1"), "class", lambda folder: None)
