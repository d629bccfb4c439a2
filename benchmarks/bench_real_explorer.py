"""Benchmark: one move of each control of notebook 5's explorer, compute plus redraw.

Run from the repository root:

    python benchmarks/bench_real_explorer.py            # medians of 15 moves
    python benchmarks/bench_real_explorer.py --quick    # medians of 5

Prints each control's median in ms and its ratio to the 100 ms under which a
redraw feels live (a ratio under 1 is live).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from itertools import cycle

from kvlesson.lesson import explorer_base, lookahead
from kvlesson.lesson.real_server_explorer import PASTED, RealServerExplorer
from kvlesson.memory.specs import LLAMA_31_8B_CONFIG

LIVE_MS = 100  # a redraw feels instant below this
explorer_base.KEPT = (
    0  # every move computes and draws: a setting seen before is not shown from a keep
)
lookahead.ENABLED = False  # ... and no view is computed ahead


def median_ms(control, values, repeats: int) -> float:
    """Median time of setting `control.value` over `repeats` values taken in turn."""
    times = []
    for value in [v for v, _ in zip(cycle(values), range(repeats))]:
        start = time.perf_counter()
        control.value = value
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 moves a control instead of 15")
    repeats = 5 if parser.parse_args().quick else 15
    e = RealServerExplorer()
    e.config.value = json.dumps(LLAMA_31_8B_CONFIG)
    rows = [
        ("card", median_ms(e.gpu, ["A100_80GB", "RTX_3090", "H100_80GB"], repeats)),
        (
            "model",
            median_ms(e.model, ["LLAMA_33_70B", "QWEN25_7B", PASTED, "LLAMA_31_8B"], repeats),
        ),
        ("tensor parallel", median_ms(e.tp, [2, 4, 8, 1], repeats)),
        ("weights", median_ms(e.weights, ["fp8", "fp16", "bf16"], repeats)),
        ("KV cache", median_ms(e.cache, ["fp8", "auto"], repeats)),
        ("share", median_ms(e.share, [50, 70, 90, 95, 92], repeats)),
        ("max_model_len", median_ms(e.longest, [4_096, 32_768, 262_144, 131_072], repeats)),
    ]
    e.model.value = PASTED
    rows.append(
        (
            "config.json edit",
            median_ms(
                e.config,
                [json.dumps({**LLAMA_31_8B_CONFIG, "num_hidden_layers": n}) for n in (16, 24, 32)],
                repeats,
            ),
        )
    )
    print(f"{'control':<20}{'median ms':>10}{'x 100 ms':>10}")
    for name, ms in rows:
        print(f"{name:<20}{ms:>10.1f}{ms / LIVE_MS:>10.2f}")


if __name__ == "__main__":
    main()
