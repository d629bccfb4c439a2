"""The numbers a notebook shows a reader around an exercise: what a student could copy.

An answer must not be in view of its question. These functions read what a reader sees of a
cell (its source and everything it printed or displayed) and pick out every number in it,
whole or not: the cells above an exercise, and the cells of its own section below it (a page
that shows the whole notebook shows them side by side). The build's probe search
(`kvlesson.authoring.probe_search`) adds no probe whose answer is one of them, and
tests/authoring/test_shown_numbers.py holds every probe of every notebook to it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from kvlesson.authoring.stamp_places import LOADER
from kvlesson.grading.course.notebooks import is_answer_cell, is_test_cell

# a number as a notebook writes it: 131,072 or 0.45 or 12000 (not part of a name or a version)
NUMBER = re.compile(
    r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\.?\d)|(?<![\w.,])-?\d+(?:\.\d+)?(?!\.?\d)"
)
HEADING = re.compile(r"^(#{1,6}) ", re.M)


# what a reader meets of an HTML element besides its text: read aloud or shown on hover
READ_ATTRIBUTES = ("alt", "title", "aria-label", "aria-valuetext")


class _Seen(HTMLParser):
    """The text of an HTML output as a reader meets it: the words on the page and the
    attributes a screen reader says (an image's alt text), never the markup itself (an
    image's base64 data, a link's address, a style), whose digits are no one's number."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._hidden += 1
        self.parts += [value for name, value in attrs if name in READ_ATTRIBUTES and value]

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden:
            self.parts.append(data)


def html_text(html: str) -> str:
    """What a reader sees and hears of an HTML output (its words and alt texts)."""
    seen = _Seen()
    seen.feed(html)
    seen.close()
    return "\n".join(seen.parts)


def cell_text(cell) -> str:
    """What a reader sees of a cell: its source and everything it printed or displayed
    (not the setup cell's line of salted hashes, whose digits are no one's number, nor the
    markup of an HTML output: an embedded picture's base64 is not a number on the page)."""
    parts = [line for line in cell.source.splitlines() if not line.startswith(LOADER)]
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        parts.append(output.get("text", ""))
        parts += [data.get("text/plain", ""), data.get("text/markdown", "")]
        parts.append(html_text(data.get("text/html", "")))
    return "\n".join(parts)


def numbers_in(text: str) -> set[float]:
    """Every number of a text, whole or not (51 chats is as copyable as 53.9 GB)."""
    return {float(match.replace(",", "")) for match in NUMBER.findall(text)}


def _heading_level(cell) -> int | None:
    """The level of the first heading a markdown cell opens (1 for "#"), if any."""
    if cell.cell_type != "markdown":
        return None
    found = HEADING.search(cell.source)
    return len(found.group(1)) if found else None


def _seen(cell) -> bool:
    """Whether a reader of the release sees this cell's numbers: not a test cell (a
    self-check prints no answer), not an answer cell (released without the solution and
    its output)."""
    return not is_test_cell(cell) and not is_answer_cell(cell)


def numbers_around(nb, index: int, above: bool = True, below: bool = True) -> set[float]:
    """The numbers a reader sees around the exercise whose test cell is at `index`: every
    cell above it, and the cells below it up to the next heading of its section's level or
    higher (the same section)."""
    found: set[float] = set()
    level = 6
    for cell in nb.cells[:index]:
        level = _heading_level(cell) or level
        if above and _seen(cell):
            found |= numbers_in(cell_text(cell))
    if below:
        for cell in nb.cells[index + 1 :]:
            heading = _heading_level(cell)
            if heading is not None and heading <= level:
                break
            if _seen(cell):
                found |= numbers_in(cell_text(cell))
    return found


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
