"""A forked kernel puts up its own walls: what bubblewrap does, for the writable places.

A zygote (`kvlesson.grading.box.zygote`) sits in a box bubblewrap made once, with the
capabilities of its own user namespace. Each kernel it forks, before any student code:

1. leaves the zygote's namespaces (`unshare`): a mount, process, network, IPC and host
   namespace of its own, its mounts private (nothing it mounts reaches the zygote);
2. puts up its writable places anew (`put_up`): an empty in-memory file system of a fixed
   size on each (`Walls.fresh`), what is shown or hidden inside one put back as the
   zygote's box has it, a copy of the submission's notebooks read-only in the working copy;
3. the first process of its new process namespace (its init, which only waits) mounts
   its own /proc (it sees its own processes only: not the zygote, not another
   submission's kernel), forks the kernel, covers /proc's settings read-only as bubblewrap
   does (`own_proc`, `cover_proc`) and drops every capability;
4. the kernel takes a user namespace of its own in which no other can be made, and a
   session keyring of its own (`own_user`: keyrings outlive processes, and a nested user
   namespace would give back the power to mount a file system of any size), then drops
   every capability, bounding set included, with `no_new_privs` (no program it runs can
   get one back: `drop_capabilities`).

After that neither can change a wall: they hold no capability over the namespaces the
walls live in. Linux's calls are made through libc (ctypes), as Python 3.11 has no `unshare`.
"""

from __future__ import annotations

import ctypes
import os
import platform
from pathlib import Path

from kvlesson.grading.box.walls import FRESH, HIDDEN, SHOWN, Mount

# <sched.h>, <sys/mount.h>, <linux/prctl.h>, <linux/capability.h>
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME = 0x20, 0x400, 0x800
MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 0x1000, 0x4000, 0x40000, 0x200000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
# what statvfs says of a mount, as the flags a read-only remount must keep (a mount shown
# from the machine by an unprivileged bubblewrap has them locked: a remount that drops one
# is refused)
KEPT_FLAGS = {
    os.ST_NOSUID: MS_NOSUID,
    os.ST_NODEV: MS_NODEV,
    os.ST_NOEXEC: MS_NOEXEC,
    os.ST_NOATIME: MS_NOATIME,
    os.ST_NODIRATIME: MS_NODIRATIME,
    os.ST_RELATIME: MS_RELATIME,
}
PROC_COVERS = ("sys", "sysrq-trigger", "irq", "bus")  # read-only in /proc, as bubblewrap has them
HIDDEN_BYTES = 4096  # an empty read-only folder needs no room
KEYCTL_JOIN_SESSION_KEYRING = 1  # <linux/keyctl.h>
# keyctl(2)'s number in each architecture's system call table (libc has no wrapper)
KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "ppc64le": 271, "s390x": 280}

_libc = ctypes.CDLL(None, use_errno=True)


class WallError(OSError):
    """A wall a kernel could not put up: it must not run."""


def _call(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise WallError(number, f"{what}: {os.strerror(number)}")


def prctl(option: int, value: int = 0) -> None:
    _call(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


def unshare(flags: int) -> None:
    _call(_libc.unshare(flags), "unshare")


def mount(source: str | None, target: Path, kind: str | None, flags: int, data: str = "") -> None:
    _call(
        _libc.mount(
            source.encode() if source else None,
            str(target).encode(),
            kind.encode() if kind else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def leave_the_zygote() -> None:
    """Namespaces of its own (the next child it makes is the first process of the new
    process namespace), and mounts that never reach the zygote's."""
    unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    mount(None, Path("/"), None, MS_REC | MS_PRIVATE)


def read_only(target: Path) -> None:
    """Remount one mount read-only, keeping its other flags."""
    kept = os.statvfs(target).f_flag
    flags = sum(bit for flag, bit in KEPT_FLAGS.items() if kept & flag)
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | flags)


def place(target: Path, folder: bool) -> None:
    """Make the mount point `target` (a folder, or an empty file) if it is not there."""
    if folder:
        target.mkdir(parents=True, exist_ok=True)
    elif not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()


def show(fd: int, target: Path) -> None:
    """Show what the open descriptor `fd` names at `target`, read-only, with what is shown
    inside it (a bind of only part of a mount shown from the machine is refused)."""
    place(target, os.path.isdir(f"/proc/self/fd/{fd}"))
    mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    read_only(target)


def copy_read_only(fd: int, target: Path) -> None:
    """A copy of what the descriptor `fd` reads, at `target`, read-only: bound over itself
    and remounted (a file opened outside this mount namespace cannot be bound)."""
    with open(fd, "rb", closefd=False) as source, open(target, "wb") as copy:
        while chunk := source.read(1 << 20):
            copy.write(chunk)
    mount(str(target), target, None, MS_BIND)
    read_only(target)


def put_up(plan: list[Mount], work: Path, notebooks: dict[str, int]) -> None:
    """Put up the fresh walls of `plan` (`Walls.fresh`) in their order, then show each of
    the submission's `notebooks` (name: an open descriptor) read-only in `work`. What is
    shown again is opened first, as the zygote's box shows it, before anything covers it."""
    opened = {
        m.target: os.open(m.source, os.O_PATH | os.O_CLOEXEC) for m in plan if m.kind == SHOWN
    }
    try:
        for m in plan:
            if m.kind == FRESH:
                place(m.target, True)
                mount("tmpfs", m.target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={m.size},mode=755")
            elif m.kind == HIDDEN and m.source is None:
                place(m.target, True)
                mount("tmpfs", m.target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={HIDDEN_BYTES}")
            elif m.kind == HIDDEN:  # a hidden file: shown as the file it is replaced by
                fd = os.open(m.source, os.O_PATH | os.O_CLOEXEC)
                show(fd, m.target)
                os.close(fd)
            else:
                show(opened[m.target], m.target)
        for name, fd in sorted(notebooks.items()):
            copy_read_only(fd, work / name)
        for m in plan:
            if m.kind == HIDDEN and m.source is None:
                read_only(m.target)
    finally:
        for fd in opened.values():
            os.close(fd)


def own_proc() -> None:
    """A /proc of this process namespace (mounted by its first process)."""
    mount("proc", Path("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def cover_proc() -> None:
    """bubblewrap's read-only covers in /proc: the machine's settings (/proc/sys), its
    SysRq trigger, interrupts and buses."""
    proc = Path("/proc")
    for name in PROC_COVERS:
        if (proc / name).exists():
            mount(str(proc / name), proc / name, None, MS_BIND | MS_REC)
            read_only(proc / name)


def own_user() -> None:
    """A user namespace of its own, the same account in it, where no other can be made (a
    nested one would give back the power to mount a file system of any size), and a session
    keyring of its own (keyrings outlive processes: none is shared with another kernel)."""
    uid, gid = os.geteuid(), os.getegid()
    unshare(CLONE_NEWUSER)
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    Path("/proc/sys/user/max_user_namespaces").write_text("0")
    number = KEYCTL_SYSCALL.get(platform.machine())
    if number is None:
        raise WallError(0, f"no keyctl system call known on {platform.machine()}")
    if _libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        _call(-1, "keyctl join session keyring")


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32)] + [
        ("inheritable", ctypes.c_uint32)
    ]


def drop_capabilities() -> None:
    """No capability left, bounding set included, and none to be had again
    (`no_new_privs`: no program this process runs can get one back)."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for capability in range(last + 1):
        prctl(PR_CAPBSET_DROP, capability)
    _call(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient")
    header, data = _Header(LINUX_CAPABILITY_VERSION_3, 0), (_Data * 2)()
    _call(_libc.capset(ctypes.byref(header), data), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)
