"""Where the tests find the repository they check."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: tests/support/ is two below it
DATA = ROOT / "tests" / "data"
