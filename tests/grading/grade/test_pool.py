"""The grading pool's end (kvlesson.grading.grade.pool): every worker is told the jobs are
done before any is waited for, so that they end side by side (each ends its zygotes, a
second or so); told one at a time, a run of two workers waited for both in turn."""

from __future__ import annotations

from kvlesson.grading.grade import pool


class Told:
    """A stand-in for a worker process: it notes what it is asked, in order."""

    said: list[tuple[str, int]] = []

    def __init__(self, number: int, run):
        self.number = number

    def told(self) -> None:
        self.said.append(("told", self.number))

    def end(self, by: float) -> None:
        self.said.append(("waited for", self.number))

    def stop(self) -> None:
        self.said.append(("stopped", self.number))


def test_every_worker_is_told_before_any_is_waited_for(monkeypatch, tmp_path):
    monkeypatch.setattr(pool, "Worker", Told)
    Told.said = []
    with pool.Workers(3, tmp_path, seconds=60):
        pass
    assert Told.said[:3] == [("told", 1), ("told", 2), ("told", 3)]
    assert sorted(Told.said[3:]) == [("waited for", 1), ("waited for", 2), ("waited for", 3)]


def test_on_an_error_every_worker_is_stopped_at_once(monkeypatch, tmp_path):
    monkeypatch.setattr(pool, "Worker", Told)
    Told.said = []
    try:
        with pool.Workers(2, tmp_path, seconds=60):
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert Told.said == [("stopped", 1), ("stopped", 2)]


def test_a_pool_grows_to_the_count_asked_and_never_shrinks(monkeypatch, tmp_path):
    monkeypatch.setattr(pool, "Worker", Told)
    Told.said = []
    with pool.Workers(1, tmp_path, seconds=60) as workers:
        workers.grow(3)
        workers.grow(2)
        assert [w.number for w in workers.workers] == [1, 2, 3]
