"""Benchmark: the reference server (`serve`) against the fast engine (`serve_fast`).

Run from the repository root:

    python benchmarks/bench_serve.py            # medians over several repeats
    python benchmarks/bench_serve.py --quick    # fewer repeats

1. The lesson's 600 chats at every cap of the sweep (1, 2, ..., 512; 90%,
   ceiling 8,000), and the whole 10-cap sweep a slider re-runs; then the
   sweep against the plain step loop, docs/model.md's four steps and nothing else
   (tests/support/lesson_model.py): the fast engine must stay at least 25 times as
   fast as that, whatever notebook 6's extensions added to the reference.
2. 100,000 chats drawn the lesson's way at cap 256 and 90%, and the fast
   engine on 12,500 .. 100,000 of them, to show how its cost grows.

Times are medians of time.perf_counter over the repeats, in one process. Each
pair of runs is also compared (counts equal, times within 1e-9 relative).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repo root, uninstalled
sys.path.insert(0, str(ROOT / "tests"))  # the plain step loop, lesson_model.py

import kvlesson as kv  # noqa: E402
from kvlesson.serving.fast_engine import serve_fast  # noqa: E402
from support.lesson_model import lesson_serve  # noqa: E402

TARGET = 25  # the fast sweep against the plain step loop: at least this many times as fast

CAPS = [2**k for k in range(10)]  # 1, 2, 4, ..., 512
SIZES = [12_500, 25_000, 50_000, 100_000]


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    """Median wall time of `run()` over `repeats` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def agree(fast: kv.ServeResult, ref: kv.ServeResult) -> bool:
    """Counts equal and every time within 1e-9 relative."""
    counts = ("steps", "pauses", "rebuilt_tokens", "refused", "tokens", "blocks", "cap")
    if any(getattr(fast, name) != getattr(ref, name) for name in counts):
        return False
    pairs = [
        (fast.seconds, ref.seconds),
        (fast.avg_running, ref.avg_running),
        (fast.wait_ms, ref.wait_ms),
    ]
    pairs += zip(fast.first_token_s + fast.last_token_s, ref.first_token_s + ref.last_token_s)
    return all(a is b or math.isclose(a, b, rel_tol=1e-9) for a, b in pairs)


def sweep(chats: list[kv.Chat], repeats: int) -> None:
    """The lesson's sweep, cap by cap and as a whole."""
    print(f"Lesson sweep: {len(chats)} chats, 90%, ceiling 8,000; medians of {repeats} runs")
    print(
        f"{'cap':>6} {'steps':>7} {'pauses':>6} {'reference ms':>13} {'fast ms':>8} "
        f"{'ratio':>6}  same"
    )
    for cap in CAPS:
        ref = kv.serve(chats, cap)
        same = agree(serve_fast(chats, cap), ref)
        slow = median_seconds(lambda: kv.serve(chats, cap), repeats)
        fast = median_seconds(lambda: serve_fast(chats, cap), 3 * repeats)
        print(
            f"{cap:>6} {ref.steps:>7,} {ref.pauses:>6} {slow * 1e3:>13.2f} {fast * 1e3:>8.3f} "
            f"{slow / fast:>6.0f}  {'yes' if same else 'NO'}"
        )
    slow = median_seconds(lambda: [kv.serve(chats, cap) for cap in CAPS], repeats)
    fast = median_seconds(lambda: [serve_fast(chats, cap) for cap in CAPS], 3 * repeats)
    print(
        f"{'sweep':>6} {'':>7} {'':>6} {slow * 1e3:>13.2f} {fast * 1e3:>8.3f} "
        f"{slow / fast:>6.0f}  (all 10 caps)"
    )
    against_plain_loop(chats, repeats)


def against_plain_loop(chats: list[kv.Chat], repeats: int) -> None:
    """The sweep, fast engine against docs/model.md's plain step loop, measured in turns so that
    a busy machine slows both alike; the ratio is the median of the turns' ratios."""
    gpu, model = kv.A100_80GB, kv.LLAMA_31_8B
    pairs = [(chat.prompt, chat.reply) for chat in chats]
    blocks = kv.memory_parts(90).blocks

    def plain() -> None:
        for cap in CAPS:
            lesson_serve(
                pairs,
                cap,
                blocks,
                8_000,
                False,
                model.params,
                gpu.peak_flops,
                model.weights_bytes,
                model.bytes_per_token,
                gpu.bandwidth,
            )

    def fast() -> None:
        for cap in CAPS:
            serve_fast(chats, cap)

    turns = [(median_seconds(plain, 1), median_seconds(fast, 5)) for _ in range(repeats)]
    ratio = statistics.median(slow / quick for slow, quick in turns)
    print(
        f"\nThe sweep against the plain step loop (docs/model.md's four steps, tests/support/lesson_model.py),"
        f" {repeats} turns:\n  plain loop {statistics.median(t[0] for t in turns) * 1e3:.1f} ms,"
        f" fast engine {statistics.median(t[1] for t in turns) * 1e3:.2f} ms: {ratio:.1f} times"
        f" as fast (target: at least {TARGET})"
    )


def large(repeats: int) -> None:
    """100,000 chats at cap 256, 90%, and the fast engine's growth with the number of chats."""
    chats = kv.lesson_chats(seed=2026, n=SIZES[-1])
    print(f"\nLarge run: {len(chats):,} chats (seed 2026), cap 256, 90%, ceiling 8,000")
    start = time.perf_counter()
    ref = kv.serve(chats, 256)
    slow = time.perf_counter() - start
    same = agree(serve_fast(chats, 256), ref)
    fast = median_seconds(lambda: serve_fast(chats, 256), repeats)
    print(
        f"  {ref.steps:,} steps, {ref.pauses:,} pauses; reference {slow:.2f} s (once), "
        f"fast {fast:.3f} s (median of {repeats}): {slow / fast:.0f}x; "
        f"same results: {'yes' if same else 'NO'}"
    )

    print(f"\nFast engine, cap 256, 90%: cost against the number of chats (median of {repeats})")
    print(f"{'chats':>9} {'steps':>8} {'seconds':>8} {'us/chat':>8}")
    for n in SIZES:
        part = chats[:n]  # the first n of one draw: the same as lesson_chats(2026, n)
        steps = serve_fast(part, 256).steps
        seconds = median_seconds(lambda: serve_fast(part, 256), repeats)
        print(f"{n:>9,} {steps:>8,} {seconds:>8.3f} {seconds / n * 1e6:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    quick = parser.parse_args().quick
    print(f"Python {sys.version.split()[0]}")
    sweep(kv.lesson_chats(), repeats=3 if quick else 7)
    large(repeats=3 if quick else 5)


if __name__ == "__main__":
    main()
