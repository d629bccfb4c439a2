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

from kvlesson.authoring.digests import code_digest

CAPSTONE_IMPORT = "from kvlesson.serving import capstone"
MADE_WITH = "tables_made_with"  # the key's digest of the code its tables were made with
MODEL_CODE = ("arguments.py", "memory/*.py", "serving/*.py")  # all serving may import


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


def tables_for(sources: list[str], built: Path | None = None, same_code_only: bool = False) -> dict:
    """The tables of a notebook whose code cells are `sources` ({} when it needs none) and
    the digest of the code they were made with. With `built`, a key written before, its
    tables when it has them: for the course for other hardware (the capstone's users run on
    their own card, whatever the course's), and, `same_code_only`, for a rebuild whose model
    code is the same (the grid search is some 20 s of a core)."""
    if not any(CAPSTONE_IMPORT in source for source in sources):
        return {}
    made_with = code_digest(*MODEL_CODE)
    if built is not None and built.is_file():
        before = json.loads(built.read_text())
        kept = before.get("tables", {}).get("capstone")
        if kept and (not same_code_only or before.get(MADE_WITH) == made_with):
            said = {MADE_WITH: before[MADE_WITH]} if MADE_WITH in before else {}
            return {"tables": {"capstone": kept}, **said}
    return {"tables": {"capstone": capstone_table()}, MADE_WITH: made_with}
