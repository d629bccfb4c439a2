"""Stop the course's hub: the hub, its proxy, and every process of every student.

    /opt/kvlesson-hub/venv/bin/python /opt/kvlesson-hub/etc/stop.py

docs/jupyterhub.md's step 5, run as root (hub/setup.sh copies this file to PREFIX/etc). The
hub stops every user's server and its proxy as it ends (each student's processes end with
her server: hub/jupyterhub_config.py); then whatever is left is ended too: a proxy a failed
or killed hub left behind (its pid file names it), and every process of an account of the
students' group, so that none holds a port, or anything else, across a restart. It says
what it ended, and exits 0 once nothing of the hub runs.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

# This file's folder (PREFIX/etc) is first on the import path, as for any script.
import places
import ports
import processes

HUB_SECONDS = 60  # for the hub to stop every server and itself, before it is killed


def main() -> int:
    if os.geteuid() != 0:
        print("stop.py ends the hub and the students' processes: run it as root", file=sys.stderr)
        return 1
    try:
        hub = int(Path(places.HUB_PID).read_text().strip())
    except (OSError, ValueError):
        hub = None
    if hub is not None and ports.running(hub):
        ports.end(hub, HUB_SECONDS)  # SIGTERM: the hub stops its servers and its proxy
        print(f"stopped the hub (process {hub}) and the servers it ran")
    else:
        print("the hub was not running")
    left = ports.left_proxy(places.PROXY_PID)
    if left is not None:
        ports.end(left)
        print(f"ended the proxy the hub had left (process {left})")
    ended = processes.end_students(places.STUDENTS)
    time.sleep(0.2)  # SIGKILL is delivered at once; the processes are gone by now
    print(f"ended every process of the students' accounts ({len(ended)} accounts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
