"""An explorer's figure, redrawn fast on every slider move.

A slider moves a few artists (bars, a line, a ring, a title); the axes, ticks,
grid and legend stay where they are, because an explorer keeps its axes fixed
across each slider's whole range. So the figure is drawn once without its
moving artists, that picture is kept, and each move pastes it back and draws
only the moving artists over it (blitting, with the Agg canvas's
copy_from_bbox and restore_region). The PNG is written with light zlib
compression: the image goes from the kernel to the browser next door, so a
few more bytes cost less than the time to squeeze them.
"""

from __future__ import annotations

import io
from typing import Protocol, Sequence

from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

DPI = 100  # pixels per inch of an explorer's image: an 8-inch figure is 800 px wide
PNG_COMPRESSION = 1  # zlib level: 1 is the fastest (Pillow's default is 6)


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
        width, height = self.canvas.get_width_height()
        image = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw",
                                 "RGBA", 0, 1)
        buffer = io.BytesIO()
        image.save(buffer, format="png", compress_level=PNG_COMPRESSION)
        return buffer.getvalue()
