"""`kvlesson numbers`: every number the lesson quotes, printed section by section.

kvlesson numbers                      # the lesson's setting
kvlesson numbers --gpu H100_80GB      # the same lesson on another card
kvlesson numbers --json               # for machines
"""

from __future__ import annotations

import argparse
import json
import sys

from kvlesson.arguments import positive
from kvlesson.lesson.numbers import lesson_numbers
from kvlesson.memory.floor import RESERVE_BYTES
from kvlesson.memory.specs import GPUS, MODELS, gpu, model
from kvlesson.serving.settings import LESSON_LONGEST, LESSON_SHARE

TITLES = {
    "floor": "The floor plan",
    "ceiling": "The ceiling is not a slice",
    "sweep": "The cap sweep",
    "preemption": "Preemption: the hand case",
    "real_server": "A real server's start-up (notebook 5; the seeds' settings)",
}


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu", default="A100_80GB", choices=list(GPUS), help="the card")
    parser.add_argument("--model", default="LLAMA_31_8B", choices=list(MODELS), help="the model")
    parser.add_argument(
        "--share", type=int, default=LESSON_SHARE, help="memory share, percent (1..100)"
    )
    parser.add_argument("--longest", type=int, default=LESSON_LONGEST, help="the ceiling, tokens")
    parser.add_argument(
        "--reserve-gb", type=float, default=RESERVE_BYTES / 1e9, help="working reserve, GB"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    """Print the numbers of the setting `args` names; ValueError for one out of range."""
    try:
        reserve_gb = positive("--reserve-gb", args.reserve_gb, zero_ok=True)
        numbers = lesson_numbers(
            gpu(args.gpu), model(args.model), args.share, args.longest, reserve_gb * 1e9
        )
    except TypeError as error:  # a value of the wrong kind: a usage error too
        raise ValueError(str(error)) from error
    if args.json:
        json.dump(
            {
                section: {
                    key: {"value": f.value, "text": f.text, "about": f.about}
                    for key, f in figures.items()
                }
                for section, figures in numbers.items()
            },
            sys.stdout,
            indent=1,
        )
        print()
        return 0
    print(
        f"{gpu(args.gpu).name}, {model(args.model).name}, share {args.share}%, "
        f"longest chat {args.longest:,} tokens, reserve {args.reserve_gb:g} GB"
    )
    for section, figures in numbers.items():
        print(f"\n{TITLES[section]}")
        width = max(len(f.about) for f in figures.values())
        for figure in figures.values():
            print(f"  {figure.about:<{width}}  {figure.text}")
    return 0
