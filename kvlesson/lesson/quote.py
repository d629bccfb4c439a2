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


def a(n: float) -> str:
    """The article a number spoken aloud takes: 'an' for eight, eleven, eighteen, eighty...
    (an 80% share, an 8,000-token chat), 'a' for the rest (a 90% share)."""
    digits = str(int(abs(n)))
    vowel = digits[0] == "8" or (digits[:2] in ("11", "18") and len(digits) % 3 == 2)
    return "an" if vowel else "a"


def share(percent: int) -> str:
    """'a 90% share', 'an 80% share'."""
    return f"{a(percent)} {percent}% share"


def average(x: float, noun: str, places: int = 1) -> str:
    """A mean count and its noun: '1 chat' when it is exactly one, else '7.9 chats'."""
    text = one(x, places)
    return f"{text} {noun}" if text.rstrip("0").rstrip(".") != "1" else f"1 {noun.rstrip('s')}"


def duration(seconds: float) -> str:
    """A gap or a wait in the unit that reads best: '26.4 ms', '8.2 s', '12.6 min'."""
    if seconds < 1:
        return ms(seconds)
    if seconds < 120:
        return f"{seconds:,.1f} s"
    return f"{seconds / 60:,.1f} min"


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


def figures(*rows: tuple[str, float | int | bool | None, str, str]) -> dict[str, Figure]:
    """Figures by name, from rows of (name, value, how the lesson writes it, what it is)."""
    return {name: Figure(value, text, about) for name, value, text, about in rows}


def listing(numbers: dict[str, Figure], keys: list[str]) -> Say:
    """Some of the figures as a Markdown list, "what it is: how the lesson writes it"."""
    return Say("\n".join(f"* {numbers[key].about}: **{numbers[key].text}**" for key in keys))
