"""How the lesson quotes numbers: 53.9 GB, 25,720 blocks, 8.0 ms, 8.2%.

One place for the rounding, so the notebooks, `kvlesson numbers` and the
tests all write a number the same way; a `Figure` is one quoted number, and
`Say` a sentence made of them.
"""

from __future__ import annotations

from dataclasses import dataclass


def gb(nbytes: float, places: int = 1) -> str:
    """Bytes as gigabytes (billions of bytes): gb(53_939_477_504) == '53.9 GB'."""
    return f"{nbytes / 1e9:,.{places}f} GB"


def count(n: float) -> str:
    """A whole count with thousands separators: count(25720) == '25,720'."""
    return f"{round(n):,}"


def ms(seconds: float, places: int = 1) -> str:
    """Seconds as milliseconds: ms(0.0080) == '8.0 ms'."""
    return f"{seconds * 1000:,.{places}f} ms"


def pct(fraction: float, places: int = 1) -> str:
    """A fraction as a percent: pct(0.082) == '8.2%'."""
    return f"{fraction * 100:.{places}f}%"


def one(x: float, places: int = 1) -> str:
    """A plain number to `places` decimals: one(194.93) == '194.9'."""
    return f"{x:,.{places}f}"


class Say(str):
    """A sentence made from computed numbers, shown as Markdown in a notebook.

    Its plain-text form is the sentence itself, so nbval compares the numbers
    in it, and a notebook's prose follows its parameters.
    """

    def _repr_markdown_(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Figure:
    """One quoted number: its value, the lesson's way of writing it, what it is."""

    value: float | int | bool | None
    text: str
    about: str


def listing(numbers: dict[str, Figure], keys: list[str]) -> Say:
    """Some of the figures as a Markdown list, "what it is: how the lesson writes it"."""
    return Say("\n".join(f"* {numbers[key].about}: **{numbers[key].text}**" for key in keys))
