"""The numbers a notebook shows a reader: what a student could copy instead of working out.

A self-check's answer must not be printed above its exercise. These functions read what a
reader sees of a cell (its source and everything it printed or displayed) and pick out the
numbers that could only be copied, not met by chance; the build's probe search
(`kvlesson.grading.build.probe_search`) adds no visible probe whose answer is one of them, and
tests/grading/build/test_shown_numbers.py holds every notebook to it.
"""

from __future__ import annotations

import re

# a number as a notebook writes it: 131,072 or 0.45 or 12000 (not part of a name or a version)
NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.,])-?\d+(?:\.\d+)?")
SMALL = 100  # whole numbers up to this (2 requests, 16 tokens, 100 percent) are everywhere


def cell_text(cell) -> str:
    """What a reader sees of a cell: its source and everything it printed or displayed."""
    parts = [cell.source]
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        for mime in ("text/plain", "text/markdown", "text/html"):
            parts.append(output.get("data", {}).get(mime, ""))
    return "\n".join(parts)


def numbers_in(text: str) -> set[float]:
    """The numbers of a text that could only be copied, not met by chance: a fraction (0.45,
    4.98) or a whole number above SMALL."""
    values = {float(match.replace(",", "")) for match in NUMBER.findall(text)}
    return {value for value in values if value != int(value) or abs(value) > SMALL}


def copied_as(value: float, kind: str, places: int) -> str | None:
    """The normal form ("int:256", "num:0.450") a student who copied `value` would give for
    an answer of `kind` ("int" or "num", to `places` decimals); None where it cannot be one
    (a fraction for a whole number)."""
    if kind == "int":
        return f"int:{int(value)}" if value == int(value) else None
    return f"num:{round(value, places) + 0.0:.{places}f}"


def gives_away(normal: str, shown: set[float]) -> bool:
    """Whether an answer's normal form ("int:256", "num:0.450") is one of the `shown`
    numbers, in the form a student would copy it (whole, or to the answer's places)."""
    kind, _, text = normal.partition(":")
    if kind not in ("int", "num"):
        return False
    places = len(text.split(".")[1]) if "." in text else 0
    return any(copied_as(value, kind, places) == normal for value in shown)
