"""Checking a student's answer before it is compared.

The self-checks in the notebooks compare a hash of the answer, so a wrong
answer only says "not correct". A wrong *kind* of answer deserves better: a
string such as "53.9 GB" where a number is asked for gets a message that
says what to write instead. Each function returns the answer in the form the
hash was made from (a rounded float, an int, a bool).
"""

from __future__ import annotations

import math
import numbers


def _kind(value: object) -> str:
    return f"{type(value).__name__} {value!r}"


def number(value: object, name: str, unit: str, places: int = 1) -> float:
    """A numeric answer in `unit`, rounded to `places` decimals for the check."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} should be a number of {unit}, such as 12.3, not the {_kind(value)}. "
            f"Write the number alone, without quotes or units: {name} = 12.3")
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} should be a finite number of {unit}, got {value!r}")
    return round(float(value), places)


def count(value: object, name: str, unit: str) -> int:
    """A whole-number answer (chats, blocks, steps); 205.0 is accepted as 205."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} should be a whole number of {unit}, such as 12, not the {_kind(value)}. "
            f"Write the number alone, without quotes or units: {name} = 12")
    if isinstance(value, numbers.Integral):
        return int(value)
    if math.isnan(value) or math.isinf(value) or value != int(value):
        raise ValueError(f"{name} should be a whole number of {unit}, got {value!r}")
    return int(value)


def yes_no(value: object, name: str) -> bool:
    """A yes/no answer, given as True or False."""
    if not isinstance(value, bool):
        raise TypeError(
            f"{name} should be True or False (no quotes), not the {_kind(value)}")
    return value
