"""matplotlib's list of the machine's fonts, made once and shown to every boxed kernel.

A boxed kernel starts with an empty home, where matplotlib keeps its cache: without one it
scans every font of the machine on its first import (1 to 2 s of each kernel's start, twice
for a submission that runs twice). The grading run makes the list once, outside any box,
and each box shows it read-only where matplotlib looks (`Walls.files`). The list names the
fonts of this machine only; a kernel that finds it stale or unreadable makes its own.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

# Run in a fresh Python: matplotlib makes its list in MPLCONFIGDIR, and says where.
MAKE = (
    "import matplotlib, matplotlib.font_manager as fm, pathlib; "
    "print(next(pathlib.Path(matplotlib.get_cachedir()).glob('fontlist-*.json')))"
)


@functools.lru_cache(maxsize=4)
def font_cache(folder: Path) -> str:
    """The font list, made in `folder` if it is not there yet; "" when it cannot be made
    (each kernel then makes its own)."""
    folder = Path(folder) / "matplotlib"
    made = sorted(folder.glob("fontlist-*.json"))
    if made:
        return str(made[0])
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MPLCONFIGDIR": str(folder)}
    done = subprocess.run(
        [sys.executable, "-I", "-c", MAKE], env=env, capture_output=True, text=True, timeout=300
    )
    path = done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout else ""
    return path if path and Path(path).is_file() else ""


def where_matplotlib_looks(home: Path, cache: Path) -> Path:
    """Where a kernel whose home is `home` (and no MPLCONFIGDIR) reads the list `cache`."""
    return home / ".cache" / "matplotlib" / cache.name
