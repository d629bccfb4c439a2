"""nbgrader's configuration as nbgrader reads it, and the course root it names.

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

CONFIG = "nbgrader_config.py"


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
    root = Path(config.CourseDirectory.root).resolve() if "root" in config.CourseDirectory \
        and course is None else start
    if root != start:
        config = load(root)
        config.CourseDirectory.root = str(root)
    if not (root / CONFIG).is_file():
        raise ValueError(
            f"{root} is not a course root (it has no {CONFIG}), and no nbgrader configuration "
            f"names one (c.CourseDirectory.root). Run this in the course root, or give it: "
            f"--course /path/to/the/course")
    return root, config
