"""Benchmark: notebook 6's traffic runs, reference (`serve`) against fast engine (`serve_fast`).

Run from the repository root:

    python benchmarks/bench_traffic.py            # medians over several repeats
    python benchmarks/bench_traffic.py --quick    # fewer repeats

1. One move of the traffic explorer's sliders, as a student feels it: a day of
   300 of the lesson's chats arriving at random, served with a token budget and
   a cap, then the figure and caption redrawn (`TrafficExplorer.refresh`), at
   several settings.
2. The same days with prefix caching and a proxy, and notebook 6's office
   day, reference against fast engine, with the two results compared
   (counts equal, times within 1e-9 relative).

Times are medians of time.perf_counter over the repeats, in one process.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, uninstalled

from bench_serve import agree, median_seconds  # noqa: E402

import kvlesson as kv  # noqa: E402
from kvlesson.lesson import explorer_base, lookahead  # noqa: E402
from kvlesson.lesson.traffic_explorer import TrafficExplorer  # noqa: E402
from kvlesson.serving import capstone  # noqa: E402

explorer_base.KEPT = (
    0  # every move computes and draws: a setting seen before is not shown from a keep
)
lookahead.ENABLED = False  # ... and no view is computed ahead

MOVES = [
    (0.5, 512, 64),
    (2.0, 512, 64),
    (2.0, 2_048, 64),
    (2.0, None, 64),
    (5.0, 128, 128),
    (5.0, 8_192, 16),
]  # (chats a second, budget, cap)


def slider_moves(repeats: int) -> None:
    explorer = TrafficExplorer()  # the lesson's first 300 chats, as notebook 6 shows them
    print(f"Traffic explorer: one slider move, served and redrawn, 300 chats (median of {repeats})")
    print(f"{'chats/s':>8} {'budget':>7} {'cap':>4} {'ms':>8}")
    for rate, budget, cap in MOVES:
        # Put the sliders there (each set redraws once), then time the redraw of one move.
        explorer.rate.value, explorer.budget.value, explorer.cap.value = rate, budget or 0, cap
        seconds = median_seconds(explorer.refresh, repeats)
        print(f"{rate:>8g} {budget or 'none':>7} {cap:>4} {seconds * 1e3:>8.1f}")


def against_reference(repeats: int) -> None:
    day = kv.poisson_arrivals(kv.lesson_chats(n=300), 2.0, seed=1)
    cases = {
        "300 chats, 2/s, budget 512": (day, dict(cap=64, budget=512)),
        "  + prefix caching, proxy 32": (
            day,
            dict(cap=64, budget=512, prefix_caching=True, admission=32),
        ),
        "office day (3090), caching": (
            capstone.office(1),
            dict(
                cap=64,
                share=95,
                longest=16_000,
                budget=1_024,
                prefix_caching=True,
                **capstone.HARDWARE,
            ),
        ),
    }
    print(f"\nReference against fast engine (median of {repeats})")
    print(f"{'case':<30} {'steps':>7} {'reference ms':>13} {'fast ms':>8} {'ratio':>6}  same")
    for label, (chats, settings) in cases.items():
        ref = kv.serve(chats, **settings)
        same = agree(kv.serve_fast(chats, **settings), ref)
        slow = median_seconds(lambda: kv.serve(chats, **settings), max(1, repeats // 2))
        fast = median_seconds(lambda: kv.serve_fast(chats, **settings), repeats)
        print(
            f"{label:<30} {ref.steps:>7,} {slow * 1e3:>13.1f} {fast * 1e3:>8.1f} "
            f"{slow / fast:>6.1f}  {'yes' if same else 'NO'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeats = 3 if parser.parse_args().quick else 7
    print(f"Python {sys.version.split()[0]}")
    slider_moves(repeats)
    against_reference(repeats)


if __name__ == "__main__":
    main()
