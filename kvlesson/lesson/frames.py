"""An explorer's frames: what it shows at every stop of each slider, worked out ahead.

The course's website has no kernel to compute a view when a slider moves, so its build
walks each slider of an explorer, from the notebook's setting, through every value it
offers, the other sliders staying at the notebook's values, and keeps what the explorer
showed at each stop: the caption, the picture and its alt text, the same an explorer in
JupyterLab shows there (it is the same explorer, made again from its recipe). A page then
moves one slider at a time from the notebook's setting. The controls that are not sliders
(notebook 5's card, model and precisions) stay as the notebook set them, and are said in
words. A frame is keyed by the sliders' positions (indexes), in the sliders' order.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.lesson.explorer_base import Explorer, Shown, words
from kvlesson.lesson.slider import Slider


@dataclass(frozen=True)
class Track:
    """One slider as a page shows it: its words, the labels of its stops, where it starts."""

    description: str
    labels: tuple[str, ...]
    home: int


@dataclass(frozen=True)
class Frames:
    """An explorer's sliders, the other controls in words, and what each stop shows."""

    tracks: tuple[Track, ...]
    fixed: str
    shown: dict[tuple[int, ...], Shown]

    @property
    def home(self) -> tuple[int, ...]:
        """The notebook's setting, as the sliders' positions."""
        return tuple(track.home for track in self.tracks)


def sliders_of(explorer: Explorer) -> list[Slider]:
    """The explorer's sliders, in the order a student meets them."""
    return [control for control in explorer.controls if isinstance(control, Slider)]


def frames(explorer: Explorer) -> Frames:
    """Walk each slider of `explorer` through every stop from the notebook's setting (the
    others at theirs) and keep what it shows; the explorer is left at its setting."""
    sliders = sliders_of(explorer)
    home = [s.index for s in sliders]
    shown: dict[tuple[int, ...], Shown] = {}
    explorer.quiet = True  # one stop after another: nothing to compute ahead
    try:
        for moving, start in zip(sliders, home):
            for index in range(len(moving.labels)):
                moving.index = index  # the value follows, and the explorer redraws
                shown[tuple(s.index for s in sliders)] = explorer.now
            moving.index = start
    finally:
        explorer.quiet = False
    fixed = ", ".join(
        f"{control.description} {words(control)}"
        for control in explorer.controls
        if not isinstance(control, Slider) and control.description and control.value != ""
    )
    tracks = tuple(Track(s.description, tuple(s.labels), i) for s, i in zip(sliders, home))
    return Frames(tracks, fixed, shown)
