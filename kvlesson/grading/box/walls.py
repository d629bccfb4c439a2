"""The walls of the box: what a graded submission's kernel sees, hides and may write.

What the kernel sees of the machine is decided here, the same on every machine: the
system's programs and libraries (/usr, /etc, /sys and the links into /usr), Python and its
installed packages (the prefixes and the folders on the grader's import path) and kvlesson,
all read-only; nothing else of the machine exists in the box (no other user's files, no
other copy of the course). Inside what is shown, the course root (gradebook.db,
solutions/, keys/, the other students' folders), the exchange, the grader's working
folders, the grader's home and /tmp are hidden behind empty file systems. The kernel may
write only in its working copy, its own /tmp, /var/tmp, home and /dev/shm, and the folder of
its connection files: each an empty in-memory file system of a fixed size, made anew for
every kernel, so a cell that fills one harms no disk and the next kernel finds nothing of
it. The root of the box and /dev are read-only. The submission's notebooks sit in the
working copy read-only, and nothing else of the submission does (a submission is its
notebooks: `kvlesson.grading.course.contract`). For a second run without an exercise's
forbidden functions (`kvlesson.grading.box.withheld`), a copy of kvlesson that lacks them
takes the place of every kvlesson on the import path.

The walls are put up twice (docs/instructors.md, "What the grader protects against"):
bubblewrap puts them all up once around a grading worker's zygote
(`kvlesson.grading.box.bubblewrap`, `Walls.mounts`), and each kernel the zygote forks puts
up its own writable places again, fresh, with everything shown or hidden inside them
(`Walls.fresh`, done by `kvlesson.grading.box.enter`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kvlesson.grading.box.fonts import where_matplotlib_looks

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
SHARED_MEMORY = Path("/dev/shm")  # POSIX shared memory: a writable place like /tmp
# Each kind of mount a wall is, in the order bubblewrap and a forked kernel put them up.
FRESH, HIDDEN, SHOWN = "fresh", "hidden", "shown"  # writable and empty; empty; read-only


@dataclass(frozen=True)
class Mount:
    """One wall: `kind` (FRESH: an empty writable file system of `size` bytes; HIDDEN: an
    empty read-only one; SHOWN: `source` shown read-only) at `target`."""

    kind: str
    target: Path
    source: Path | None = None
    size: int = 0


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it."""
    return path == folder or folder in path.parents


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
    folders become empty and writable, `shown` are shown again read-only where they lie in a
    hidden or scratch folder; `work` (the working copy, where the submission's notebooks
    are shown read-only, nothing else of it) and `connections` (the kernel's connection file
    and sockets) are empty and writable. Each writable folder holds `disk_bytes` at most.
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
    def for_course(
        cls,
        course: Path,
        work: Path,
        connections: Path,
        also_hidden: tuple[Path, ...] = (),
        disk_bytes: int = 256 * 2**20,
        package: Path | None = None,
        font_cache: Path | None = None,
    ) -> Walls:
        """The walls for grading a course rooted at `course` with the working copy at
        `work`: the course root, the course repository, the exchange and any `also_hidden`
        folder disappear, the grader's home and /tmp are emptied; Python and kvlesson stay
        readable (with `package`, a copy of kvlesson, in place of every kvlesson on the
        path)."""
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

    def mounts(self) -> list[Mount]:
        """The walls inside the system, in the order they go up (a folder emptied before
        what is shown again inside it); the hidden ones turn read-only last."""
        out = [Mount(SHOWN, p, p) for p in self.top_packages()]
        inner = [*self.hidden, *self.scratch, *self.shown]  # outer ones first: a folder shown
        for path in sorted(inner, key=lambda p: len(p.parts)):  # never uncovers one hidden in it
            if path in self.shown:
                out.append(Mount(SHOWN, path, path))
            elif path in self.scratch:
                out.append(Mount(FRESH, path, size=self.disk_bytes))
            else:
                out.append(Mount(HIDDEN, path, Path("/dev/null") if path.is_file() else None))
        out += [Mount(SHOWN, folder, copy) for copy, folder in self.replaced]
        out += [Mount(SHOWN, shown_at, file) for file, shown_at in self.files]
        out += [
            Mount(FRESH, path, size=self.disk_bytes)
            for path in (self.work, self.connections, SHARED_MEMORY)
        ]
        return out

    def top_packages(self) -> list[Path]:
        """The package folders to show, each once: none inside another or the system."""
        return [
            path
            for path in sorted(self.packages, key=lambda p: len(p.parts))
            if not any(inside(path, other) for other in self.packages if other != path)
            and not any(inside(path, system) for system in SYSTEM)
        ]

    def fresh(self) -> list[Mount]:
        """What each kernel puts up anew: every writable place, and each wall inside one
        (shown again from what the zygote's box shows there), in the same order."""
        roots = [m.target for m in self.mounts() if m.kind == FRESH]
        return [
            Mount(m.kind, m.target, m.target if m.kind == SHOWN else m.source, m.size)
            for m in self.mounts()
            if any(inside(m.target, root) for root in roots)
        ]
