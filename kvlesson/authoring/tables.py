"""The grader's tables, written into an assignment's key by the build: answers the package
must not hold.

An exercise whose answer is a choice among many (notebook 6's capstone: settings for three
users) is judged in the kernel against a target and the grid's best tokens/s, which the
package keeps (`kvlesson.serving.capstone.BEST_TOKENS_PER_S`); the grid's best choices
themselves, the answers, live here, in `keys/<assignment>.json` under "tables", never
released and never importable by a student's kernel. `tests/serving/test_capstone.py`
checks them against the grid search.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

CAPSTONE_IMPORT = "from kvlesson.serving import capstone"


def capstone_table() -> dict[str, dict]:
    """The grid's best choice and its tokens/s for each user on the shown and hidden days,
    keyed "user/seed"."""
    from kvlesson.serving import capstone

    table = {}
    for name in capstone.USERS:
        for seed in (capstone.SHOWN_SEED, *capstone.HIDDEN_SEEDS):
            choice, tokens_per_s = capstone.search(name, seed)
            table[f"{name}/{seed}"] = {"choice": asdict(choice), "tokens_per_s": tokens_per_s}
    return table


def tables_for(sources: list[str], built: Path | None = None) -> dict:
    """The tables of a notebook whose code cells are `sources` ({} when it needs none); with
    `built`, the key the course's own build wrote, its tables when it has them (the course
    for other hardware: the capstone's users run on their own card, whatever the course's)."""
    if not any(CAPSTONE_IMPORT in source for source in sources):
        return {}
    if built is not None and built.is_file():
        kept = json.loads(built.read_text()).get("tables", {}).get("capstone")
        if kept:
            return {"tables": {"capstone": kept}}
    return {"tables": {"capstone": capstone_table()}}
