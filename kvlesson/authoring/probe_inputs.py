"""The inputs a test cell's probes could try, and what the notebook's function gives on them.

This half of the probe search (`kvlesson.authoring.probe_search`) runs in the notebook's
kernel, where the answer's functions live. Around each probe of a test cell that calls a
function on written inputs, it plans inputs to try: each number one up and one down,
doubled and halved, a block either side, and the exact places where the instructor's
answer changes (found by scanning and halving; for a yes-or-no answer, also from each
neighbour, since such an answer flips only at a line), kept within the range of values the
cell's probes span; and each name swapped for another the cell passes in that place (on
the self-check's side only names the self-check shows). An input outside the exercise's
declared domain (`kvlesson.grading.checks.rules`) is never planned: a key is made only where
the question is defined. With a known mistake swapped in, it says what that mistake gives on
every planned input.
"""

from __future__ import annotations

import ast
import functools
import json
import math
from dataclasses import replace

from kvlesson.authoring.probe_cells import Probes, WrittenProbe
from kvlesson.grading.checks import rules
from kvlesson.grading.checks.probes import normal

BLOCK = 16  # tokens in a block: one block more or less is a step a mistake can miss
SCAN = (0.25, 0.5, 0.75, 0.9, 1.1, 1.25, 1.5, 2, 4)  # multiples scanned for a boundary


def _number(text: str) -> float | int | None:
    """A written number's value (12_000, 0.9, 10**6, 10.37 * 2**30), else None."""
    try:
        value = eval(
            compile(ast.Expression(ast.parse(text, mode="eval").body), "", "eval"),
            {"__builtins__": {}},
        )
    except Exception:
        return None
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if is_number and math.isfinite(value) else None


def written(value: float) -> str:
    """A number as the course writes it in a probe: 12_000, 0.45."""
    if isinstance(value, int):
        return f"{value:_}" if abs(value) >= 10_000 else str(value)
    return repr(round(value, 6))


def neighbours(value: float) -> list[float]:
    """The numbers a mistake at `value` shows on: one up and down, doubled, halved, a block
    either side (ints); for a float, doubled, halved and a tenth either side."""
    if isinstance(value, int):
        return [value - 1, value + 1, value * 2, value // 2, value + BLOCK, value - BLOCK]
    return [value * 2, value / 2, value * 1.1, value * 0.9]


@functools.lru_cache(maxsize=100_000)
def _compiled(text: str):
    """A probe's text compiled once: a plan's inputs are tried for every known mistake."""
    return compile(text, "<probe>", "eval")


def _answer(namespace: dict, text: str) -> str | None:
    """The normal form of the probe `text` (a probe maker's call), None if it raises or is
    not the kind of answer asked for."""
    try:
        probe = eval(_compiled(text), namespace)
        return normal(probe, probe.get())
    except Exception:
        return None


def _boundaries(namespace: dict, probe: WrittenProbe, position: int, value: int) -> list[int]:
    """Where the instructor's answer changes near `value` in the argument at `position`:
    the last input before each change and the first after it (bisected to one), and one
    and half a block further on either side (a mistake off by a little flips nearby)."""

    def at(x: int) -> str | None:
        args = list(probe.args)
        args[position] = written(x)
        return _answer(namespace, probe.element(tuple(args)))

    points = sorted({int(value * k) for k in SCAN} | {value})
    seen = [(x, at(x)) for x in points]
    found: list[int] = []
    for (low, a), (high, b) in zip(seen, seen[1:]):
        if a == b or a is None or b is None:
            continue
        while high - low > 1:
            middle = (low + high) // 2
            if at(middle) == a:
                low = middle
            else:
                high = middle
        found += [low, high, low - 1, high + 1, low - BLOCK // 2, high + BLOCK // 2]
    return found


def in_domain(namespace: dict, probe: WrittenProbe, args: tuple[str, ...]) -> bool:
    """Whether the exercise's declared domain holds for `probe`'s function called on `args`
    (True when no domain is declared); an input the domain cannot even read is outside it."""
    domain = rules.CURRENT.domain
    if domain is None:
        return True
    try:
        return bool(domain(*(eval(text, namespace) for text in args)))
    except Exception:
        return False


def outside(source: str, namespace: dict) -> list[str]:
    """The probes the test cell `source` writes on inputs outside the declared domain."""
    sides = {"verify": "self-check", "record": "hidden"}
    return [
        f"{p.function}({', '.join(p.args)}) ({sides[p.side]})"
        for p in Probes.of(source).found
        if not in_domain(namespace, p, p.args)
    ]


def plan(source: str, path: str, namespace: dict | None = None) -> None:
    """In the kernel, after the right answer ran: write to `path` the cell's inputs to try,
    per probe maker and side, with the instructor's answer on each (`namespace`: the
    notebook's, IPython's by default), inside the exercise's declared domain only."""
    namespace = namespace if namespace is not None else get_ipython().user_ns  # noqa: F821
    cell = Probes.of(source)
    tried: dict[str, dict] = {}
    for probe in cell.found:
        same = [
            p for p in cell.found if p.function == probe.function and len(p.args) == len(probe.args)
        ]
        options = _options(namespace, probe, same, probe.args)
        if ".yes_no(" in probe.template:  # a yes or no flips only at a line: seek it twice
            options += [
                deeper
                for args in options[1:]
                for deeper in _options(namespace, probe, same, args, near=False)
            ]
        shown = {t for p in cell.side("verify") for t in p.args}  # a self-check may use these
        makers = {
            (p.side, p.template, p.loop)
            for p in cell.found
            if p.function == probe.function and (not p.loop or len(probe.args) == 1)
        }
        for side, template, loop in sorted(makers):
            maker = WrittenProbe(side, probe.function, probe.args, template, loop)
            for args in options:
                if not in_domain(namespace, probe, args):
                    continue
                text = maker.element(args)
                hidden_name = any(_number(a) is None and a not in shown for a in args)
                if (side, text) not in tried and not (side == "verify" and hidden_name):
                    tried[side, text] = {
                        "args": list(args),
                        "template": template,
                        "function": probe.function,
                        "loop": loop,
                        "right": _answer(namespace, text),
                    }
    with open(path, "w") as out:
        json.dump(
            {
                "inputs": [
                    {"side": side, "text": text, **row}
                    for (side, text), row in tried.items()
                    if row["right"] is not None
                ]
            },
            out,
        )


def _options(
    namespace: dict,
    probe: WrittenProbe,
    same: list[WrittenProbe],
    args: tuple[str, ...],
    near: bool = True,
) -> list[tuple[str, ...]]:
    """`args`, and the inputs around them: each number's neighbours (`near`) and the places
    where the instructor's answer changes, within the range the cell's probes span; each
    name swapped for another the cell passes in that place."""
    options: list[tuple[str, ...]] = [args]
    for position, text in enumerate(args):
        seen = [p.args[position] for p in same]
        value = _number(text)
        if value is None:
            if near:
                options += [
                    _with(args, position, other)
                    for other in sorted({t for t in seen if _number(t) is None} - {text})
                ]
            continue
        numbers = [v for v in map(_number, seen) if v is not None]
        found = neighbours(value) if near else []
        if isinstance(value, int):
            found += _boundaries(namespace, replace(probe, args=args), position, value)
        options += [
            _with(args, position, written(x))
            for x in found
            if min(numbers) <= x <= max(numbers) and x != value
        ]
    return options


def _with(args: tuple[str, ...], position: int, text: str) -> tuple[str, ...]:
    return args[:position] + (text,) + args[position + 1 :]


LIKE_EXCLUDED = (bool, int, float, complex, str, bytes, list, tuple, dict, set, type(None))


def alike(source: str, names: list[str], out_path: str, namespace: dict | None = None) -> None:
    """In the kernel: write to `out_path`, per function the test cell `source` probes and
    per argument position, the notebook's variables among `names` (those the cells above
    bind) that hold the same kind of thing as that argument (a `kv.Model` for `m`): what a
    student may read instead of the argument. Plain numbers, text and containers are left
    out: every notebook has many."""
    namespace = namespace if namespace is not None else get_ipython().user_ns  # noqa: F821
    found: dict[str, dict[int, list[str]]] = {}
    for probe in Probes.of(source).found:
        for position, text in enumerate(probe.args):
            try:
                kind = type(eval(text, namespace))
            except Exception:
                continue
            if kind in LIKE_EXCLUDED:
                continue
            same = [n for n in names if n in namespace and type(namespace[n]) is kind]
            known = found.setdefault(probe.function, {}).setdefault(position, [])
            known += [n for n in same if n not in known]
    with open(out_path, "w") as out:
        json.dump({f: {str(k): v for k, v in by.items()} for f, by in found.items()}, out)


def values(path: str, out_path: str, namespace: dict | None = None) -> None:
    """In the kernel, with a known mistake swapped in: its answers on the planned inputs."""
    namespace = namespace if namespace is not None else get_ipython().user_ns  # noqa: F821
    with open(out_path, "w") as out:
        json.dump(answers_on(path, namespace), out)


def answers_on(path: str, namespace: dict) -> list[str | None]:
    """What the function in `namespace` gives on each input planned in `path`."""
    with open(path) as f:
        inputs = json.load(f)["inputs"]
    return [_answer(namespace, row["text"]) for row in inputs]


def wrong_somewhere(path: str, namespace: dict) -> bool:
    """Whether the function in `namespace` differs from the instructor's on an input
    planned in `path`: a wrong answer, whatever the probes say."""
    with open(path) as f:
        inputs = json.load(f)["inputs"]
    return answers_on(path, namespace) != [row["right"] for row in inputs]
