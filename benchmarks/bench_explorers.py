"""Benchmark: one slider move of each explorer, compute plus redraw.

Run from the repository root:

    python benchmarks/bench_explorers.py            # 15 moves of each slider
    python benchmarks/bench_explorers.py --quick    # 5

A move is what a student's drag does: set the slider's value, which runs the
explorer's callback (compute the view, update the figure in place, render it
to PNG, set the caption). A slider feels live under about 100 ms. It prints
the median and the fastest move of each slider, and the median as a share of
those 100 ms: on a machine that other work shares, the median wanders with the
load and the fastest move shows what the code itself costs. The sweep
explorer's share move is also timed with the reference server behind the
sweep, in the same process, to show what the fast engine buys.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from itertools import cycle

import kvlesson.serving.sweep
from kvlesson.lesson import explorer_base, explorers, lookahead

LIVE_MS = 100  # a redraw feels instant below this
explorer_base.KEPT = (
    0  # every move computes and draws: a setting seen before is not shown from a keep
)
lookahead.ENABLED = False  # ... and no view is computed ahead


@dataclass(frozen=True)
class Timing:
    """Milliseconds of one kind of slider move: the median and the fastest."""

    median: float
    fastest: float


def time_moves(move, values, repeats: int) -> Timing:
    """Times of `move(value)` over `repeats` values taken in turn."""
    times = []
    for value in [v for v, _ in zip(cycle(values), range(repeats))]:
        start = time.perf_counter()
        move(value)
        times.append(1000 * (time.perf_counter() - start))
    return Timing(statistics.median(times), min(times))


def moves(repeats: int) -> list[tuple[str, Timing]]:
    floor, ceiling, sweep, pause = (
        explorers.FloorExplorer(),
        explorers.CeilingExplorer(),
        explorers.SweepExplorer(),
        explorers.PauseExplorer(),
    )
    shares = [50, 60, 70, 80, 90, 40, 35]
    return [
        ("floor: share", time_moves(lambda v: setattr(floor.share, "value", v), shares, repeats)),
        (
            "ceiling: share",
            time_moves(lambda v: setattr(ceiling.share, "value", v), shares, repeats),
        ),
        (
            "ceiling: longest",
            time_moves(
                lambda v: setattr(ceiling.longest, "value", v),
                [4_000, 32_000, 128_000, 8_000],
                repeats,
            ),
        ),
        (
            "sweep: share (10 caps served)",
            time_moves(lambda v: setattr(sweep.share, "value", v), shares, repeats),
        ),
        (
            "sweep: cap",
            time_moves(lambda v: setattr(sweep.cap, "value", v), [1, 8, 64, 512], repeats),
        ),
        (
            "pause: step",
            time_moves(lambda v: setattr(pause.step, "value", v), [*range(2, 19), 1], repeats),
        ),
    ]


def reference_sweep_move(repeats: int) -> Timing:
    """The sweep explorer's share move with the reference server behind cap_sweep."""
    engines = kvlesson.serving.sweep.ENGINES
    fast = engines["fast"]
    engines["fast"] = engines["reference"]
    try:
        sweep = explorers.SweepExplorer()
        return time_moves(lambda v: setattr(sweep.share, "value", v), [50, 60, 70, 80, 90], repeats)
    finally:
        engines["fast"] = fast


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeats = 5 if parser.parse_args().quick else 15
    print(
        f"Python {sys.version.split()[0]}; {repeats} moves of each slider, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"
    )
    share_of_live = f"of {LIVE_MS} ms"
    print(
        f"{'explorer: slider':<32} {'median ms':>9} {'fastest ms':>10} {share_of_live:>9}"
        f"  under {LIVE_MS} ms"
    )
    results = moves(repeats)
    for name, t in results:
        print(
            f"{name:<32} {t.median:9.1f} {t.fastest:10.1f} {t.median / LIVE_MS:9.2f}"
            f"  {'yes' if t.median < LIVE_MS else 'NO'}"
        )
    fast = dict(results)["sweep: share (10 caps served)"]
    reference = reference_sweep_move(max(3, repeats // 3))
    print(
        f"\nsweep: share with the reference server: median {reference.median:.1f} ms, "
        f"{reference.median / fast.median:.1f}x the fast engine's {fast.median:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
