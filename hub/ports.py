"""Who holds the hub's ports, and whether an account that is not root could take them first.

hub/setup.sh copies this file beside the hub's configuration (PREFIX/etc), which imports it
when the hub starts (docs/jupyterhub.md, step 4). A port from the machine's unprivileged
start (`/proc/sys/net/ipv4/ip_unprivileged_port_start`, 1024 by Linux's default; 0 in some
containers) is anyone's: a student's process left running from her terminal can bind the
hub's port before the hub restarts, then read every password sent to it. So the hub listens
below that start only, and checks, before it binds, that nothing holds its ports: a proxy
the hub itself left (its pid file names it) is ended; anything else is named, with its
process id and account, and the hub does not start.
"""

from __future__ import annotations

import os
import pwd
import signal
import time
from dataclasses import dataclass
from pathlib import Path

UNPRIVILEGED = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")
LISTEN = "0A"  # the state of a listening socket in /proc/net/tcp


@dataclass(frozen=True)
class Holder:
    """A process that holds a port: its id, its account and its command line."""

    pid: int
    account: str
    command: str

    def __str__(self) -> str:
        return f"process {self.pid} of {self.account} ({self.command[:120]})"


def unprivileged_start() -> int:
    """The lowest port any account may bind on this machine (1024 if the kernel says nothing)."""
    try:
        return int(UNPRIVILEGED.read_text())
    except (OSError, ValueError):
        return 1024


def listening_inodes(port: int) -> set[int]:
    """The socket inodes listening on TCP `port`, on any address (IPv4 and IPv6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.add(int(fields[9]))
    return found


def holders(port: int) -> list[Holder]:
    """Every process that holds a socket listening on `port` (read from /proc, as root)."""
    inodes = listening_inodes(port)
    if not inodes:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            sockets = set(_links(entry / "fd"))
            owner = entry.stat().st_uid
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # a process that ended meanwhile
        if any(f"socket:[{inode}]" in sockets for inode in inodes):
            found.append(Holder(int(entry.name), _account(owner), command.strip()))
    if not found:  # a socket no process of ours can see (another namespace)
        found.append(Holder(0, "an unknown account", "not visible from here"))
    return found


def _links(folder: Path) -> list[str]:
    """What each descriptor in a process's fd folder points at (one closed meanwhile, such
    as the one that lists the folder, is passed over)."""
    found = []
    for fd in folder.iterdir():
        try:
            found.append(os.readlink(fd))
        except OSError:
            continue
    return found


def _account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user id {uid}"


def left_proxy(pid_file: str | Path) -> int | None:
    """The process id of a proxy the hub started and left running (its pid file names it and
    its command is configurable-http-proxy), or None."""
    try:
        pid = int(Path(pid_file).read_text().strip())
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if b"configurable-http-proxy" in command else None


def running(pid: int) -> bool:
    """Whether process `pid` still runs. A process that has ended but whose parent has not yet
    read its exit status (a zombie: the hub started from a shell or a service manager that is
    busy) keeps its /proc entry, yet holds no port and runs nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # the state follows the command's name


def end(pid: int, seconds: float = 5) -> None:
    """Stop the process `pid`: SIGTERM, then SIGKILL after `seconds`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not running(pid):
                return
            time.sleep(0.1)


def ports_problem(ports: dict[str, int], proxy_pid_file: str | Path) -> str:
    """Why the hub must not start on `ports` (what each is for: its port), or "": a port
    any account may bind, or one something holds. A proxy the hub left is ended first."""
    start = unprivileged_start()
    open_to_all = {what: port for what, port in ports.items() if port >= start}
    if open_to_all:
        return (
            f"this machine lets every account bind ports from {start} "
            f"(/proc/sys/net/ipv4/ip_unprivileged_port_start), and the hub's "
            f"{', '.join(f'{what} ({port})' for what, port in open_to_all.items())} would "
            "be among them: a student's process could take one first. Set "
            "`sysctl net.ipv4.ip_unprivileged_port_start=1024` (and in /etc/sysctl.d/), "
            "then start the hub again"
        )
    left = left_proxy(proxy_pid_file)
    if left is not None:
        end(left)
    taken = {what: holders(port) for what, port in ports.items()}
    said = [
        f"{what} ({ports[what]}) is held by {', '.join(map(str, who))}"
        for what, who in taken.items()
        if who
    ]
    if said:
        return (
            "the hub's ports are taken: " + "; ".join(said) + ". End what holds them "
            "(kill PID) and start the hub again; the hub never shares its ports"
        )
    return ""
