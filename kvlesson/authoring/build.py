"""`kvlesson build`: execute the instructor notebooks, stamp their self-checks, write the keys,
release the student notebooks.

    kvlesson build                  # after editing solutions/
    kvlesson build 02_ceiling       # only the assignments named
    kvlesson build --fresh          # search every test cell's probes again

Each notebook of solutions/ runs in place (so its stored outputs are what the code produces
now), its test cells stamped with the salted hashes of the expected answers
(`kvlesson.authoring.stamping`); the grader's key goes to keys/, and nbgrader regenerates
notebooks/. Several notebooks run side by side, one process each (`--jobs`); a test cell
whose probe search would come out as an earlier build's is not searched again
(`kvlesson.authoring.search_cache`). `kvlesson for` (`kvlesson.authoring.course_for`) runs
the same steps for another card or model.

Needs the course extra (nbclient, nbgrader, papermill).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from kvlesson.authoring import stamping
from kvlesson.authoring.command import ROOT, chosen, clean, notebook_paths, release
from kvlesson.authoring.search_cache import FOLDER, SearchCache
from kvlesson.authoring.tables import tables_for
from kvlesson.grading.course.key import key_path, write_key


@dataclass(frozen=True)
class Job:
    """One notebook to execute: the instructor notebook `path`, the course root `root` its key
    goes to, the `parameters` injected as papermill does (None: the course's own setting,
    whose probes are searched), where the executed notebook is stored (default: in place),
    and whether to search every test cell again (`fresh`)."""

    path: Path
    root: Path
    parameters: dict | None = None
    target: Path | None = None
    fresh: bool = False

    @property
    def name(self) -> str:
        return self.path.parent.name


class JobFailed(RuntimeError):
    """A notebook stopped: its assignment, what it printed, and why (`cell`: a cell of the
    notebook raised, rather than the build)."""

    def __init__(self, name: str, printed: str, why: str, cell: bool):
        super().__init__(name, printed, why, cell)
        self.name, self.printed, self.why, self.cell = name, printed, why, cell

    def __str__(self) -> str:
        return self.why


def execute(job: Job) -> None:
    """Run one instructor notebook top to bottom in its own folder, stamp its self-checks,
    store it cleaned (numbered as a reader runs it), and write its key into the course root."""
    nb = nbformat.read(job.path, as_version=4)
    if job.parameters:
        from papermill.iorw import load_notebook_node
        from papermill.parameterize import parameterize_notebook

        nb = parameterize_notebook(
            load_notebook_node(str(job.path)),
            job.parameters,
            kernel_name="python3",
            language="python",
        )
    # the probes are searched for the course's own setting, in the build; a course for other
    # hardware keeps them (its self-checks hold that setting's answers). The notebook runs in
    # the folder it is stored in: a course for a model's config.json finds it there
    search = not job.parameters
    cache = SearchCache(job.root / FOLDER) if search and not job.fresh else None
    stored = job.target or job.path
    key = stamping.execute_and_stamp(nb, stored.parent, job.name, search=search, cache=cache)
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        cell.execution_count = count  # the stamping runs extra code between cells
        for output in cell.outputs:
            if "execution_count" in output:
                output["execution_count"] = count
    nbformat.write(clean(nb), stored)
    key["built_from"] = source_digest(nb)  # what `kvlesson check` tells a changed notebook by
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    built = key_path(job.path.parents[2], job.name)  # the course's own build's key
    key.update(tables_for(sources, built, same_code_only=search))
    write_key(key_path(job.root, job.name), key)


def source_digest(nb: nbformat.NotebookNode) -> str:
    """A digest of what an instructor writes in a notebook: each cell's kind, source, nbgrader
    metadata and tags (not its outputs, nor what JupyterLab adds when it saves one)."""
    cells = [
        [c.cell_type, c.source, c.metadata.get("nbgrader"), c.metadata.get("tags")]
        for c in nb.cells
    ]
    return hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()


def _executed(job: Job, capture: bool = True) -> str:
    """`execute`, saying what it does: what it printed (with `capture`, as text rather than
    on the way; a process of its own prints all of it at once), or JobFailed."""
    from nbclient.exceptions import CellExecutionError

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed) if capture else contextlib.nullcontext():
            print(f"executing {job.path.relative_to(job.path.parents[2])}", flush=True)
            execute(job)
    except CellExecutionError as error:
        raise JobFailed(job.name, printed.getvalue(), str(error), cell=True) from None
    except (ValueError, RuntimeError) as error:
        raise JobFailed(job.name, printed.getvalue(), str(error), cell=False) from None
    return printed.getvalue()


def execute_all(jobs: list[Job], workers: int | None = None) -> None:
    """Execute every job, `workers` at a time (default: one per core), each in a process of
    its own; what each printed, together, as it ends. JobFailed for the first that stops
    (the others running then end; none starts)."""
    if workers is not None and workers < 1:
        raise ValueError(f"jobs must be 1 or more, got {workers}")
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    if workers == 1:
        for job in jobs:
            _executed(job, capture=False)
        return
    print(f"executing {len(jobs)} notebooks, {workers} at a time", flush=True)
    spawn = multiprocessing.get_context("spawn")  # no kernel's sockets shared with a fork
    with ProcessPoolExecutor(workers, mp_context=spawn) as pool:
        running = [pool.submit(_executed, job) for job in jobs]
        try:
            for future in running:
                print(future.result(), end="", flush=True)
        except JobFailed as failed:
            print(failed.printed, end="", flush=True)
            pool.shutdown(cancel_futures=True)
            raise


def build(
    root: Path = ROOT, names: list[str] | None = None, fresh: bool = False, jobs: int | None = None
) -> None:
    """Execute the instructor notebooks of `names` (default: every assignment) in place,
    `jobs` at a time, then regenerate their release."""
    wanted = chosen(names, root)
    execute_all(
        [
            Job(path, root, fresh=fresh)
            for path in notebook_paths(root / "solutions")
            if path.parent.name in wanted
        ],
        jobs,
    )
    print("releasing with nbgrader", flush=True)
    release(root, wanted)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="*",
        metavar="ASSIGNMENT",
        help="only these assignments (folders of solutions/); default: all",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="search every test cell's probes again, not only the ones that changed",
    )
    jobs_argument(parser)


def jobs_argument(parser: argparse.ArgumentParser) -> None:
    """--jobs, for the verbs that execute notebooks."""
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help=f"notebooks executed side by side, each in a process of its own (default: one "
        f"per core, here {os.cpu_count()})",
    )


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    build(names=args.names, fresh=args.fresh, jobs=args.jobs)
    return 0
