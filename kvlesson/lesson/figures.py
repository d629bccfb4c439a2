"""A figure as the course shows it: a picture, and the same numbers in words for whoever
cannot see it.

Every chart the course draws comes back as a `Drawn`: the matplotlib figure and its alt text,
written by the code that drew it from the same numbers. A notebook shows it as an HTML
`<img>` with that alt text (JupyterLab's own PNG renderer writes no alt), the PNG itself, and
the alt text as its plain-text form (what nbval compares, and a screen reader of a stored
notebook reads).

The rules every figure keeps (tests/lesson/test_figures_accessible.py holds them):

* no meaning in colour alone: each part, line or bar also has a hatch, a line style, a marker
  or a label on it;
* lines, bar edges and markers at least 3:1 against the white page (WCAG 2.1, 1.4.11), and
  text at least 4.5:1 (1.4.3): the Okabe-Ito palette, bars edged in black, text in black or
  in a darker vermilion;
* text at least MIN_TEXT_PX pixels high as shown: a figure at most COLUMN_PX wide is shown
  at its own size (the website's text column; JupyterLab's is wider), so every text is at
  least MIN_TEXT_PT points at DPI.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass

from matplotlib.figure import Figure

# Okabe & Ito, "Color Universal Design" (2008): a palette for all colour visions.
BLUE, ORANGE, GREEN, SKY, VERMILION, PURPLE, YELLOW = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#56B4E9",
    "#D55E00",
    "#CC79A7",
    "#F0E442",
)
GREY = "#999999"  # a fill only (2.8:1 on white): always with a hatch, an edge and a label
DARK_GREY = "#595959"  # a line that must be seen: 7:1 on white
WARNING = "#A33F00"  # vermilion darkened for text: 6.2:1 on white (vermilion itself is 3.9:1)
EDGE = "black"  # every bar's edge and hatch: the shape reads whatever its fill

DPI = 100  # pixels per inch of every PNG the course draws
COLUMN_PX = 688  # the website's text column (sphinx-book-theme at 1280 px): shown unscaled
WIDTH_IN = COLUMN_PX / DPI  # the widest figure: 6.88 inches
MIN_TEXT_PX = 12  # the smallest text as shown
MIN_TEXT_PT = 9  # 12.5 px at DPI
LABEL_BOX = dict(facecolor="white", edgecolor="none", pad=1.5)  # a label over a hatch or fill


def png(figure: Figure) -> bytes:
    """The figure as PNG bytes at DPI, on white, the same bytes at every run."""
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI, facecolor="white", metadata={"Software": None})
    return out.getvalue()


def img_html(picture: bytes, alt: str) -> str:
    """An HTML <img> of PNG bytes, inline (no file, no request), with its alt text."""
    data = base64.b64encode(picture).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


@dataclass(frozen=True)
class Drawn:
    """A figure and its alt text: the chart's numbers in words, written where it was drawn."""

    figure: Figure
    alt: str

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        picture = png(self.figure)
        return {
            "text/html": img_html(picture, self.alt),
            "image/png": base64.b64encode(picture).decode(),
            "text/plain": self.alt,
        }

    def __repr__(self) -> str:
        return self.alt


def luminance(colour: tuple[float, ...]) -> float:
    """A colour's relative luminance (WCAG 2.1's definition), from RGB in 0..1."""

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in colour[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one: tuple[float, ...], other: tuple[float, ...] = (1.0, 1.0, 1.0)) -> float:
    """WCAG 2.1's contrast ratio of two colours (RGB in 0..1), by default against white."""
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def series(values: list[str]) -> str:
    """Words in a row: 'a', 'a and b', 'a, b and c'."""
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]
