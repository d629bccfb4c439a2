"""`python -m kvlesson`: print every number the lesson quotes, section by section.

    python -m kvlesson                      # the lesson's setting
    python -m kvlesson --gpu H100_80GB      # the same lesson on another card
    python -m kvlesson --json               # for machines
"""

from __future__ import annotations

import argparse
import json
import sys

from kvlesson.arguments import positive
from kvlesson.lesson.numbers import lesson_numbers
from kvlesson.memory.floor import RESERVE_BYTES
from kvlesson.memory.specs import GPUS, MODELS, gpu, model
from kvlesson.serving.server import LESSON_LONGEST, LESSON_SHARE

TITLES = {"floor": "The floor plan", "ceiling": "The ceiling is not a slice",
          "sweep": "The cap sweep", "preemption": "Preemption: the hand case",
          "real_server": "A real server's start-up (notebook 5; the seeds' settings)"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kvlesson", description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="A100_80GB", choices=list(GPUS), help="the card")
    parser.add_argument("--model", default="LLAMA_31_8B", choices=list(MODELS), help="the model")
    parser.add_argument("--share", type=int, default=LESSON_SHARE, help="memory share, percent (1..100)")
    parser.add_argument("--longest", type=int, default=LESSON_LONGEST, help="the ceiling, tokens")
    parser.add_argument("--reserve-gb", type=float, default=RESERVE_BYTES / 1e9,
                        help="working reserve, GB")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    try:
        reserve_gb = positive("--reserve-gb", args.reserve_gb, zero_ok=True)
        numbers = lesson_numbers(gpu(args.gpu), model(args.model), args.share, args.longest,
                                 reserve_gb * 1e9)
    except (TypeError, ValueError) as error:
        parser.error(str(error))
    if args.json:
        json.dump({section: {key: {"value": f.value, "text": f.text, "about": f.about}
                             for key, f in figures.items()}
                   for section, figures in numbers.items()}, sys.stdout, indent=1)
        print()
        return 0
    print(f"{gpu(args.gpu).name}, {model(args.model).name}, share {args.share}%, "
          f"longest chat {args.longest:,} tokens, reserve {args.reserve_gb:g} GB")
    for section, figures in numbers.items():
        print(f"\n{TITLES[section]}")
        width = max(len(f.about) for f in figures.values())
        for figure in figures.values():
            print(f"  {figure.about:<{width}}  {figure.text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
