"""Benchmark: one slider move of each explorer, compute plus redraw.

Run from the repository root:

    python benchmarks/bench_explorers.py            # medians of 15 moves
    python benchmarks/bench_explorers.py --quick    # medians of 5

A move is what a student's drag does: set the slider's value, which runs the
explorer's callback (compute the view, update the figure in place, render it
to PNG, set the caption). A slider feels live under about 100 ms. The sweep
explorer's share move is also timed with the reference server behind the
sweep, in the same process, to show what the fast engine buys.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from itertools import cycle

import kvlesson.sweep
from kvlesson import widgets

LIVE_MS = 100  # a redraw feels instant below this


def median_ms(move, values, repeats: int) -> float:
    """Median time of `move(value)` over `repeats` values taken in turn."""
    times = []
    for value in [v for v, _ in zip(cycle(values), range(repeats))]:
        start = time.perf_counter()
        move(value)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def moves(repeats: int) -> list[tuple[str, float]]:
    floor, ceiling, sweep, pause = (widgets.FloorExplorer(), widgets.CeilingExplorer(),
                                    widgets.SweepExplorer(), widgets.PauseExplorer())
    shares = [50, 60, 70, 80, 90, 40, 35]
    return [
        ("floor: share", median_ms(lambda v: setattr(floor.share, "value", v), shares, repeats)),
        ("ceiling: share", median_ms(lambda v: setattr(ceiling.share, "value", v), shares, repeats)),
        ("ceiling: longest", median_ms(lambda v: setattr(ceiling.longest, "value", v),
                                       [4_000, 32_000, 128_000, 8_000], repeats)),
        ("sweep: share (10 caps served)",
         median_ms(lambda v: setattr(sweep.share, "value", v), shares, repeats)),
        ("sweep: cap", median_ms(lambda v: setattr(sweep.cap, "value", v), [1, 8, 64, 512], repeats)),
        ("pause: step", median_ms(lambda v: setattr(pause.step, "value", v), range(1, 19), repeats)),
    ]


def reference_sweep_move(repeats: int) -> float:
    """The sweep explorer's share move with the reference server behind cap_sweep."""
    engines = kvlesson.sweep.ENGINES
    fast = engines["fast"]
    engines["fast"] = engines["reference"]
    try:
        sweep = widgets.SweepExplorer()
        return median_ms(lambda v: setattr(sweep.share, "value", v), [50, 60, 70, 80, 90],
                         repeats)
    finally:
        engines["fast"] = fast


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeats = 5 if parser.parse_args().quick else 15
    print(f"Python {sys.version.split()[0]}; medians of {repeats} slider moves")
    print(f"{'explorer: slider':<32} {'ms':>7}  under {LIVE_MS} ms")
    results = moves(repeats)
    for name, ms in results:
        print(f"{name:<32} {ms:7.1f}  {'yes' if ms < LIVE_MS else 'NO'}")
    fast = dict(results)["sweep: share (10 caps served)"]
    reference = reference_sweep_move(max(3, repeats // 3))
    print(f"\nsweep: share with the reference server: {reference:.1f} ms, "
          f"{reference / fast:.1f}x the fast engine's {fast:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
