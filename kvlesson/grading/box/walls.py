"""The walls of the box: what a graded submission's kernel sees, hides and may write.

The box is Debian's bubblewrap (`bwrap`). What the kernel sees of the machine is decided
here, the same on every machine: the system's programs and libraries (/usr, /etc, /sys and
the links into /usr), Python and its installed packages (the prefixes and the folders on
the grader's import path) and kvlesson, all read-only; nothing else of the machine exists
in the box (no other user's files, no other copy of the course). Inside what is shown, the
course root (gradebook.db, solutions/, keys/, the other students' folders), the exchange,
the grader's working folders, the grader's home and /tmp are hidden behind empty file
systems. The kernel may write only in its working copy, its own /tmp and home (each an
empty in-memory file system of a fixed size, so a cell that fills one harms no disk), and
the folder of its connection files; the submission's notebooks sit in the working copy
read-only, and nothing else of the submission does (a submission is its notebooks:
`kvlesson.grading.course.contract`), whoever started the box. For a second run without an
exercise's forbidden functions (`kvlesson.grading.box.withheld`), a copy of kvlesson that
lacks them takes the place of every kvlesson on the import path. The kernel has no
network (its own network namespace: it talks to the grader over Unix sockets in the
connection folder), its own process namespace (nothing it starts outlives it), no
capabilities (even as root it cannot unmount a wall) and a clean environment (no token of
the grader's session reaches it).
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kvlesson.grading.box.fonts import where_matplotlib_looks

BWRAP = "bwrap"  # Debian package `bubblewrap`
# Environment variables the kernel keeps; everything else (tokens, the hub's API key) is dropped.
KEPT_ENVIRONMENT = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "PYTHONPATH",
    "MPLBACKEND",
    "NBGRADER_EXECUTION",
    "PYDEVD_DISABLE_FILE_VALIDATION",
)


def bwrap_path() -> str:
    """The bwrap program, once it has made a box as this account; else a clear error saying
    how to install it, or why it cannot box here."""
    found = shutil.which(BWRAP)
    if found is None:
        raise RuntimeError(
            "the grading box needs bubblewrap: install it with "
            "`apt-get install bubblewrap` (Debian, Ubuntu) and grade again"
        )
    problem = box_problem(found)
    if problem:
        raise RuntimeError(problem)
    return found


@functools.lru_cache(maxsize=None)
def box_problem(bwrap: str) -> str:
    """Why `bwrap` cannot make a box as this account ("" if it can), in words: as an
    ordinary user it needs unprivileged user namespaces, which some machines forbid."""
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-all", "true"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"the grading box cannot start: {bwrap} does not run ({error})"
    if done.returncode == 0:
        return ""
    said = (done.stderr.strip().splitlines() or ["no message"])[-1]
    account = pwd.getpwuid(os.getuid()).pw_name
    return (
        f"the grading box cannot start here: bubblewrap cannot make a box as the account "
        f"{account} ({bwrap}: {said}). As an ordinary user it needs unprivileged user "
        f"namespaces, which this machine forbids: on Ubuntu 24.04 and later root may "
        f"allow them with `sysctl kernel.apparmor_restrict_unprivileged_userns=0`, on "
        f"older Debian kernels with `sysctl kernel.unprivileged_userns_clone=1`; in a "
        f"container, grade outside it. Check with `bwrap --ro-bind / / --unshare-all true`."
    )


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it."""
    return path == folder or folder in path.parents


# The system a Python kernel needs: programs, libraries, fonts, time zones, the machine's
# configuration, what the kernel may learn of the hardware; and Debian's links into /usr.
SYSTEM = (Path("/usr"), Path("/etc"), Path("/sys"))
SYSTEM_LINKS = (
    Path("/bin"),
    Path("/sbin"),
    Path("/lib"),
    Path("/lib64"),
    Path("/lib32"),
    Path("/libx32"),
)


def system_arguments() -> list[str]:
    """bwrap's arguments that show the system read-only: SYSTEM, and each of SYSTEM_LINKS
    as the link it is (merged /usr) or the folder it is."""
    args = []
    for path in SYSTEM:
        if path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for path in SYSTEM_LINKS:
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def package_paths() -> list[Path]:
    """What the kernel needs to read even where it lies in a hidden folder: Python, its
    import path (a virtual environment or a pyenv under the home folder) and kvlesson itself
    (an editable install lives in the course repository)."""
    import kvlesson

    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(kvlesson.__file__).parent}
    paths.update(Path(entry) for entry in sys.path if entry and Path(entry).is_dir())
    return sorted(path.resolve() for path in paths)


def kvlesson_folders() -> list[Path]:
    """Every kvlesson package folder on the grader's import path (the one it imports first,
    and any other an entry of the path holds)."""
    import kvlesson

    found = {Path(kvlesson.__file__).resolve().parent}
    found.update(
        (Path(entry) / "kvlesson").resolve()
        for entry in sys.path
        if entry and (Path(entry) / "kvlesson" / "__init__.py").is_file()
    )
    return sorted(found)


def course_repository() -> Path | None:
    """The repository kvlesson is installed from when it is an editable install (it then
    holds solutions/), else None."""
    import kvlesson

    repository = Path(kvlesson.__file__).resolve().parent.parent
    return repository if (repository / "solutions").is_dir() else None


@dataclass(frozen=True)
class Walls:
    """One box: the folders emptied, shown again read-only, and writable.

    `hidden` folders become empty and read-only (a hidden file reads as empty), `scratch`
    folders become empty and writable, `shown` are bound back read-only where they lie in a
    hidden or scratch folder; `work` (the working copy) becomes an empty writable folder
    with the submission's notebooks (its plain `.ipynb` files, nothing else) bound into it
    read-only, and `connections` (the kernel's
    connection files) is bound writable. Each writable folder holds `disk_bytes` at most.
    """

    work: Path
    connections: Path
    hidden: tuple[Path, ...]
    scratch: tuple[Path, ...] = (Path("/tmp"), Path("/var/tmp"))
    shown: tuple[Path, ...] = field(default_factory=tuple)
    disk_bytes: int = 256 * 2**20
    packages: tuple[Path, ...] = field(default_factory=tuple)  # Python and kvlesson, shown
    replaced: tuple[tuple[Path, Path], ...] = ()  # (a copy, the folder it stands in for)
    files: tuple[tuple[Path, Path], ...] = ()  # (a file, where the box shows it read-only)

    @classmethod
    def for_submission(
        cls,
        course: Path,
        work: Path,
        connections: Path,
        also_hidden: tuple[Path, ...] = (),
        disk_bytes: int = 256 * 2**20,
        package: Path | None = None,
        font_cache: Path | None = None,
    ) -> Walls:
        """The walls for grading the working copy `work` of a course rooted at `course`:
        the course root, the course repository, the exchange and any `also_hidden` folder
        disappear, the grader's home and /tmp are emptied; Python and kvlesson stay readable
        (with `package`, a copy of kvlesson, in place of every kvlesson on the path)."""
        hidden = {course, *also_hidden, *filter(None, [course_repository()])}
        hidden = tuple(sorted(p.resolve() for p in hidden if p.exists()))
        home = Path.home().resolve()
        scratch = tuple(sorted({Path("/tmp"), Path("/var/tmp")} | ({home} - {Path("/")})))
        emptied = hidden + scratch
        shown = tuple(
            p for p in package_paths() if any(inside(p, e) for e in emptied) and p not in emptied
        )
        packages = tuple(p for p in package_paths() if not any(inside(p, e) for e in emptied))
        replaced = (
            ()
            if package is None
            else tuple((package.resolve(), folder) for folder in kvlesson_folders())
        )
        files = (
            ()
            if font_cache is None
            else ((font_cache.resolve(), where_matplotlib_looks(home, font_cache)),)
        )
        return cls(
            work.resolve(),
            connections.resolve(),
            hidden,
            scratch,
            shown,
            disk_bytes,
            packages,
            replaced,
            files,
        )

    def arguments(self) -> list[str]:
        """bwrap's arguments for these walls, in the order bwrap needs (a folder emptied
        before what is shown again inside it)."""
        size = ["--size", str(self.disk_bytes)]
        args = [*system_arguments(), "--dev", "/dev", "--proc", "/proc"]
        for path in sorted(self.packages, key=lambda p: len(p.parts)):
            if not any(inside(path, other) for other in self.packages if other != path) and not any(
                inside(path, system) for system in SYSTEM
            ):
                args += ["--ro-bind", str(path), str(path)]
        for path in sorted(self.hidden + self.scratch, key=lambda p: len(p.parts)):
            args += (
                ["--ro-bind", "/dev/null", str(path)]
                if path.is_file()
                else [*size, "--tmpfs", str(path)]
                if path in self.scratch
                else ["--tmpfs", str(path)]
            )
        for path in self.shown:
            args += ["--ro-bind", str(path), str(path)]
        for copy, folder in self.replaced:
            args += ["--ro-bind", str(copy), str(folder)]
        for file, shown_at in self.files:
            args += ["--ro-bind", str(file), str(shown_at)]
        args += [*size, "--tmpfs", str(self.work)]
        for entry in sorted(self.work.iterdir()):
            if entry.suffix == ".ipynb" and entry.is_file() and not entry.is_symlink():
                args += ["--ro-bind", str(entry), str(entry)]
        args += ["--bind", str(self.connections), str(self.connections)]
        for path in self.hidden:
            if path.is_dir():
                args += ["--remount-ro", str(path)]
        return args


def isolation_arguments() -> list[str]:
    """No network, own process, IPC and host namespaces, a new session (no terminal to
    type into), no capabilities, and the box dies with the process that started it."""
    return ["--unshare-all", "--new-session", "--die-with-parent", "--cap-drop", "ALL"]


def environment_arguments(home: Path) -> list[str]:
    """A clean environment: the kept variables, and an empty home."""
    # JPY_PARENT_PID=1: ipykernel neither watches its parent (in the box that is bwrap's
    # init, pid 1) nor prints its connection banner. PYTHONDONTWRITEBYTECODE: the system is
    # read-only in the box, and an import that tried to refresh a stale .pyc in the package
    # would be reported as the student's cell writing outside its working copy.
    args = [
        "--clearenv",
        "--setenv",
        "HOME",
        str(home),
        "--setenv",
        "JPY_PARENT_PID",
        "1",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
    ]
    for name in KEPT_ENVIRONMENT:
        if name in os.environ:
            args += ["--setenv", name, os.environ[name]]
    return args


def bwrap_command(walls: Walls, command: list[str]) -> list[str]:
    """The whole command that runs `command` in the box, in the working copy."""
    return [
        bwrap_path(),
        *walls.arguments(),
        *isolation_arguments(),
        *environment_arguments(Path.home()),
        "--chdir",
        str(walls.work),
        "--",
        *command,
    ]
