"""The kinds of answers the course checks, and their normal forms.

A probe is one answer to check: a variable, or a call of the student's function
on one input. Its kind (a count, a count or None, a number to some places, yes
or no) decides which values are the right kind of answer and the text that is
hashed (in a self-check) or compared with the key (by the grader): the same
text on both sides, so the self-check and the grade cannot disagree. A value
travels from the kernel to the grader in a typed encoding that keeps int, float,
bool, None and str apart.
"""

from __future__ import annotations

import ast
import math
import numbers
import re
import textwrap
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

KINDS = ("count", "count_or_none", "number", "yes_no")
# The verdict's lines are wrapped to this width: nbgrader's Validate dialog cuts every line
# at its Validator.width (90) less an indent of 4 and "...".
SAID_WIDTH = 80


class _Said:
    """How IPython shows a self-check's verdict under a cell: the message first, which starts
    "Not yet:". The self-check's own code (its long stamp of salted hashes) says nothing to
    a student; an error raised by the student's own code is followed, under the message, by
    the lines of the student's code it came through (none for the release's untouched
    `raise NotImplementedError()`, nor for a name not defined yet: the message says it all)."""

    def _render_traceback_(self) -> list[str]:
        said = textwrap.wrap(str(self), SAID_WIDTH, subsequent_indent="  ")
        cause = self.__cause__
        if cause is None or isinstance(cause, (NotImplementedError, NameError)):
            return said
        return [*said, "", *_student_lines(cause)]


_PACKAGE = str(Path(__file__).resolve().parents[2])  # kvlesson/: not the student's code


def _student_lines(error: BaseException) -> list[str]:
    """The traceback of `error` through the student's code only (the package's own frames,
    the self-check's included, are left out), and the error itself."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not str(Path(frame.filename).resolve()).startswith(_PACKAGE)
    ]
    lines = traceback.format_list(frames) + traceback.format_exception_only(error)
    return "".join(lines).rstrip("\n").splitlines()


class NotYet(_Said, AssertionError):
    """A wrong answer, or a check that cannot run yet; the message starts "Not yet:"."""


class WrongKind(_Said, TypeError):
    """An answer of the wrong kind (a str, a float for an int, None from a function)."""


@dataclass(frozen=True)
class Probe:
    """One answer to check: `label` is how the student wrote it ("pool_gb",
    "pool_bytes(23)"), `get` evaluates it; `kind` is one of KINDS; numbers are
    compared after dividing by `scale` and rounding to `places` decimals."""

    label: str
    get: Callable[[], object]
    kind: str
    unit: str = ""
    places: int = 0
    scale: float = 1.0

    @property
    def is_call(self) -> bool:
        return self.label.endswith(")")


def count(label: str, get: Callable[[], object], unit: str) -> Probe:
    """A whole number (an int) of `unit`."""
    return Probe(label, get, "count", unit)


def count_or_none(label: str, get: Callable[[], object], unit: str) -> Probe:
    """A whole number of `unit`, or None."""
    return Probe(label, get, "count_or_none", unit)


def number(
    label: str, get: Callable[[], object], unit: str, places: int, scale: float = 1.0
) -> Probe:
    """A number of `unit` (bytes / scale), checked to `places` decimals."""
    return Probe(label, get, "number", unit, places, scale)


def yes_no(label: str, get: Callable[[], object]) -> Probe:
    """True or False."""
    return Probe(label, get, "yes_no")


def evaluate(probe: Probe) -> object:
    """The probe's value; a student's error becomes a NotYet that names the probe."""
    try:
        return probe.get()
    except NameError as error:
        raise NotYet(
            f"Not yet: {probe.label} cannot be evaluated ({error}): run your answer "
            f"cell above first."
        ) from error
    except NotImplementedError as error:
        raise NotYet(
            f"Not yet: {probe.label} is not written yet: replace "
            f"`raise NotImplementedError()` in the answer cell with your code."
        ) from error
    except Exception as error:
        raise NotYet(
            f"Not yet: {probe.label} raised {type(error).__name__}: {error} "
            f"(the lines below show where, in your code)."
        ) from error


def _kind_of(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) < 60 else text[:57] + '...'}"


def normal(probe: Probe, value: object) -> str:
    """The answer as the text that is hashed and compared; WrongKind if it is not
    the kind of answer asked for, NotYet if it is not finite."""
    name, unit = probe.label, probe.unit
    if value is None and probe.kind == "count_or_none":
        return "none"
    if value is None and probe.is_call:
        function = name.split("(")[0]
        raise WrongKind(
            f"Not yet: {name} returned None. The function {function} should end "
            f"with a `return` line that gives the answer (a function without one "
            f"returns None)."
        )
    if probe.kind == "yes_no":
        if type(value).__name__ not in ("bool", "bool_"):
            raise WrongKind(
                f"Not yet: {name} should be True or False (no quotes), not the {_kind_of(value)}."
            )
        return f"bool:{bool(value)}"
    is_bool = type(value).__name__ in ("bool", "bool_")
    of = f" of {unit}" if unit else ""
    if is_bool or not isinstance(value, numbers.Real):
        if probe.is_call:
            raise WrongKind(f"Not yet: {name} should give a number{of}, not the {_kind_of(value)}.")
        whole = "" if probe.kind == "number" else "whole "
        written = _number_in(value)
        alone = f": {name} = {written}" if written is not None else ""
        raise WrongKind(
            f"Not yet: {name} should be a {whole}number{of}, not the {_kind_of(value)}. "
            f"Write the number alone, without quotes or units{alone}"
        )
    if probe.kind == "number":
        if not math.isfinite(value):
            raise NotYet(f"Not yet: {name} should be a finite number{of}, got {value!r}.")
        return f"num:{round(float(value) / probe.scale, probe.places) + 0.0:.{probe.places}f}"
    if not isinstance(value, numbers.Integral):
        raise WrongKind(
            f"Not yet: {name} should be a whole number{of}, an int, not the "
            f"{_kind_of(value)}. Use whole-number arithmetic (//) or int(...)."
        )
    return f"int:{int(value)}"


def _number_in(value: object) -> str | None:
    """The number a text answer holds ("53.9 GB" holds 53.9), as written there: what the
    student meant, so a message may show it back; None when it holds none or several."""
    found = re.findall(r"-?\d[\d,_]*(?:\.\d+)?", value) if isinstance(value, str) else []
    return found[0].replace(",", "").replace("_", "") if len(found) == 1 else None


def whole_float(probe: Probe, value: object) -> int | None:
    """A whole number asked for and a float given that is whole (2048.0): that int."""
    if probe.kind in ("count", "count_or_none") and isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def float_for_count(probe: Probe, value: object) -> bool:
    """A whole number asked for, and a float given (whole or not)."""
    return probe.kind in ("count", "count_or_none") and isinstance(value, float)


def from_key(entry: dict) -> Probe:
    """A probe as a key holds it (label, kind, unit, places, scale), to judge a recorded
    value with: it evaluates nothing."""
    return Probe(
        entry["label"], lambda: None, entry["kind"], entry["unit"], entry["places"], entry["scale"]
    )


def answer_text(probe: Probe, encoded: object) -> str:
    """A recorded answer (`encode`'s output) as the grade tells answers apart: its normal
    form when it is the kind of answer asked for, else what it is instead: the kind given
    ("kind:float") or the error raised ("error:NameError: name 'x' is not defined"). The
    same text means the same answer: the right one, or the one a known mistake gives."""
    if not isinstance(encoded, dict):
        return "kind:unreadable"
    if encoded.get("t") == "error":
        return f"error:{encoded.get('type')}: {encoded.get('message', '')}"
    try:
        return normal(probe, decode(encoded))
    except (WrongKind, NotYet, TypeError, ValueError, KeyError, OverflowError):
        return f"kind:{encoded.get('type') or encoded.get('t')}"


def error_of(error: BaseException) -> dict:
    """An exception raised while an answer was worked out, encoded as `encode` would."""
    return {"t": "error", "type": type(error).__name__, "message": str(error)[:200]}


def encode(value: object) -> dict:
    """A value with its exact type, for the record: int, float, bool, None and str
    stay apart; anything else is kept as its type and a short repr."""
    kind = type(value).__name__
    if value is None:
        return {"t": "none"}
    if kind in ("bool", "bool_"):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, numbers.Integral):
        return {"t": "int", "v": int(value), "type": kind}
    if isinstance(value, numbers.Real):
        return {
            "t": "float",
            "v": float(value) if math.isfinite(value) else repr(float(value)),
            "type": kind,
        }
    if isinstance(value, str):
        return {"t": "str", "v": value[:200]}
    return {"t": "other", "type": kind, "repr": repr(value)[:200]}


def decode(encoded: dict) -> object:
    """The plain Python value of `encode`'s output (what `normal` accepts); an error or
    another object comes back as the encoding itself, which `normal` rejects."""
    kind = encoded.get("t")
    if kind == "none":
        return None
    if kind == "bool":
        return bool(encoded["v"])
    if kind == "int":
        return int(encoded["v"])
    if kind == "float":
        return float(encoded["v"])
    if kind == "str":
        return str(encoded["v"])
    return encoded


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def mentioned(source: str, names: set[str] | tuple[str, ...]) -> list[str]:
    """Which of `names` the code `source` uses, as a name or an attribute (any alias of a
    function still names it where it is imported or looked up)."""
    used = set()
    for node in ast.walk(_tree(source) or ast.Module(body=[], type_ignores=[])):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias):
            used.add(node.name.rsplit(".", 1)[-1])
    return sorted(used & set(names))


def assigns(source: str, name: str) -> bool:
    """Whether the code `source` binds `name` at its top level."""
    tree = _tree(source)
    return tree is not None and any(
        isinstance(node, ast.Name) and node.id == name
        for statement in tree.body
        for target in getattr(statement, "targets", [])
        for node in ast.walk(target)
    )
