"""What a self-check says of a wrong answer: only what the student did, and what to re-read.

`kvlesson.grading.checks.selfcheck.verify` compares each answer with its salted hash. When
one is wrong, in this order:

1. a known mistake whose answers, on every probe, are the student's gives its hint;
2. an answer that is right in another unit (GB for bytes, ms for seconds, blocks for
   tokens, a percent for a fraction) is told which unit it looks like and which one the
   question asks for;
3. else it says plainly that the answer is not right yet and to re-read the question, or
   what the cell's `hints={"else": ...}` says to re-read, in its own words: a generic
   guess at the mistake would mislead (a "sum" for an answer read off a table).

A yes or no is never told on its own whether it is right: flipping it would find the answer.
A cell checks its yes-or-no probes together, after the numbers that decide them, and never
says which is wrong; it says how many only where the count cannot point at them (a function's
answers, some but not all wrong), and `hints={"yes_no": ...}` says what decides them.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Callable

from kvlesson.grading.checks.probes import Probe

ELSE = "else"  # the key of `verify(hints=...)` whose words say what to re-read
YES_NO = "yes_no"  # the key of `verify(hints=...)` whose words say what decides a yes or no

# Units of one family, by how many of the family's first unit one of them is.
UNITS = (
    {"bytes": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30},
    {"seconds": 1, "ms": 1e-3},
    {"tokens": 1, "blocks": 16},
    {"share": 1, "percent": 0.01},
)
# Units a message names in words of their own: a share is a fraction of 1, as vLLM's
# gpu_memory_utilization takes it; the course's shares are whole percents.
UNIT_WORDS = {"share": "a fraction of 1", "percent": "a percent"}


def _family(unit: str) -> dict[str, float] | None:
    return next((family for family in UNITS if unit in family), None)


def asked_unit(probe: Probe) -> str:
    """The unit the question asks the answer in: the probe's unit, or, for a probe that
    compares after dividing by `scale` (bytes shown as GB), the unit before the division."""
    family = _family(probe.unit)
    if family is None or probe.scale == 1:
        return probe.unit
    wanted = family[probe.unit] / probe.scale
    return next(
        (name for name, size in family.items() if abs(size / wanted - 1) < 1e-9), probe.unit
    )


def unit_seen(probe: Probe, value: object, right: Callable[[Probe, object], bool]) -> str | None:
    """The unit `value` is in when it is the right answer in another unit of the question's
    family (`right(probe, value)`: whether a value is the right answer), else None."""
    asked = asked_unit(probe)
    family = _family(asked)
    if family is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    for name, size in family.items():
        if name == asked:
            continue
        converted = value * size / family[asked]
        if probe.kind != "number":  # whole units: 411,527 tokens fill 25,720 whole blocks
            converted = int(converted) if size < family[asked] else converted
            if float(converted).is_integer():
                converted = int(converted)
        if right(probe, converted):
            return name
    return None


def setting_problem(made_for: dict, now: dict, parameters: tuple[str, ...]) -> str | None:
    """Why a self-check cannot judge an answer: the notebook's parameters are not the ones
    its stamp holds the answers for (None when they are), and the command that builds the
    course for the student's setting."""
    changed = [
        f"{name} = {now[name]!r}" for name in parameters if now.get(name) != made_for.get(name)
    ]
    if not changed:
        return None
    release = ", ".join(f"{name} = {made_for[name]!r}" for name in parameters)
    wanted = {**made_for, **{k: v for k, v in now.items() if v is not None}}
    model = (
        f"--model-config {wanted['MODEL']}"
        if str(wanted["MODEL"]).endswith(".json")
        else f"--model {wanted['MODEL']}"
    )
    command = (
        f"kvlesson for --gpu {wanted['GPU']} {model} --share {wanted['SHARE']} "
        f"--longest {wanted['LONGEST']} --cap {wanted['CAP']}"
    )
    return (
        f"Not yet: this self-check holds the answers for the release's setting ({release}), "
        f"and this notebook now has {', '.join(changed)}, so it cannot tell whether your "
        f"answer is right. Set the parameters cell back and run the notebook again, or build "
        f"the course for your setting, whose self-checks hold its answers: {command}"
    )


PLAIN = "Re-read the question."  # what a wrong answer no known mistake explains is told


def _looks(unit: str) -> str:
    """How a message names the unit an answer looks like it is in."""
    return UNIT_WORDS.get(unit, f"it is in {unit}")


def _asks(unit: str) -> str:
    """How a message names the unit a question asks for."""
    return UNIT_WORDS.get(unit, unit)


def wrong_message(
    probe: Probe,
    value: object,
    hint: str | None,
    hints: dict[str, str],
    seen: str | None,
    float_for_count: bool = False,
) -> str:
    """What the self-check says of a wrong answer that is not a yes or no (see the module)."""
    tail = (
        f" (It should also be a whole number, an int, not the float {value!r}.)"
        if float_for_count
        else ""
    )
    if hint:
        return f"Not yet: {probe.label} is not right: {hint}{tail}"
    if seen:
        asked = asked_unit(probe)
        shown = (
            f" (the self-check shows it in {probe.unit} only to compare)"
            if asked != probe.unit
            else ""
        )
        return (
            f"Not yet: {probe.label} looks like {_looks(seen)}; the question asks for "
            f"{_asks(asked)}{shown}.{tail}"
        )
    return (
        f"Not yet: {probe.label} is not right yet. {hints.get(ELSE) or PLAIN} Then run "
        f"your answer cell and this one again.{tail}"
    )


def right_but_float(probe: Probe, value: float) -> str:
    """A whole number asked for, the right number given as a float."""
    return (
        f"Not yet: {probe.label} is the right number, but a float ({value!r}); the "
        f"question asks for a whole number, an int. A float anywhere in a sum makes the "
        f"result a float, // included (7.0 // 2 is 3.0): wrap the result in int(...)."
    )


def yes_no_message(wrong: list[Probe], every: list[Probe], hints: dict[str, str]) -> str:
    """What a cell's self-check says of its yes-or-no answers when some are wrong, after the
    numbers beside them (which decide them) are right: never which, and how many only when
    the count cannot point at them: not for answers the student writes as variables (each
    flips with one edit), not when it would be all of them (1 of 1, n of n)."""
    asked = [p for p in every if p.kind == "yes_no"]
    deciding = [p.label for p in every if p.kind != "yes_no"]
    decides = hints.get(YES_NO) or "Go back to what decides each in the text above."
    if len(asked) == 1 and not deciding:  # a package judge's verdict: the cell's own words
        return f"Not yet: {decides}"
    counted = len(wrong) < len(asked) and not all(p.label.isidentifier() for p in asked)
    count = (
        f"{len(wrong)} of the {len(asked)} yes-or-no answers here "
        f"{'is' if len(wrong) == 1 else 'are'} not right yet"
        if counted
        else "not every yes-or-no answer here is right yet"
    )
    beside = (
        f", though {', '.join(deciding)} {'is' if len(deciding) == 1 else 'are'} right"
        if deciding
        else ""
    )
    which = "which" if counted else "which or how many"
    return (
        f"Not yet: {count}{beside} (the self-check does not say {which}: flipping one would "
        f"find it without working it out). {decides}"
    )


def _keystream(salt: str, answers: list[str], size: int) -> bytes:
    stream, block = b"", 0
    while len(stream) < size:
        stream += hashlib.sha256(
            f"{salt}\n{block}\n".encode() + "\n".join(answers).encode()
        ).digest()
        block += 1
    return stream[:size]


def seal(words: str, salt: str, answers: list[str]) -> str:
    """A hint's words, readable only with the answers of its mistake (`answers`: their normal
    forms, one per probe): the setup cell's line of stamps shows no hint in plain text, and a
    student whose answers are the mistake's reads its words (walk item 33)."""
    data = words.encode()
    return base64.b64encode(
        bytes(a ^ b for a, b in zip(data, _keystream(salt, answers, len(data))))
    ).decode()


def unseal(sealed: str, salt: str, answers: list[str]) -> str:
    """The words `seal` sealed, given the same answers."""
    data = base64.b64decode(sealed)
    return bytes(a ^ b for a, b in zip(data, _keystream(salt, answers, len(data)))).decode(
        errors="replace"
    )


def words_digest(words: str) -> str:
    """A hint's words as a stamp names them without showing them, to compare."""
    return hashlib.sha256(f"hint\n{words}".encode()).hexdigest()[:24]
