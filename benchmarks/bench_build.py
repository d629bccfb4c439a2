"""Where `kvlesson build ONE` and `kvlesson for` spend their time, against a baseline.

    python benchmarks/bench_build.py                  # 02_ceiling, against main
    python benchmarks/bench_build.py --baseline REF   # against another commit
    python benchmarks/bench_build.py --course         # also the whole course: build and for

Each tree (the baseline, from `git archive REF`, and this working tree's files) is copied into
a temporary folder and run there, its own kvlesson first on the import path (the kernels
inherit it), so nothing is written here. For each command it prints the CPU seconds of every
process it started (the command, its kernels, nbgrader, its workers) and the wall time, for
the baseline and now, and their ratios; then, for `kvlesson build 02_ceiling` and `kvlesson
for ... 02_ceiling` run with --jobs 1 in one process, the CPU seconds by phase: the kernel's
start, the notebook's own cells, the build's code run in the kernel (the known mistakes
swapped in and noted, the probe search's inputs), nbgrader's release, the capstone's grid
search, and the rest of the command's own process. `kvlesson build` runs twice, the second
time with what the first kept (the probe searches, the capstone's table). A script, not a
timed test: say the load beside its figures (it prints `uptime`'s).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE = "02_ceiling"
OTHER = ["--gpu", "H100_80GB", "--share", "50"]

# Run in the tree under test: the build, with its phases' CPU seconds noted (self: this
# process; kernel: the notebook's kernel, read from /proc; child: nbgrader) and printed as JSON.
PHASES = r"""
import json, os, resource, sys, time
from pathlib import Path
TICK = os.sysconf("SC_CLK_TCK")
kernel_pid, stack, totals = [None], [], {}
def kernel_cpu():
    if kernel_pid[0] is None:
        return 0.0
    try:
        fields = Path(f"/proc/{kernel_pid[0]}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / TICK
def now():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return [me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, kernel_cpu()]
def wrap(owner, name, phase):
    original = getattr(owner, name, None)
    if original is None:
        return
    def timed(*args, **kwargs):
        start = now(); stack.append([0.0, 0.0, 0.0])
        try:
            return original(*args, **kwargs)
        finally:
            spent = [e - s for e, s in zip(now(), start)]
            inner = stack.pop()
            mine = [a - b for a, b in zip(spent, inner)]
            totals[phase] = totals.get(phase, 0.0) + sum(mine)
            if stack:
                stack[-1] = [a + b for a, b in zip(stack[-1], spent)]
    setattr(owner, name, timed)
from kvlesson.authoring import kernel, probe_search, tables
from kvlesson.grading.course import gradebook
started = now()
begin = kernel.Kernel.__init__
def noted(self, client):
    begin(self, client)
    kernel_pid[0] = client.km.provisioner.process.pid
    totals["the kernel's start"] = totals.get("the kernel's start", 0.0) + kernel_cpu()
kernel.Kernel.__init__ = noted
wrap(kernel.Kernel, "run", "the notebook's own cells")
for name in ("quietly", "must", "batch"):
    wrap(kernel.Kernel, name, "the build's code in the kernel")
wrap(probe_search, "searched", "the probe search (its part in the command)")
wrap(gradebook, "generate", "nbgrader's release")
wrap(tables, "capstone_table", "the capstone's grid search")
from kvlesson.cli import main
code = main(sys.argv[1:])
total = sum(now()) - sum(started)
totals["the command's own process, the rest"] = total - sum(totals.values())
print("PHASES " + json.dumps(totals))
"""


def copy_of(ref: str | None, dest: Path) -> Path:
    """The tracked files of this repository at `ref` (None: as they are in the working
    tree) in `dest`."""
    dest.mkdir(parents=True)
    if ref is not None:
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(dest, filter="data")
        return dest
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes((ROOT / name).read_bytes())
    return dest


def environment(tree: Path) -> dict:
    programs = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PYTHONPATH": str(tree),  # its own kvlesson, before the installed one
        "PATH": programs + os.pathsep + os.environ.get("PATH", ""),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }


def timed(tree: Path, argv: list[str]) -> tuple[float, float]:
    """(CPU seconds of every process the command started, wall seconds)."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kvlesson", *argv],
        cwd=tree,
        env=environment(tree),
        capture_output=True,
        text=True,
    )
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{' '.join(argv)} failed in {tree}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return cpu, wall


def phases(tree: Path, argv: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PHASES, *argv],
        cwd=tree,
        env=environment(tree),
        capture_output=True,
        text=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("PHASES ")]
    if done.returncode or not lines:
        sys.exit(f"{' '.join(argv)} failed in {tree}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return json.loads(lines[-1].removeprefix("PHASES "))


def runs(course: bool, out: Path) -> list[tuple[str, list[str]]]:
    """The commands to time, in order (a build twice: the second keeps what the first found)."""
    found = [
        (f"build {ONE}", ["build", ONE]),
        (f"build {ONE}, again", ["build", ONE]),
        (f"for {' '.join(OTHER)} {ONE}", ["for", *OTHER, "--out", str(out / "one"), ONE]),
    ]
    if course:
        found += [
            ("build (the course)", ["build"]),
            ("build (the course), again", ["build"]),
            (f"for {' '.join(OTHER)} (the course)", ["for", *OTHER, "--out", str(out / "all")]),
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="the commit to compare with")
    parser.add_argument("--course", action="store_true", help="also the whole course")
    args = parser.parse_args()
    print(
        f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min), {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as scratch:
        trees = {
            args.baseline: copy_of(args.baseline, Path(scratch) / "baseline"),
            "now": copy_of(None, Path(scratch) / "now"),
        }
        figures: dict[str, dict[str, tuple[float, float]]] = {}
        for label, argv in runs(args.course, Path(scratch) / "out"):
            for name, tree in trees.items():
                out = Path(scratch) / "out" / name
                given = [a.replace(str(Path(scratch) / "out"), str(out)) for a in argv]
                figures.setdefault(label, {})[name] = timed(tree, given)
        print(
            f"\n{'command':44} {'CPU s then':>10} {'now':>7} {'ratio':>6} {'wall s then':>12} {'now':>7} {'ratio':>6}"
        )
        for label, by in figures.items():
            (c0, w0), (c1, w1) = by[args.baseline], by["now"]
            print(
                f"{label:44} {c0:10.1f} {c1:7.1f} {c0 / c1:6.2f} {w0:12.1f} {w1:7.1f} {w0 / w1:6.2f}"
            )
        for label, argv in ((f"build {ONE}", ["build", ONE]), (f"for {ONE}", ["for", *OTHER, ONE])):
            print(f"\nCPU seconds by phase, {label} (one notebook, one process)")
            by = {}
            for name, tree in trees.items():
                extra = ["--jobs", "1"] if name == "now" else []
                out = ["--out", str(Path(scratch) / "phases" / name)] if argv[0] == "for" else []
                if argv[0] == "build" and name == "now":
                    extra.append("--fresh")  # the first build's, not what a rebuild keeps
                by[name] = phases(tree, [*argv, *extra, *out])
            names = sorted(set().union(*by.values()), key=lambda p: -by["now"].get(p, 0.0))
            print(f"  {'phase':46} {'then':>7} {'now':>7}")
            for phase in names:
                print(
                    f"  {phase:46} {by[args.baseline].get(phase, 0.0):7.2f} {by['now'].get(phase, 0.0):7.2f}"
                )
            print(
                f"  {'total':46} {sum(by[args.baseline].values()):7.2f} {sum(by['now'].values()):7.2f}"
            )
    print(f"\nload after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
