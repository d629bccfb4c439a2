"""The course on disk: nbgrader's configuration as nbgrader reads it, the course root it
names, and the course's folders (`Course`), a graded folder's marker and a submission's time.

The grading command runs where nbgrader would: from any folder of the instructor's, it
reads `nbgrader_config.py` from Jupyter's configuration path (the system's, the
environment's, `~/.jupyter`) and from the folder it starts in, later ones winning, and
takes the course root from `CourseDirectory.root` (the hub's instructor configuration sets
it), else the starting folder. `--course ROOT` starts it there instead.
"""

from __future__ import annotations

from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from kvlesson.grading.course.results import Marker

CONFIG = "nbgrader_config.py"
MARKER = ".kvlesson-graded.json"  # in a graded submission's folder: when and how it was graded
TIMESTAMP = "timestamp.txt"  # in a submission's folder: its time, as nbgrader writes it


def load(start: Path) -> Config:
    """The configuration nbgrader reads when a command starts in `start`."""
    from jupyter_core.paths import jupyter_config_path

    config = Config()
    for folder in [*reversed(jupyter_config_path()), str(start)]:  # the last one wins
        if (Path(folder) / CONFIG).is_file():
            config.merge(PyFileConfigLoader(CONFIG, path=str(folder)).load_config())
    return config


def course_root(start: Path, course: Path | None = None) -> tuple[Path, Config]:
    """The course root and its configuration: `course` if given, else where the
    configuration read from `start` puts it (CourseDirectory.root), else `start`.
    ValueError, saying what to give, if that folder is no course root."""
    start = Path(course or start).resolve()
    config = load(start)
    root = (
        Path(config.CourseDirectory.root).resolve()
        if "root" in config.CourseDirectory and course is None
        else start
    )
    if root != start:
        config = load(root)
        config.CourseDirectory.root = str(root)
    if not (root / CONFIG).is_file():
        raise ValueError(
            f"{root} is not a course root (it has no {CONFIG}), and no nbgrader configuration "
            f"names one (c.CourseDirectory.root). Run this in the course root, or give it: "
            f"--course /path/to/the/course"
        )
    return root, config


class Course:
    """The course root's folders and gradebook, as its nbgrader configuration names them."""

    def __init__(self, root: Path, config):
        self.root, self.config = root, config
        folders = config.CourseDirectory
        self.submitted = root / folders.get("submitted_directory", "submitted")
        self.autograded = root / folders.get("autograded_directory", "autograded")
        self.db_url = folders.get("db_url", f"sqlite:///{root / 'gradebook.db'}")
        self.course_id = folders.get("course_id", "")
        self.source = root / folders.get("source_directory", "source")  # the instructor notebooks

    def gradebook(self):
        from nbgrader.api import Gradebook

        return Gradebook(self.db_url, course_id=self.course_id)

    def database(self) -> Path:
        return Path(self.db_url.removeprefix("sqlite:///"))


def marker_of(folder: Path) -> Marker | None:
    """A graded folder's marker: what the grading command stored with it (None if there is
    none, or it is not one)."""
    return Marker.read(folder / MARKER)


def read_timestamp(folder: Path) -> str | None:
    """A submission's time as nbgrader wrote it in its folder (at most 64 characters), or
    None when there is none, it is not a plain file, or it cannot be read."""
    path = folder / TIMESTAMP
    try:
        return path.read_text().strip()[:64] if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def how_to_hand_in(assignment: str) -> str:
    """Where submissions come from, in words: each way of putting them in submitted/."""
    return (
        f"put the submissions in submitted/ first: `nbgrader collect {assignment}` (through "
        f"the exchange), `nbgrader zip_collect {assignment}` (a learning platform's download) "
        f"or a folder submitted/STUDENT/{assignment}/ per student (notebooks handed over as "
        "files); docs/instructors.md says how"
    )
