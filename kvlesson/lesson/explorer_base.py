"""What every explorer is: sliders, a sentence and a figure that follow them.

A subclass (`explorers`, `real_server_explorer`, `traffic_explorer`) says how to compute the
view of a setting and how to put it on its chart; this base keeps what each setting showed,
computes the next settings ahead (`lookahead`), draws only what moves (`blitting`), says
the new sentence in a live region (`live_caption`), and, stored in a notebook, leaves a still
of its first setting with the recipe to make it again (`recipe`), from which the course's
website works out its frames (`frames`).
"""

from __future__ import annotations

import functools
import html
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from kvlesson.lesson import recipe
from kvlesson.lesson.blitting import Chart, Redraw
from kvlesson.lesson.figures import COLUMN_PX, img_html
from kvlesson.lesson.live_caption import Caption
from kvlesson.lesson.lookahead import Lookahead, next_settings
from kvlesson.lesson.slider import Slider

SLIDER_WIDTH = f"{COLUMN_PX}px"  # as wide as the charts
KEPT = 128  # settings whose caption and picture an explorer keeps (~50 KB of PNG each)
RECIPE = "kvlesson_explorer"  # the output metadata that holds how the explorer was made
STILL_NOTE = (
    "A still of this explorer at {setting}. Its sliders need Python running: open "
    "the notebook in JupyterLab and run this cell."
)


def slider(description: str, options, value) -> Slider:
    """A slider over `options` (values, or (label, value) pairs) as wide as the charts, its
    description in full on its left."""
    return Slider(
        description, options, value, layout=w.Layout(width=SLIDER_WIDTH, max_width="100%")
    )


def share_slider(share: int) -> Slider:
    """The memory share (vLLM's gpu_memory_utilization) in whole percents."""
    return slider("memory share (%)", range(1, 101), share)


def html_caption(caption: str) -> str:
    """A caption as the explorer shows it: escaped, Markdown bold as <b>, in a paragraph."""
    return "<p>" + re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(caption)) + "</p>"


@dataclass(frozen=True)
class Shown:
    """What one setting showed: its view, its caption (HTML), its picture (PNG) and the
    picture's alt text."""

    view: Any
    caption: str
    png: bytes
    alt: str


class Explorer:
    """Sliders, a sentence and a figure, stacked; shown by display().

    A subclass computes the view of a setting, the controls' values (`compute`), and puts
    a view on the figure, returning the caption (`show`). What each setting showed is kept,
    the last KEPT settings: a move back to a setting seen before (a student goes back and
    forth to compare) puts the kept view back on the figure and shows the kept caption and
    PNG again, without computing or drawing anything. The next settings along the slider
    just moved are computed ahead (see `lookahead`), unless the explorer is `quiet` (its
    frames worked out one after another, `frames`).
    """

    recipe: dict | None = None  # how it was made (see __init_subclass__)

    def __init_subclass__(cls, **kwargs):
        """Every explorer remembers the arguments it was made with, as a recipe (JSON), for
        a page without a kernel to make it again; arguments JSON cannot carry leave none."""
        super().__init_subclass__(**kwargs)
        init = cls.__init__

        @functools.wraps(init)
        def remembered(self, *args, **kwargs):
            args = tuple(tuple(a) if isinstance(a, Iterator) else a for a in args)
            kwargs = {k: tuple(v) if isinstance(v, Iterator) else v for k, v in kwargs.items()}
            if "recipe" not in self.__dict__:  # the outermost class's own arguments
                try:
                    self.recipe = recipe.recipe(cls, init, args, kwargs)
                except recipe.Unwritable:
                    self.recipe = None
            init(self, *args, **kwargs)

        cls.__init__ = remembered

    def __init__(self, sliders: list[w.Widget], chart: Chart):
        self.chart = chart
        self.controls = sliders
        self.drawing = Redraw(chart.figure, chart.moving)
        self.shown: OrderedDict[tuple, Shown] = OrderedDict()
        self.lookahead = Lookahead(self.compute)
        self.quiet = False
        # an <img> with its alt text, shown at its own size (a box would stretch it, and blur it)
        self.image = w.HTML(layout=w.Layout(align_self="flex-start", max_width="100%"))
        self.caption = Caption()
        self.now: Shown | None = None
        self.box = w.VBox([*sliders, self.caption, self.image])
        self.box.add_class("kvlesson-explorer")  # its controls' focus ring (slider.CSS)
        for control in sliders:
            control.observe(self._changed, names="value")

    def compute(self, setting: tuple) -> Any:
        """The view of `setting`, the controls' values in order (may run on another thread:
        it reads no control)."""
        raise NotImplementedError

    def show(self, view) -> str:
        """Put `view` on the figure; its caption (Markdown bold allowed)."""
        raise NotImplementedError

    def setting(self) -> tuple:
        """The controls' values: all that decides what the explorer shows."""
        return tuple(control.value for control in self.controls)

    def refresh(self):
        """Show the controls' setting (kept, or computed and drawn); its view."""
        setting = self.setting()
        kept = self.shown.get(setting)
        if kept is None:
            view = self.lookahead.view(setting)
            caption = html_caption(self.show(view))
            kept = Shown(view, caption, self.drawing.png(), self.chart.alt)
            self.shown[setting] = kept
            while len(self.shown) > KEPT:
                self.shown.popitem(last=False)
        else:
            self.show(kept.view)  # the figure's artists follow what is shown
            self.shown.move_to_end(setting)
        self.now = kept
        self.caption.value, self.image.value = kept.caption, img_html(kept.png, kept.alt)
        return kept.view

    @property
    def png(self) -> bytes:
        """The picture shown now, as PNG bytes."""
        return self.now.png

    @property
    def alt(self) -> str:
        """The alt text of the picture shown now."""
        return self.now.alt

    def setting_words(self) -> str:
        """The controls as a student reads them: 'memory share (%) 90, cap 64'."""
        return ", ".join(
            f"{control.description} {words(control)}"
            for control in self.controls
            if control.description
        )

    def _changed(self, change) -> None:
        self.refresh()
        if not self.quiet:
            self.lookahead.ahead(
                s for s in next_settings(self.controls, change.owner) if s not in self.shown
            )

    def _repr_mimebundle_(self, **kwargs):
        # The widget view for a live kernel. A stored notebook (and the course's website)
        # keeps no widget state, so no random model id: it shows a still of the first
        # setting, its caption and its picture with its alt text, and how to make it live;
        # the output's metadata holds the recipe to make it again (the website's frames).
        bundle = self.box._repr_mimebundle_(**kwargs)
        note = STILL_NOTE.format(setting=self.setting_words())
        bundle["text/html"] = (
            f'<div class="kvlesson-still"><p><em>{html.escape(note)}</em></p>'
            f"{self.caption.value}{self.image.value}</div>"
        )
        bundle["text/plain"] = f"{type(self).__name__}. {note} The picture: {self.alt}"
        return bundle, ({RECIPE: self.recipe} if self.recipe is not None else {})


def words(control: w.Widget) -> str:
    """A control's value as it shows it: a slider's label, a dropdown's choice, a text's
    length."""
    if isinstance(control, Slider):
        return control.labels[control.index]
    if isinstance(control, w.Textarea):
        return f"({len(control.value):,} characters)" if control.value else "(empty)"
    return str(control.value)
