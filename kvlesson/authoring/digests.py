"""Digests of the package's code: what a build may keep from an earlier one depends on them.

The build keeps two findings between runs, each only while the code that computed it is
the same: the probe search of a test cell (`kvlesson.authoring.search_cache`: every module
of kvlesson) and the capstone's grid search (`kvlesson.authoring.tables`: the model only).
The Python that ran them is part of each digest.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from pathlib import Path


@functools.lru_cache(maxsize=8)
def code_digest(*patterns: str) -> str:
    """A digest of this Python's version and of the installed kvlesson's files that match
    `patterns` (globs inside the package, "memory/*.py"), their names and contents."""
    import kvlesson

    home = Path(kvlesson.__file__).resolve().parent
    digest = hashlib.sha256(sys.version.encode() + b"\0")
    for path in sorted({p for pattern in patterns for p in home.glob(pattern)}):
        digest.update(str(path.relative_to(home)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
