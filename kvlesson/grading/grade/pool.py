"""Grading workers side by side, and a deadline for each submission.

`Workers(n, run, seconds)` starts n worker processes (`kvlesson.grading.grade.worker`, in
isolated mode, in the run's folder, their log in that folder), hands each the next job as
soon as it is free, and yields each result as it comes. A job that runs past `seconds`
(a kernel that hangs the worker, a notebook that never ends) is stopped by killing that
worker and its box, and comes back as a failure; a new worker takes its place. A worker
that dies (killed from outside) has its job given again to a new one, once. nbgrader's
SQLite gradebook is never written here: the caller, one process, writes each result.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import asdict
from pathlib import Path
from typing import Iterator

from kvlesson.grading.course import isolated
from kvlesson.grading.course.results import SubmissionResult, result_from_json
from kvlesson.grading.grade.worker import Job


class Worker:
    """One worker process, and the job it is on."""

    def __init__(self, number: int, run: Path):
        self.log = (run / f"worker-{number}.log").open("ab")
        self.process = subprocess.Popen(
            isolated.python("kvlesson.grading.grade.worker"),
            cwd=run,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            start_new_session=True,
        )
        self.job: Job | None = None
        self.deadline = 0.0
        self.buffer = b""

    def give(self, job: Job, seconds: float) -> None:
        os.makedirs(job.private, mode=0o700, exist_ok=True)
        self.job, self.deadline = job, time.monotonic() + seconds
        self.process.stdin.write((json.dumps(asdict(job)) + "\n").encode())
        self.process.stdin.flush()

    def stop(self) -> None:
        """Kill the worker and everything it started (its session: nbgrader, the box)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self.log.close()


class Workers:
    """A pool of `n` workers; use it in a `with` block, and `run` the jobs."""

    def __init__(self, n: int, run: Path, seconds: float):
        self.n, self.run_folder, self.seconds = n, run, seconds
        self.workers: list[Worker] = []
        self.started = 0
        self.retried: set[str] = set()  # jobs given again after their worker died

    def __enter__(self) -> "Workers":
        self.workers = [self._new() for _ in range(self.n)]
        return self

    def __exit__(self, *exc) -> None:
        for worker in self.workers:
            if worker.process.stdin:
                try:
                    worker.process.stdin.close()
                except OSError:
                    pass
            worker.stop()

    def _new(self) -> Worker:
        self.started += 1
        return Worker(self.started, self.run_folder)

    def run(self, jobs: list[Job]) -> Iterator[SubmissionResult]:
        """Each job's result, in the order they finish."""
        todo = list(jobs)
        selector = selectors.DefaultSelector()
        for worker in self.workers:
            selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        busy = 0
        for worker in self.workers:
            if todo:
                worker.give(todo.pop(0), self.seconds)
                busy += 1
        while busy:
            now = time.monotonic()
            wait = max(0.0, min(w.deadline for w in self.workers if w.job) - now)
            for key, _ in selector.select(timeout=wait + 0.05):
                worker = key.data
                chunk = os.read(worker.process.stdout.fileno(), 1 << 20)
                if not chunk:  # the worker died (killed, or out of memory): its job again
                    selector.unregister(worker.process.stdout)
                    job = worker.job
                    worker.stop()
                    worker = self._replace(worker, selector)
                    if job is None:
                        continue
                    if job.private not in self.retried:
                        self.retried.add(job.private)
                        shutil.rmtree(job.private, ignore_errors=True)
                        worker.give(job, self.seconds)
                        continue
                    result = SubmissionResult(
                        job.assignment,
                        job.student,
                        None,
                        False,
                        failure="not graded: the grading worker stopped twice on this submission",
                    )
                else:
                    worker.buffer += chunk
                    if b"\n" not in worker.buffer:
                        continue
                    line, worker.buffer = worker.buffer.split(b"\n", 1)
                    result = result_from_json(line)
                    worker.job = None
                busy -= 1
                yield result
                if todo:
                    worker.give(todo.pop(0), self.seconds)
                    busy += 1
            for worker in [w for w in self.workers if w.job and time.monotonic() > w.deadline]:
                result = self._lost(
                    worker,
                    f"grading took more than {self.seconds:g} s "
                    "(a cell that never ends?): it was stopped",
                )
                selector.unregister(worker.process.stdout)
                worker = self._replace(worker, selector)
                busy -= 1
                yield result
                if todo:
                    worker.give(todo.pop(0), self.seconds)
                    busy += 1

    def _lost(self, worker: Worker, why: str) -> SubmissionResult:
        job = worker.job
        worker.stop()
        return SubmissionResult(
            job.assignment, job.student, None, False, failure=f"not graded: {why}"
        )

    def _replace(self, worker: Worker, selector) -> Worker:
        fresh = self._new()
        self.workers[self.workers.index(worker)] = fresh
        selector.register(fresh.process.stdout, selectors.EVENT_READ, fresh)
        return fresh
