"""The grader's key of an assignment: what the build writes and the grade reads.

`kvlesson build` (or `for`) writes `keys/<assignment>.json` in the course root: for each
exercise (its hidden test's grade id) its points, the forbidden functions, every probe's
kind and right answer in normal form, and the answers each known mistake gives there with
the words of its hint. The key is never released and never in solutions/; the grading
command, the marking and the class report read it.
"""

from __future__ import annotations

import json
from pathlib import Path

KEYS = "keys"  # the keys' folder in a course root: never released, never in solutions/


def key_path(root: Path, assignment: str) -> Path:
    """Where the key of `assignment` lives in the course root `root`."""
    return Path(root) / KEYS / f"{assignment}.json"


def read_key(path: Path) -> dict:
    """A key written by `kvlesson build` (or `for`)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no key at {path}: run `kvlesson build` (or `kvlesson for`) first")
    key = json.loads(path.read_text())
    if not isinstance(key, dict) or not isinstance(key.get("exercises"), dict):
        raise ValueError(f"{path} is not a kvlesson key (no exercises)")
    return key


def write_key(path: Path, key: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(key, indent=1, sort_keys=True) + "\n")
