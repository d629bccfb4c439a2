"""What grading a class costs: CPU seconds (the boxed kernels' included) beside wall time,
per submission with and without a second run, and --jobs 2 against --jobs 1, in one run.

    python benchmarks/bench_grading.py            # classes of 8
    python benchmarks/bench_grading.py --class 12

Each figure grades a fresh copy of the course with the one command (`kvlesson grade
01_floor_plan --jobs N`) in a child process of this one:

* the fixed cost: a run with nothing to grade (the command's start, its checks, the report);
* a class that answers everything right (each submission runs a second time, without the
  functions its exercises forbid) and a class that answers nothing (no second run), at
  --jobs 1: per submission, (the class's CPU - the fixed cost) / the class's size;
* a mixed class (a quarter right, a quarter part, a quarter nothing, a quarter with one
  wrong answer) at --jobs 1 and at --jobs 2: the wall-time ratio, the same between the
  first result and the last (the workers started, the report not begun), and the
  machine's own ceiling for it (two CPU-bound processes side by side against one after
  the other).

CPU is user + system time of every process the command started, the killed kernels and
their boxes included. As root it is read from a cpuacct cgroup the command runs in (Linux
drops the CPU times of the processes a pid namespace's end kills, so no `getrusage` sees
those); otherwise this process is a child subreaper (prctl PR_SET_CHILD_SUBREAPER), reaps
whatever is orphaned on the way, and reads `getrusage(RUSAGE_CHILDREN)`. The script says
which. Wall time depends on what else the machine runs: the script prints the load
average beside it. Needs bubblewrap, as grading does. A script, not a timed test.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, uninstalled

from kvlesson.authoring import command as course_build  # noqa: E402

ASSIGNMENT, NOTEBOOK = "01_floor_plan", "floor_plan"
PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
KINDS = ("right", "part", "nothing", "one wrong")  # the mixed class, in turn


def answers(kind: str, release, solution) -> nbformat.NotebookNode:
    """One student's notebook: every answer right, the first half only, none, or all but
    the first (2**30 where 1e9 is meant)."""
    if kind == "nothing":
        return nbformat.from_dict(release)
    nb = course_build.answered(release, solution)
    answer_cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    if kind == "part":
        for cell in answer_cells[len(answer_cells) // 2 :]:
            cell.source = "raise NotImplementedError()"
    if kind == "one wrong":
        answer_cells[0].source = answer_cells[0].source.replace("1e9", "2**30")
    return nb


def make_class(base: Path, kinds: list[str]) -> Path:
    """A course copy with the release generated and one submission of each of `kinds`."""
    root = course_build.copy_course(base / "course", [ASSIGNMENT])
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    release = nbformat.read(root / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    solution = nbformat.read(root / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", 4)
    for n, kind in enumerate(kinds):
        folder = root / "submitted" / f"student{n:02d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(answers(kind, release, solution), folder / f"{NOTEBOOK}.ipynb")
        (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    return root


@dataclass(frozen=True)
class Run:
    """One grading run: wall seconds, CPU seconds of everything it started, the load
    average (1 minute) when it began, and when (seconds from its start) each result came."""

    wall: float
    cpu: float
    load: float
    came: tuple[float, ...] = ()

    def steady(self) -> float:
        """Seconds a submission between the first result and the last: the pace once the
        workers and their zygotes have started, before the summary and the report."""
        return (self.came[-1] - self.came[0]) / (len(self.came) - 1)


CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # cgroup v1's CPU accounting, where there is one


class Meter:
    """CPU seconds of everything a command starts: a cpuacct cgroup of its own (as root),
    else this process's reaped children (as a child subreaper)."""

    def __init__(self):
        self.group: Path | None = None
        if os.geteuid() == 0 and (CPUACCT / "cpuacct.usage").is_file():
            self.group = CPUACCT / f"kvlesson-bench-{os.getpid()}"
            self.group.mkdir(exist_ok=True)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 and self.group is None:
            sys.exit("cannot become a child subreaper: the kernels' CPU would be missed")

    @property
    def how(self) -> str:
        return "a cpuacct cgroup" if self.group else "getrusage of the reaped children"

    def join(self) -> None:
        """In the command's process, before it starts: into the cgroup."""
        if self.group is not None:
            (self.group / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def close(self) -> None:
        if self.group is not None:
            self.group.rmdir()


def reap_orphans() -> None:
    """Wait for every process orphaned on the way (they came back to this subreaper)."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def grade(root: Path, jobs: int, meter: Meter) -> Run:
    """`kvlesson grade` of the class in `root`, `jobs` at a time."""
    load, cpu, start = os.getloadavg()[0], meter.seconds(), time.perf_counter()
    command = subprocess.Popen(
        [sys.executable, "-m", "kvlesson", "grade", ASSIGNMENT, "--course", str(root)]
        + ["--jobs", str(jobs)],
        cwd=root.parent,  # never the repository: `-m kvlesson` imports the installed one
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=meter.join,
    )
    came, said = [], []
    for text in command.stderr:  # "graded STUDENT, ASSIGNMENT (k/n)" as each result comes
        if text.startswith("graded "):
            came.append(time.perf_counter() - start)
        said.append(text)
    out = command.stdout.read()
    command.wait()
    wall = time.perf_counter() - start
    reap_orphans()
    if command.returncode != 0:
        sys.exit(f"grading failed ({command.returncode}):\n{out}\n{''.join(said)[-3000:]}")
    return Run(wall, meter.seconds() - cpu, load, tuple(came))


def graded(
    kinds: list[str], jobs: int, meter: Meter, again: bool = False
) -> tuple[Run, Run | None]:
    """A fresh class of `kinds` graded `jobs` at a time; with `again`, the same command run
    once more with nothing left to grade (the fixed cost)."""
    base = Path(tempfile.mkdtemp(prefix="kvlesson-bench-grading-"))
    try:
        root = make_class(base, kinds)
        first = grade(root, jobs, meter)
        return first, grade(root, jobs, meter) if again else None
    finally:
        shutil.rmtree(base, ignore_errors=True)


def line(what: str, run: Run, size: int = 0) -> str:
    each = f", {run.wall / size:.2f} s wall a submission" if size else ""
    return f"{what}: {run.cpu:.1f} s CPU, {run.wall:.1f} s wall{each} (load {run.load:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class", dest="size", type=int, default=8, help="students a class")
    args = parser.parse_args()
    if args.size < 2:
        parser.error("--class must be 2 or more (the pace between the first result and the last)")
    meter = Meter()
    try:
        measure(args.size, meter)
    finally:
        meter.close()


def measure(n: int, meter: Meter) -> None:
    """Every figure of the module's docstring, for classes of `n`."""
    print(f"CPU seconds from {meter.how}")
    right, fixed = graded(["right"] * n, 1, meter, again=True)
    nothing, _ = graded(["nothing"] * n, 1, meter)
    print(line("nothing to grade (the fixed cost)", fixed))
    for what, run in (("with a second run", right), ("without a second run", nothing)):
        print(line(f"{n} submissions {what}, --jobs 1", run, n))
        print(f"  per submission {what}: {(run.cpu - fixed.cpu) / n:.2f} s CPU")
    mixed = [KINDS[i % len(KINDS)] for i in range(n)]
    runs = {jobs: graded(mixed, jobs, meter)[0] for jobs in (1, 2)}
    for jobs, run in runs.items():
        print(line(f"{n} mixed submissions, --jobs {jobs}", run, n))
    print(f"--jobs 2 is {runs[1].wall / runs[2].wall:.2f} times as fast as --jobs 1 (wall)")
    print(
        f"  between the first result and the last: {runs[1].steady():.2f} s a submission at "
        f"--jobs 1, {runs[2].steady():.2f} s at --jobs 2, "
        f"{runs[1].steady() / runs[2].steady():.2f} times as fast"
    )
    print(
        f"  the machine's own ceiling: two CPU-bound Python processes side by side do "
        f"{ceiling():.2f} times the work of one in the same time"
    )


BURN = "s = 0\nfor i in range(25_000_000): s += i * i"  # about 1.5 s of a core


def ceiling(tries: int = 3) -> float:
    """How much faster two CPU-bound processes go side by side than one after the other
    (2.0 on two idle cores of their own; less where the cores share a physical one, or
    the host's other guests take their turn): what --jobs 2 can reach at best. The best
    of `tries` of each, taken in turn (a virtual machine's core is not always as fast)."""
    burn = [sys.executable, "-c", BURN]
    alone, pair = [], []
    for _ in range(tries):
        start = time.perf_counter()
        subprocess.run(burn, check=True)
        alone.append(time.perf_counter() - start)
        start = time.perf_counter()
        both = [subprocess.Popen(burn) for _ in range(2)]
        for process in both:
            process.wait()
        pair.append(time.perf_counter() - start)
    return 2 * min(alone) / min(pair)


if __name__ == "__main__":
    main()
