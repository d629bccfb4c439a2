"""Grading a class side by side: a synthetic class of 40 on 01_floor_plan, graded by the
one command with --jobs 1 and with --jobs 2, in one run.

    python benchmarks/bench_grading.py            # 40 students
    python benchmarks/bench_grading.py --class 12

Each run grades the same class from scratch in a fresh copy of the course (a quarter of the
class answers everything, a quarter part, a quarter nothing, a quarter with one wrong
answer). It prints each run's time, the time per submission, and the ratio. Needs
bubblewrap, as grading does. A script, not a timed test: run it with nothing else running.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, uninstalled

from kvlesson.authoring import command as course_build  # noqa: E402

ASSIGNMENT, NOTEBOOK = "01_floor_plan", "floor_plan"


def make_class(base: Path, size: int) -> Path:
    """A course copy with the release generated and `size` submissions collected."""
    root = course_build.copy_course(base / "course", [ASSIGNMENT])
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    release = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    solution = nbformat.read(root / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    right = course_build.answered(release, solution)
    for n in range(size):
        nb = (
            nbformat.from_dict(right)
            if n % 4 == 0
            else nbformat.read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
        )
        if n % 4 == 1:  # part: the first two answers
            nb = course_build.answered(release, solution)
            for cell in nb.cells[len(nb.cells) // 2 :]:
                if cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = "raise NotImplementedError()"
        if n % 4 == 3:  # one wrong answer
            nb = course_build.answered(release, solution)
            first = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
            first.source = first.source.replace("1e9", "2**30")
        folder = root / "submitted" / f"student{n:02d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
        (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    return root


def grade(root: Path, jobs: int) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kvlesson",
            "grade",
            ASSIGNMENT,
            "--course",
            str(root),
            "--jobs",
            str(jobs),
        ],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"grading failed ({done.returncode}):\n{done.stdout}\n{done.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class", dest="size", type=int, default=40, help="students")
    args = parser.parse_args()
    times = {}
    for jobs in (1, 2):
        base = Path(tempfile.mkdtemp(prefix="kvlesson-bench-grading-"))
        try:
            times[jobs] = grade(make_class(base, args.size), jobs)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        print(
            f"--jobs {jobs}: {args.size} submissions in {times[jobs]:.1f} s, "
            f"{times[jobs] / args.size:.2f} s a submission"
        )
    print(f"--jobs 2 is {times[1] / times[2]:.2f} times as fast as --jobs 1")


if __name__ == "__main__":
    main()
