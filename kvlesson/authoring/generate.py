"""`kvlesson generate`: record the assignments in the gradebook, as nbgrader's
generate_assignment does, without executing anything: in a new clone, before the first
release.

    kvlesson generate                # every assignment
    kvlesson generate 01_floor_plan  # only the ones named
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kvlesson.authoring.command import chosen
from kvlesson.grading.course import folders, gradebook
from kvlesson.grading.course.folders import Course


def record(start: Path, names: list[str], course: Path | None = None) -> str:
    """Record `names` (default: every assignment) in the gradebook of the course root found
    from `start` (or `course`), the way `nbgrader generate_assignment` records them, so that
    the formgrader's Release never hands out an assignment nbgrader cannot grade. Safe to
    run again: an assignment already recorded is left alone. What was done, in words."""
    root, config = folders.course_root(start, course)
    wanted = chosen(names, root)
    course_ = Course(root, config)
    made = gradebook.record_assignments(course_, wanted)
    kept = [name for name in wanted if name not in made]
    lines = [f"recorded in {course_.database()}: {', '.join(made)}"] if made else []
    lines += [f"already recorded, left as they are: {', '.join(kept)}"] if kept else []
    return "\n".join(lines)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "record the assignments in the gradebook, as nbgrader's "
        "generate_assignment does (nothing executed): in a new clone, before "
        "the first release; an assignment already recorded is left as it is"
    )
    parser.add_argument(
        "names", nargs="*", metavar="ASSIGNMENT", help="only these assignments; default: all"
    )
    parser.add_argument(
        "--course",
        type=Path,
        metavar="ROOT",
        help="the course root (default: found as nbgrader finds it)",
    )


def run(args: argparse.Namespace) -> int:
    print(record(Path.cwd(), args.names, args.course))
    return 0
