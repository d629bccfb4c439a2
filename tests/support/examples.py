"""How many examples hypothesis draws: what each test asks for in CI, a twentieth in the quick tier.

A property test writes `@settings(max_examples=examples(1000))`: under the `ci` profile (the
default, and what `bash scripts/test.sh` runs) it draws 1000; under `HYPOTHESIS_PROFILE=quick`
(`bash scripts/test.sh --quick`) it draws 50, enough to catch a broken engine in everyday work,
while CI keeps every count.
"""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "quick"):
    raise ValueError(f"HYPOTHESIS_PROFILE must be 'ci' or 'quick', got {PROFILE!r}")
QUICK_SHARE = 20  # the quick tier draws one example in this many
FEWEST = 10  # and never fewer than this


def examples(asked: int) -> int:
    """The examples a test that asks for `asked` draws under this run's profile."""
    return asked if PROFILE == "ci" else max(FEWEST, asked // QUICK_SHARE)
