"""Grading workers side by side, and a deadline for each submission.

`Workers(n, run, seconds)` starts n worker processes (`kvlesson.grading.grade.worker`, in
isolated mode, in the run's folder, their log in that folder; `grow` starts more: a run
starts one before it has read the course), hands each the next job as
soon as it is free, and yields each result as it comes. A job that runs past `seconds`
(a kernel that hangs the worker, a notebook that never ends) is stopped by killing that
worker and its box, and comes back as a failure; a new worker takes its place. A worker
that dies (killed from outside) has its job given again to a new one, once. nbgrader's
SQLite gradebook is never written here: the caller, one process, writes each result.
When the jobs are done every worker is told so at once (its input closed) and ends its
zygotes and itself; one that has not within END_WAIT seconds is killed.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

from kvlesson.grading.course import isolated
from kvlesson.grading.course.results import SubmissionResult, result_from_json

END_WAIT = 60.0  # seconds a worker told the jobs are done has to end on its own


@dataclass
class Job:
    """One submission to grade."""

    root: str  # the course root
    assignment: str
    student: str
    private: str  # a new folder for this job, outside the course root
    template: str  # the gradebook as the run found it (read, never written)
    hide: list[str]  # folders the box must hide besides the course root (the run's folder)
    shared: str = ""  # the run's folder the workers share (kvlesson without some functions)


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

    def told(self) -> None:
        """Tell the worker the jobs are done: it ends its zygotes, then itself."""
        try:
            self.process.stdin.close()
        except OSError:
            pass

    def end(self, by: float) -> None:
        """Wait for the worker told the jobs are done to end, until the time `by`
        (time.monotonic()); then stop it, whatever is left of it."""
        try:
            self.process.wait(timeout=max(0.0, by - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        self.stop()

    def answer(self) -> SubmissionResult | None:
        """The worker's answer to its job, once a whole line has come (else None)."""
        if b"\n" not in self.buffer:
            return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        self.job = None
        return result_from_json(line)


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

    def __exit__(self, kind, *exc) -> None:
        """The workers ended once their jobs are done (all told at once, so that they end
        side by side); stopped at once on an error."""
        if kind is not None:
            self.stop()
            return
        for worker in self.workers:
            worker.told()
        by = time.monotonic() + END_WAIT
        for worker in self.workers:
            worker.end(by)

    def grow(self, n: int) -> None:
        """Start workers until there are `n` (a run starts one before it knows its class)."""
        while len(self.workers) < n:
            self.workers.append(self._new())

    def stop(self) -> None:
        """Stop every worker at once (a run that found it has nothing to do)."""
        for worker in self.workers:
            worker.stop()

    def _new(self) -> Worker:
        self.started += 1
        return Worker(self.started, self.run_folder)

    def run(self, jobs: list[Job]) -> Iterator[SubmissionResult]:
        """Each job's result, in the order they finish."""
        self.todo, self.busy = list(jobs), 0
        selector = selectors.DefaultSelector()
        for worker in self.workers:
            selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
            self._next(worker)
        while self.busy:
            now = time.monotonic()
            wait = max(0.0, min(w.deadline for w in self.workers if w.job) - now)
            for key, _ in selector.select(timeout=wait + 0.05):
                result = self._read(key.data, selector)
                if result is not None:
                    yield result
            for worker in [w for w in self.workers if w.job and time.monotonic() > w.deadline]:
                selector.unregister(worker.process.stdout)
                why = f"grading took more than {self.seconds:g} s (a cell that never ends?)"
                result = self._lost(worker, f"{why}: it was stopped")
                yield self._done(result, self._replace(worker, selector))

    def _next(self, worker: Worker) -> None:
        """Give `worker` the next job, if there is one."""
        if self.todo:
            worker.give(self.todo.pop(0), self.seconds)
            self.busy += 1

    def _done(self, result: SubmissionResult, worker: Worker) -> SubmissionResult:
        """One job finished: `worker` is free for the next."""
        self.busy -= 1
        self._next(worker)
        return result

    def _read(self, worker: Worker, selector) -> SubmissionResult | None:
        """What `worker` said: its job's result once whole; if it died (killed, out of
        memory), its job given again to a new worker, once, or a failure the second time."""
        chunk = os.read(worker.process.stdout.fileno(), 1 << 20)
        if chunk:
            worker.buffer += chunk
            result = worker.answer()
            return None if result is None else self._done(result, worker)
        selector.unregister(worker.process.stdout)
        job = worker.job
        worker.stop()
        worker = self._replace(worker, selector)
        if job is None:
            return None
        if job.private not in self.retried:
            self.retried.add(job.private)
            shutil.rmtree(job.private, ignore_errors=True)
            worker.give(job, self.seconds)
            return None
        failure = "not graded: the grading worker stopped twice on this submission"
        return self._done(
            SubmissionResult(job.assignment, job.student, None, False, failure=failure), worker
        )

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
