"""The explorers: sliders that redraw a figure and a sentence.

Each explorer has a pure `*_view` function that computes what to show (a
test can call it without a browser) and a small class that wires sliders to
it and updates one figure in place. The figure's axes are fixed over each
slider's whole range, so a student compares shapes on one scale, and only
the artists that move are drawn again (see `blitting`); a setting seen before is
shown again from what it showed (see `Explorer`). The picture is an HTML `<img>`
whose alt text follows the sliders (the chart writes it with what it draws), and
each slider is a native range input named by its label (see `slider`). Needs the
course extra (ipywidgets, anywidget).
"""

from __future__ import annotations

import html
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable

import ipywidgets as w

from kvlesson.lesson import charts
from kvlesson.lesson.blitting import Chart, Redraw
from kvlesson.lesson.card_sentences import card_tag
from kvlesson.lesson.figures import COLUMN_PX, img_html
from kvlesson.lesson.lookahead import Lookahead, next_settings
from kvlesson.lesson.pause_sentences import PauseView, pause_view
from kvlesson.lesson.sentences import (
    CeilingView,
    FloorView,
    SweepView,
    ceiling_view,
    floor_view,
    sweep_view,
)
from kvlesson.lesson.slider import Slider
from kvlesson.memory.floor import RESERVE_BYTES, ServerWontStart
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.serving.chats import Chat, as_chats, lesson_chats
from kvlesson.serving.settings import LESSON_LONGEST, LESSON_SHARE
from kvlesson.serving.sweep import CAPS
from kvlesson.serving.trace import trace

CEILING_CHOICES = (2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000)
SLIDER_WIDTH = f"{COLUMN_PX}px"  # as wide as the charts
KEPT = 128  # settings whose caption and picture an explorer keeps (~50 KB of PNG each)
STILL_NOTE = (
    "A still of this explorer at {setting}. Its sliders need Python running: open "
    "the notebook in JupyterLab (see the README) and run this cell."
)


def slider(description: str, options, value) -> Slider:
    """A slider over `options` (values, or (label, value) pairs) as wide as the charts, its
    description in full on its left."""
    return Slider(
        description, options, value, layout=w.Layout(width=SLIDER_WIDTH, max_width="100%")
    )


def html_caption(caption: str) -> str:
    """A caption as the explorer shows it: escaped, Markdown bold as <b>, in a paragraph."""
    return "<p>" + re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(caption)) + "</p>"


def share_slider(share: int) -> Slider:
    """The memory share (vLLM's gpu_memory_utilization) in whole percents."""
    return slider("memory share (%)", range(1, 101), share)


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
    just moved are computed ahead (see `lookahead`).
    """

    def __init__(self, sliders: list[w.Widget], chart: Chart):
        self.chart = chart
        self.controls = sliders
        self.drawing = Redraw(chart.figure, chart.moving)
        self.shown: OrderedDict[tuple, Shown] = OrderedDict()
        self.lookahead = Lookahead(self.compute)
        # an <img> with its alt text, shown at its own size (a box would stretch it, and blur it)
        self.image = w.HTML(layout=w.Layout(align_self="flex-start", max_width="100%"))
        self.caption = w.HTML()
        self.now: Shown | None = None
        self.box = w.VBox([*sliders, self.caption, self.image])
        for slider in sliders:
            slider.observe(self._changed, names="value")

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
        self.lookahead.ahead(
            s for s in next_settings(self.controls, change.owner) if s not in self.shown
        )

    def _repr_mimebundle_(self, **kwargs):
        # The widget view for a live kernel. A stored notebook (and the course's website)
        # keeps no widget state, so no random model id: it shows a still of the first
        # setting, its caption and its picture with its alt text, and how to make it live.
        bundle = self.box._repr_mimebundle_(**kwargs)
        note = STILL_NOTE.format(setting=self.setting_words())
        bundle["text/html"] = (
            f'<div class="kvlesson-still"><p><em>{html.escape(note)}</em></p>'
            f"{self.caption.value}{self.image.value}</div>"
        )
        bundle["text/plain"] = f"{type(self).__name__}. {note} The picture: {self.alt}"
        return bundle


def words(control: w.Widget) -> str:
    """A control's value as it shows it: a slider's label, a dropdown's choice, a text's
    length."""
    if isinstance(control, Slider):
        return control.labels[control.index]
    if isinstance(control, w.Textarea):
        return f"({len(control.value):,} characters)" if control.value else "(empty)"
    return str(control.value)


class FloorExplorer(Explorer):
    """A memory-share slider redrawing the memory bar (notebook 1)."""

    def __init__(
        self,
        share: int = LESSON_SHARE,
        gpu: GPU = A100_80GB,
        model: Model = LLAMA_31_8B,
        reserve_bytes: float = RESERVE_BYTES,
    ):
        self.settings = dict(gpu=gpu, model=model, reserve_bytes=reserve_bytes)
        self.share = share_slider(share)
        view = floor_view(share, **self.settings)
        super().__init__([self.share], charts.MemoryBar(view.parts))
        self.refresh()

    def compute(self, setting: tuple) -> FloorView:
        (share,) = setting
        return floor_view(share, **self.settings)

    def show(self, view: FloorView) -> str:
        self.chart.update(view.parts)
        return view.caption


class CeilingExplorer(Explorer):
    """Share and longest-chat sliders: chats that fit, blocks vs reserved (notebook 2)."""

    def __init__(
        self,
        share: int = LESSON_SHARE,
        longest: int = LESSON_LONGEST,
        gpu: GPU = A100_80GB,
        model: Model = LLAMA_31_8B,
        reserve_bytes: float = RESERVE_BYTES,
    ):
        self.settings = dict(gpu=gpu, model=model, reserve_bytes=reserve_bytes)
        self.share = share_slider(share)
        choices = sorted(set(CEILING_CHOICES) | {longest})
        self.longest = slider("longest chat (tokens)", [(f"{n:,}", n) for n in choices], longest)
        view = ceiling_view(share, longest, **self.settings)
        # the most chats: the largest share, the shortest ceiling (so the axis never moves)
        top = ceiling_view(self.share.max, choices[0], **self.settings).blocks.typical
        super().__init__(
            [self.share, self.longest], charts.ChatsThatFit(view.blocks, [view.reserved], top)
        )
        self.refresh()

    def compute(self, setting: tuple) -> CeilingView:
        share, longest = setting
        return ceiling_view(share, longest, **self.settings)

    def show(self, view: CeilingView) -> str:
        self.chart.update(view.blocks, [view.reserved])
        return view.caption


class SweepExplorer(Explorer):
    """Cap and share sliders over the cap sweep, the knee marked (notebook 3).

    Moving the share re-runs the whole sweep with the fast engine; moving
    the cap only moves the ring on the chart.
    """

    def __init__(
        self,
        chats: Iterable[Chat] | None = None,
        share: int = LESSON_SHARE,
        cap: int = 64,
        longest: int = LESSON_LONGEST,
        gpu: GPU = A100_80GB,
        model: Model = LLAMA_31_8B,
        reserve_bytes: float = RESERVE_BYTES,
    ):
        self.chats = lesson_chats() if chats is None else as_chats(chats)
        self.settings = dict(longest=longest, gpu=gpu, model=model, reserve_bytes=reserve_bytes)
        self.cap = slider("cap (most chats at once)", list(CAPS), cap)
        self.share = share_slider(share)
        self.view = sweep_view(self.chats, share, **self.settings)
        if self.view.sweep is None:
            raise ServerWontStart(self.view.problem)
        # the axes hold the sweep at the largest share, with the most room to run chats
        largest = sweep_view(self.chats, self.share.max, **self.settings)
        super().__init__(
            [self.cap, self.share],
            charts.SweepChart(
                self.view.sweep, self.view.knee, cap, tops=sweep_tops([self.view, largest])
            ),
        )
        self.refresh()

    def compute(self, setting: tuple) -> SweepView:
        _, share = setting  # the cap only moves the ring: the sweep is the share's
        shown = self.view
        return shown if share == shown.share else sweep_view(self.chats, share, **self.settings)

    def show(self, view: SweepView) -> str:
        self.view = view
        if view.sweep is None:
            self.chart.blank(view.problem)
        else:
            self.chart.update(view.sweep, view.knee, self.cap.value)
        return view.caption(self.cap.value)


def sweep_tops(views: Iterable[SweepView]) -> tuple[float, float]:
    """The most tokens/s and the longest wait (ms) over the sweeps of `views` that start."""
    sweeps = [view.sweep for view in views if view.sweep is not None]
    return (max(s["tokens_per_s"].max() for s in sweeps), max(s["wait_ms"].max() for s in sweeps))


class PauseExplorer(Explorer):
    """A step slider replaying a small case block by block (notebook 4).

    By default the hand case: two chats of 30 prompt and 10 reply tokens in a
    pool of 4 blocks.
    """

    def __init__(
        self,
        chats: Iterable[Chat] = ((30, 10), (30, 10)),
        blocks: int = 4,
        cap: int = 10,
        gpu: GPU = A100_80GB,
        model: Model = LLAMA_31_8B,
    ):
        self.steps = trace(chats, cap, blocks=blocks, longest=None, gpu=gpu, model=model)
        # the card sets only how long a step takes: the pool is the case's own blocks
        self.card = (
            f" Card: {card_tag(gpu, RESERVE_BYTES)}, for the clock; the pool is "
            f"this case's {blocks} blocks."
        )
        self.step = slider("step", range(1, len(self.steps) + 1), 1)
        super().__init__([self.step], charts.BlockGrid(self.steps, blocks))
        self.refresh()

    def compute(self, setting: tuple) -> PauseView:
        (step,) = setting
        return pause_view(self.steps, step - 1, self.card)

    def show(self, view: PauseView) -> str:
        self.chart.update(self.step.value - 1)
        return view.caption
