"""An explorer's figure, redrawn fast on every slider move.

A slider moves a few artists (bars, a line, a ring, a title); the axes, ticks,
grid and legend stay where they are, because an explorer keeps its axes fixed
across each slider's whole range. So the figure is drawn once without its
moving artists, that picture is kept, and each move pastes it back and draws
only the moving artists over it (blitting, with the Agg canvas's
copy_from_bbox and restore_region).

The PNG is written here, the quick way: a figure on its white face is opaque,
so its pixels go as RGB (three bytes a pixel, not four: less to compress, to
send and for the browser to decode), every row unfiltered (no time spent
choosing a filter for each row) and compressed lightly: the image goes from
the kernel to the browser next door, so a few more bytes cost less than the
time to squeeze them. On the explorers' figures this takes a third to a half
of the time Pillow takes at the same zlib level (benchmarks/bench_explorers.py
times a whole move). The pixels are exactly the canvas's
(tests/lesson/test_blitting.py decodes them).
"""

from __future__ import annotations

import struct
import zlib
from typing import Protocol, Sequence

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 100  # pixels per inch of an explorer's image: an 8-inch figure is 800 px wide
PNG_COMPRESSION = 1  # zlib level: 1 is the fastest (Pillow's default is 6)
# The PNG specification (W3C, third edition, 2025): the file's first 8 bytes (section 5.2),
# the colour types truecolour and truecolour with alpha (table 11.1), filter type None (9.2).
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RGB, RGBA = 2, 6
NO_FILTER = 0


class Chart(Protocol):
    """What an explorer redraws: a figure, and the artists its `update` changes."""

    figure: Figure
    moving: list[Artist]


class Redraw:
    """Draws `figure` to PNG bytes, its `moving` artists over a background drawn once.

    The figure's layout is computed once here and kept: the moving artists
    must fit where the layout put them (fixed limits, texts no longer than
    the ones they start with, or with room left for them).
    """

    def __init__(self, figure: Figure, moving: Sequence[Artist], dpi: int = DPI):
        self.figure = figure
        self.moving = sorted(moving, key=lambda artist: artist.get_zorder())
        figure.set_dpi(dpi)
        self.canvas = FigureCanvasAgg(figure)
        figure.draw_without_rendering()  # run the layout engine once, with every artist
        figure.set_layout_engine(None)
        for artist in self.moving:
            artist.set_animated(True)  # left out of the background
        self.canvas.draw()
        self.background = self.canvas.copy_from_bbox(figure.bbox)

    def png(self) -> bytes:
        """The figure as it now stands: the kept background, then the moving artists."""
        self.canvas.restore_region(self.background)
        for artist in self.moving:
            self.figure.draw_artist(artist)
        return png_file(np.asarray(self.canvas.buffer_rgba()))


def png_file(rgba: np.ndarray) -> bytes:
    """Pixels (rows of RGBA bytes) as a PNG file: RGB when every pixel is opaque, rows
    unfiltered, compressed at PNG_COMPRESSION."""
    height, width, _ = rgba.shape
    opaque = bool((rgba[..., 3] == 255).all())
    pixels = rgba[..., :3] if opaque else rgba
    rows = np.empty((height, 1 + width * pixels.shape[2]), np.uint8)
    rows[:, 0] = NO_FILTER  # each row starts with its filter type
    rows[:, 1:] = pixels.reshape(height, -1)
    header = struct.pack(
        ">IIBBBBB", width, height, 8, RGB if opaque else RGBA, 0, 0, 0
    )  # 8 bits a channel; deflate, adaptive filters, no interlace
    return (
        PNG_SIGNATURE
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, PNG_COMPRESSION))
        + chunk(b"IEND", b"")
    )


def chunk(kind: bytes, data: bytes) -> bytes:
    """A PNG chunk: its length, its type, the data, and the CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
