"""The probe search's findings, kept between builds: a test cell whose search would come out
the same is not searched again.

The search (`kvlesson.authoring.probe_search`) holds every known mistake of an answer against
every input it plans, most of a build's time (Exercise 2.2's alone, some 5 s of a core). What
it finds depends only on what the kernel holds when the test cell runs (every cell above it,
and the files beside the notebook), on the cell, its answer, the numbers in view and the
notebook's names of each argument's kind, and on the code that computes it all: every module
of kvlesson and the Python that runs them. A build that finds all of these as an earlier one
had them uses what that one found; an instructor who changes one exercise waits for that
exercise's search only. `kvlesson build --fresh` searches every cell again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kvlesson.authoring.digests import code_digest
from kvlesson.authoring.probe_search import Choice, Search

FOLDER = Path(".kvlesson") / "search"  # in the course root; .gitignore keeps it out of git
MOST_KEPT = 2_000  # searches kept; the oldest go first (a course holds some 30 test cells)


class SearchCache:
    """The searches kept in `folder` (a course root's FOLDER)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def ask(self, state: str, source: str, right: str, shown: set[float], like: dict) -> str:
        """The name of one search: everything its outcome depends on, digested."""
        asked = [code_digest("**/*.py"), state, source, right, sorted(shown), like]
        return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()

    def get(self, asked: str) -> Search | None:
        """The search kept under `asked`, or None (none kept, or one that cannot be read)."""
        try:
            kept = json.loads((self.folder / f"{asked}.json").read_text())
            choice = None
            if kept["choice"] is not None:
                missed = kept["choice"]["missed"]
                choice = Choice(kept["choice"]["added"], {s: set(m) for s, m in missed.items()})
            return Search(kept["source"], kept["same"], choice, kept["uncaught"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, asked: str, found: Search) -> None:
        """Keep `found` under `asked`, and only the newest MOST_KEPT searches."""
        self.folder.mkdir(parents=True, exist_ok=True)
        choice = None
        if found.choice is not None:
            missed = {side: sorted(m) for side, m in found.choice.missed.items()}
            choice = {"added": found.choice.added, "missed": missed}
        kept = {"source": found.source, "same": found.same, "choice": choice}
        path = self.folder / f"{asked}.json"
        path.write_text(json.dumps({**kept, "uncaught": found.uncaught}))
        every = sorted(self.folder.glob("*.json"), key=_age)
        for old in every[:-MOST_KEPT]:
            old.unlink(missing_ok=True)


def _age(path: Path) -> float:
    """When `path` was written; 0 for one another build removed meanwhile (builds run side
    by side, each keeping its searches in the same folder)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
