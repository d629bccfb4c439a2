"""Checks on what a caller passes in.

Every public function of the course checks its arguments here first, so a
wrong share or a negative token count stops with a message that names the
parameter and the allowed range, not with a traceback from deep inside or,
worse, with a wrong number.
"""

from __future__ import annotations

import math
import numbers


def whole(name: str, value: object, low: int, high: int | None = None) -> int:
    """`value` as an int, if it is a whole number in `low..high` (no upper bound if None).

    Floats that are whole (90.0) are accepted: a slider or a YAML file may hand
    them over. Booleans, strings, NaN and 90.5 are refused.
    """
    if type(value) is int and value >= low and (high is None or value <= high):
        return value  # the common case, without the checks below (a search calls this often)
    allowed = f"{low}..{high}" if high is not None else f"{low} or more"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a whole number ({allowed}), not {type(value).__name__} {value!r}"
        )
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        real = float(value)
        if math.isnan(real) or math.isinf(real) or real != int(real):
            raise ValueError(f"{name} must be a whole number ({allowed}), got {value!r}")
        number = int(real)
    if number < low or (high is not None and number > high):
        raise ValueError(f"{name} must be in {allowed}, got {value!r}")
    return number


def positive(name: str, value: object, *, zero_ok: bool = False) -> float:
    """`value` as a float, if it is a finite number above zero (or zero, if `zero_ok`)."""
    if type(value) in (int, float) and (0 < value < math.inf or (zero_ok and value == 0)):
        return float(value)  # the common case, without the checks below
    bound = ">= 0" if zero_ok else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number {bound}, not {type(value).__name__} {value!r}")
    real = float(value)
    if math.isnan(real) or math.isinf(real):
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    if real < 0 or (real == 0 and not zero_ok):
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return real


def flag(name: str, value: object) -> bool:
    """`value` if it is True or False (not 0, 1 or "yes")."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__} {value!r}")
    return value


def of_type(name: str, value: object, kind: type) -> object:
    """`value` if it is a `kind`, else a TypeError naming what was expected."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__}, not {type(value).__name__} {value!r}")
    return value


def one_of(name: str, value: object, allowed: tuple[str, ...]) -> str:
    """`value` if it is one of the `allowed` words, else an error that lists them."""
    words = ", ".join(repr(word) for word in allowed)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {words}, not {type(value).__name__} {value!r}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {words}, got {value!r}")
    return value
