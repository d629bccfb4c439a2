"""Kernels forked from one zygote (kvlesson.grading.box.zygote, enter, launch).

A grading worker forks every kernel from one pre-imported process. These tests fork real
kernels from one zygote, in bubblewrap, and run code in them as a cheat would, with what the
watch cannot see (code run through `_posixsubprocess`, as the cheats' tests do): a kernel
sees neither a sibling's files nor its processes, nor the zygote's memory through /proc; a
kernel forked after a cheat's finds nothing the cheat left, in any writable place, keyring
or IPC namespace; every writable place is capped and the root and /dev are read-only; a
kernel holds no capability and can make no user namespace (which would give back the
power to mount a file system of any size).
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import pytest

from kvlesson.grading.box.kernel import BoxedKernelManager
from kvlesson.grading.box.launch import Zygote, Zygotes
from kvlesson.grading.box.ledger import ALWAYS_PRELOADED
from kvlesson.grading.box.limits import Limits
from kvlesson.grading.box.walls import Walls

pytestmark = pytest.mark.process

DISK = 8 * 2**20  # each writable place, small enough to fill in a moment
READY = 1800  # seconds a kernel may take to answer on a busy machine: a hang guard only
# Run Python where the watch cannot see it, as a cheat would: a process of its own,
# started by C code the audit hook does not hear.
UNWATCHED = """
import os, sys, _posixsubprocess
def start(code, into=-1):
    read, write = os.pipe()
    return _posixsubprocess.fork_exec([sys.executable, "-I", "-c", code],
        [os.fsencode(sys.executable)], True, (), None, None, -1, -1, -1, into, -1, into,
        read, write, True, True, -1, None, None, None, -1, None, False)
def unwatched(code):
    out, into = os.pipe()
    pid = start(code, into)
    os.close(into)
    said = b""
    while chunk := os.read(out, 65536):
        said += chunk
    os.waitpid(pid, 0)
    return said.decode()
def processes():
    found = {}
    for name in os.listdir("/proc"):
        try:
            found[name] = open(f"/proc/{name}/cmdline", "rb").read().decode(errors="replace")
        except (OSError, NotADirectoryError):
            pass
    return {int(p): line for p, line in found.items() if p.isdigit()}
"""
# Writable places of a kernel, by where the kernel finds them
PLACES = [
    "/tmp",
    "/var/tmp",
    "os.path.expanduser('~')",
    "/dev/shm",
    "os.getcwd()",
    "os.path.dirname(__import__('ipykernel.connect').connect.get_connection_file())",
]
PLACES_CODE = "[" + ", ".join(p if not p.startswith("/") else repr(p) for p in PLACES) + "]"
# A key left in (LEAVE) or looked for in (FIND) the user and the session keyrings: keyrings
# outlive processes. keyctl(2) and add_key(2) by number: libc has no wrapper.
KEYRING = """
import ctypes, json, platform
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL = {{"x86_64": 250, "aarch64": 219}}[platform.machine()]
ADD_KEY = {{"x86_64": 248, "aarch64": 217}}[platform.machine()]
KEYCTL_SEARCH, RINGS = 10, {{"user": -4, "session": -3}}
found = {{}}
for name, ring in RINGS.items():
    if {leave}:
        found[name] = libc.syscall(ADD_KEY, b"user", b"kvlesson-cheat", b"x", 1, ring)
    else:
        found[name] = libc.syscall(KEYCTL, KEYCTL_SEARCH, ring, b"user", b"kvlesson-cheat", 0)
print(json.dumps(found))
"""
LEAVE, FIND = KEYRING.format(leave=True), KEYRING.format(leave=False)


@pytest.fixture(scope="module")
def zygote(tmp_path_factory) -> Zygote:
    folder = tmp_path_factory.mktemp("zygotes")
    course = tmp_path_factory.mktemp("course")
    zygotes = Zygotes(folder)

    def walls_for(work: Path, connections: Path) -> Walls:
        return Walls.for_course(course, work, connections, (folder,), DISK)

    yield zygotes.get(walls_for, Limits(disk_bytes=DISK), ALWAYS_PRELOADED, ())
    zygotes.close()


class Kernel:
    """A kernel forked from `zygote`, run from a test."""

    def __init__(self, zygote: Zygote, folder: Path):
        folder.mkdir()
        self.km = BoxedKernelManager(kernel_name="python3")
        self.km.transport, self.km.ip = "ipc", str(folder / "kernel-ipc")
        self.km.connection_file = str(folder / "kernel.json")
        (folder / "events.log").touch()
        self.km.fork_from(zygote, {}, [], folder / "events.log", True)

    async def __aenter__(self) -> Kernel:
        await self.km.start_kernel()
        self.kc = self.km.client()
        self.kc.start_channels()
        await self.kc.wait_for_ready(timeout=READY)
        await self.run(UNWATCHED)
        return self

    async def __aexit__(self, *exc) -> None:
        self.kc.stop_channels()
        await self.km.shutdown_kernel(now=True)

    async def run(self, code: str) -> str:
        """What `code` prints in the kernel (its error, if it raises)."""
        printed: list[str] = []

        def take(msg):
            content = msg["content"]
            if msg["msg_type"] == "stream":
                printed.append(content["text"])
            elif msg["msg_type"] == "error":
                printed.append(f"{content['ename']}: {content['evalue']}")

        await self.kc.execute_interactive(code, timeout=READY, output_hook=take)
        return "".join(printed)

    async def value(self, expression: str):
        """An expression's value in the kernel, through JSON."""
        said = await self.run(f"print(__import__('json').dumps({expression}))")
        return json.loads(said.splitlines()[-1])


def leave_everywhere(mark: str) -> str:
    """Code that leaves a file named `mark` in every writable place."""
    return "import os\n" + "".join(
        f"open(os.path.join({place if not place.startswith('/') else repr(place)}, "
        f"{mark!r}), 'w').write('x')\n"
        for place in PLACES
    )


def found_anywhere(mark: str) -> str:
    return f"[p for p in {PLACES_CODE} if os.path.exists(os.path.join(p, {mark!r}))]"


PIDS = "sorted(processes())"
SLEEPER = "start('import time\\ntime.sleep(600)')"  # a session of its own, living on


def test_a_kernel_sees_neither_a_siblings_files_nor_its_processes_nor_the_zygote(zygote, tmp_path):
    async def both():
        async with Kernel(zygote, tmp_path / "one") as one, Kernel(zygote, tmp_path / "two") as two:
            await one.run(leave_everywhere("sibling-was-here"))
            await one.run(SLEEPER)
            seen = await two.value(found_anywhere("sibling-was-here"))
            pids = await two.value(PIDS)
            theirs = await one.value(PIDS)
            cmdlines = await two.value("list(processes().values())")
            zygote_memory = await two.run(
                'print(unwatched(\'print(open("/proc/1/mem", "rb").read(1))\'))'
            )
            return seen, pids, theirs, cmdlines, zygote_memory

    seen, pids, theirs, cmdlines, zygote_memory = asyncio.run(both())
    assert seen == [], f"a sibling's files: {seen}"
    assert pids == [1, 2], pids  # its init and itself: not the sibling's sleeper
    assert len(theirs) == 3, theirs  # the sibling's init, kernel and sleeper
    assert all("kvlesson" in line for line in cmdlines), cmdlines  # its own, forked
    assert "PermissionError" in zygote_memory, zygote_memory  # its init: a copy of the zygote


def test_a_kernel_forked_after_a_cheats_finds_nothing_it_left(zygote, tmp_path):
    async def cheat_then_next():
        async with Kernel(zygote, tmp_path / "cheat") as cheat:
            await cheat.run(leave_everywhere("cheat-was-here"))
            keys = await cheat.run(f"print(unwatched({LEAVE!r}))")
            await cheat.run(SLEEPER)
        async with Kernel(zygote, tmp_path / "next") as after:
            found = await after.value(found_anywhere("cheat-was-here"))
            kept = await after.run(f"print(unwatched({FIND!r}))")
            pids = await after.value(PIDS)
            return keys, found, kept, pids

    keys, found, kept, pids = asyncio.run(cheat_then_next())
    left = json.loads(keys)
    assert left["user"] > 0 and left["session"] > 0, f"the cheat could not leave its keys: {keys}"
    assert found == [], f"what the cheat left: {found}"
    assert json.loads(kept) == {"user": -1, "session": -1}, f"the cheat's keys: {kept}"
    assert pids == [1, 2], pids  # nothing the cheat started lives on


def test_every_writable_place_is_capped_and_the_root_and_dev_are_read_only(zygote, tmp_path):
    fill = textwrap.dedent(
        """
        import errno
        def fill(folder):
            try:
                with open(os.path.join(folder, 'fill.bin'), 'wb') as out:
                    for _ in range(64):
                        out.write(b'x' * 2**20)
                        out.flush()
            except OSError as error:
                return errno.errorcode[error.errno]
            return 'filled 64 MiB'
        def write(path):
            try:
                open(path, 'w').write('x')
            except OSError as error:
                return errno.errorcode[error.errno]
            return 'written'
        """
    )

    async def probe():
        async with Kernel(zygote, tmp_path / "filler") as filler:
            await filler.run(fill)
            sizes = await filler.value(
                f"[os.statvfs(p).f_blocks * os.statvfs(p).f_frsize for p in {PLACES_CODE}]"
            )
            filled = await filler.value(f"[fill(p) for p in {PLACES_CODE}]")
            fixed = await filler.value("[write(p) for p in ('/x', '/dev/x', '/proc/sys/x')]")
            return sizes, filled, fixed

    sizes, filled, fixed = asyncio.run(probe())
    assert all(0 < size <= DISK for size in sizes), sizes
    assert filled == ["ENOSPC"] * len(PLACES), filled
    assert fixed[:2] == ["EROFS", "EROFS"] and fixed[2] in ("EROFS", "ENOENT", "EACCES"), fixed


def test_a_kernel_holds_no_capability_and_can_make_no_user_namespace(zygote, tmp_path):
    async def probe():
        async with Kernel(zygote, tmp_path / "caps") as kernel:
            status = await kernel.run("print(open('/proc/self/status').read())")
            nested = await kernel.run(
                "print(unwatched('import ctypes\\n"
                "print(ctypes.CDLL(None, use_errno=True).unshare(0x10000000), "
                "ctypes.get_errno())'))"
            )
            return status, nested

    status, nested = asyncio.run(probe())
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(fields[name], 16) == 0, (name, fields[name])
    assert fields["NoNewPrivs"].strip() == "1"
    code, number = nested.split()
    assert code == "-1" and int(number) in (28, 1), nested  # ENOSPC: none may be made; EPERM
