"""A learning platform's download unpacked for nbgrader's `zip_collect` (`SafeExtractor`).

`nbgrader zip_collect` unpacks every archive in `downloaded/ASSIGNMENT/archive/` into
`extracted/`, then sorts the files into `submitted/` by their names. What is in an archive
is the students': the names of their files (a platform's zip names each file after its
student and the student's own file name) and any archive a student handed in inside it.
nbgrader's own extractor unpacks all of it, archives inside archives too, with no limit of
size or count, and keeps any name; a student's own zip inside the download could then hold a
file named as a classmate's submission. `SafeExtractor` unpacks only the platform's
archives, and of them only regular files, each under a name made of plain parts (never
absolute, never `..`, never a hidden or control character, never a link), with limits on
the size of a file, of an archive and on the count; an archive inside one is left out (a
submission is its notebooks: docs/instructors.md); whatever it leaves out it says, and it
costs that file only. Files beside the
archives are copied the same way (plain files only, never through a link). Then the course's
sorting of the names (`kvlesson.grading.exchange.download`) plans the class, so that its
notes reach each student's submission.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from nbgrader.plugins import ExtractorPlugin

from kvlesson.grading.course import opened
from kvlesson.grading.course.seal import MAX_FILE_BYTES
from kvlesson.grading.exchange.inbound import shown

MAX_ARCHIVE_BYTES = 2 * 2**30  # unpacked, one archive: a class of 500 notebooks of 4 MB
MAX_MEMBERS = 20_000  # files in one archive
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")
JUNK = ("__MACOSX",)  # a folder macOS adds to a zip, never a submission


def archive_kind(name: str) -> str:
    """The archive suffix `name` ends with ("" if it is not an archive)."""
    return next((end for end in ARCHIVES if name.lower().endswith(end)), "")


def safe_parts(name: str) -> tuple[str, ...] | str:
    """An archive member's name as plain parts of a path, or why it is not one."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if not parts or name.startswith(("/", "\\")) or PurePosixPath(name).is_absolute():
        return "an absolute path"
    for part in parts:
        if part in (".", "..") or part.startswith("."):
            return "a path with '..' or a hidden part"
        if any(not ch.isprintable() for ch in part):
            return "a name with a control character"
        if part in JUNK:
            return "a folder macOS adds to a zip"
    return parts


class Unpacking:
    """One archive unpacked: the files written, the bytes, and what was left out."""

    def __init__(self, log):
        self.log, self.files, self.bytes = log, 0, 0

    def leave_out(self, where: str, why: str) -> None:
        self.log.warning("Left out of the download: %s: %s", shown(where), why)

    def write(self, dest: Path, parts: tuple[str, ...], size: int, read, where: str) -> None:
        """Write one member (`read(n)` gives its bytes) at `dest/parts`, within the limits;
        an archive (a student's own, inside the download) is left out."""
        if archive_kind(parts[-1]):
            return self.leave_out(
                where,
                "an archive inside the download (a student's own): a submission is its "
                "notebooks, and the names in it would be the student's to choose",
            )
        if size > MAX_FILE_BYTES:
            return self.leave_out(where, f"{size:,} bytes, over the limit of {MAX_FILE_BYTES:,}")
        if self.files >= MAX_MEMBERS or self.bytes + size > MAX_ARCHIVE_BYTES:
            return self.leave_out(where, "past the limit of files or bytes of one archive")
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(target, "xb") as out:
                data = read(MAX_FILE_BYTES + 1)
                if len(data) > MAX_FILE_BYTES:
                    raise ValueError("larger than it said")
                out.write(data)
        except (OSError, ValueError, zipfile.BadZipFile, tarfile.TarError) as error:
            target.unlink(missing_ok=True)
            return self.leave_out(where, f"cannot be written ({error})")
        self.files += 1
        self.bytes += len(data)

    def unpack(self, archive: Path, dest: Path) -> None:
        """Every regular member of `archive` into the folder `dest`, but archives."""
        try:
            if archive_kind(archive.name) == ".zip":
                self._zip(archive, dest)
            else:
                self._tar(archive, dest)
        except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as error:
            return self.leave_out(archive.name, f"not an archive that can be read ({error})")

    def _zip(self, archive: Path, dest: Path) -> None:
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.infolist():
                mode = member.external_attr >> 16
                parts = safe_parts(member.filename)
                if member.is_dir():
                    continue
                if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # a link, a device
                    self.leave_out(member.filename, "not a plain file: only plain files are kept")
                elif isinstance(parts, str):
                    self.leave_out(member.filename, parts)
                else:
                    with zipped.open(member) as data:
                        self.write(dest, parts, member.file_size, data.read, member.filename)

    def _tar(self, archive: Path, dest: Path) -> None:
        with tarfile.open(archive) as tarred:
            for member in tarred:
                parts = safe_parts(member.name)
                if member.isdir():
                    continue
                if not member.isreg():
                    self.leave_out(member.name, "not a plain file: only plain files are kept")
                elif isinstance(parts, str):
                    self.leave_out(member.name, parts)
                else:
                    data = tarred.extractfile(member)
                    self.write(dest, parts, member.size, data.read, member.name)


class SafeExtractor(ExtractorPlugin):
    """nbgrader's extractor of a learning platform's download, unpacking plain files only,
    with limits (see the module), and planning the class with the course's sorting of the
    file names when nbgrader_config.py selects it."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        try:
            with opened.folder(archive_path) as fd:
                found = list(opened.tree(fd))
        except OSError as error:
            self.log.warning("No download to unpack in %s (%s)", archive_path, error.strerror)
            return
        for where, info in found:
            if not stat.S_ISREG(info.st_mode):
                continue
            source, dest = Path(archive_path, where), Path(extracted_path, where)
            unpacking = Unpacking(self.log)
            kind = archive_kind(where)
            if kind:
                self.log.info("Unpacking %s", shown(where))
                unpacking.unpack(source, dest.with_name(dest.name[: -len(kind)]))
            else:
                self._copy(archive_path, where, info, dest, unpacking)
        plan = getattr(getattr(self.parent, "collector_plugin_inst", None), "plan", None)
        if plan is not None:
            plan(extracted_path)

    def _copy(self, top: str, where: str, info: os.stat_result, dest: Path, unpacking) -> None:
        """A file beside the archives, copied through its folder's descriptor."""
        folder, name = os.path.split(where)
        with opened.folder(Path(top, folder)) as fd:
            try:
                source = opened.open_file(fd, name, info)
            except OSError as error:
                return unpacking.leave_out(where, f"cannot be read ({error.strerror})")
            with source:
                unpacking.write(dest.parent, (dest.name,), info.st_size, source.read, where)
