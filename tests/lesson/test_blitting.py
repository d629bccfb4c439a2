"""An explorer's PNG, written by the package itself: the same pixels as the canvas, whether
the figure is opaque (written as RGB) or has transparent pixels (written as RGBA)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from kvlesson.lesson.blitting import Redraw, png_file


def decoded(png: bytes) -> tuple[str, np.ndarray]:
    """The PNG as Pillow reads it: its mode and its pixels as RGBA."""
    image = Image.open(io.BytesIO(png))
    image.load()
    return image.mode, np.asarray(image.convert("RGBA"))


def chart(transparent: bool) -> tuple[Figure, list]:
    """A small figure with lines, text and a hatched bar; its face see-through or white."""
    figure = Figure(figsize=(3, 2))
    ax = figure.add_subplot()
    (line,) = ax.plot([0, 1, 2], [2, 0, 1], color="#0072B2")
    bar = ax.barh(0.5, 1.2, hatch="xx", color="none", edgecolor="#D55E00")[0]
    title = ax.set_title("a moving title")
    if transparent:
        figure.patch.set_alpha(0)
        ax.patch.set_alpha(0.3)
    return figure, [line, bar, title]


@pytest.mark.parametrize("transparent, mode", [(False, "RGB"), (True, "RGBA")])
def test_the_png_holds_the_canvas_pixels(transparent, mode):
    figure, moving = chart(transparent)
    drawing = Redraw(figure, moving)
    for step in range(3):  # the first picture, and after moves
        moving[0].set_ydata([step, 2 - step, 1])
        moving[2].set_text(f"step {step}")
        got_mode, pixels = decoded(drawing.png())
        canvas = np.asarray(drawing.canvas.buffer_rgba())
        assert got_mode == mode
        assert pixels.shape == canvas.shape
        assert np.array_equal(pixels, canvas)
    assert (canvas[..., 3] < 255).any() == transparent


@pytest.mark.parametrize("height, width", [(1, 1), (3, 7), (64, 5)])
def test_any_pixels_round_trip(height, width):
    rng = np.random.default_rng(height * width)
    pixels = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    assert np.array_equal(decoded(png_file(pixels))[1], pixels)
    pixels[..., 3] = 255
    mode, back = decoded(png_file(pixels))
    assert mode == "RGB" and np.array_equal(back, pixels)
