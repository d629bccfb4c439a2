"""The lesson's explorers: sliders that redraw a figure and a sentence (notebooks 1 to 4, 7).

Each explorer has a pure `*_view` function that computes what to show (a test can call it
without a browser; `sentences`) and a small class that wires sliders to it and updates one
figure in place. The figure's axes are fixed over each slider's whole range, so a student
compares shapes on one scale. What every explorer shares (what it keeps, computes ahead and
draws, its live caption, its still and recipe) is `explorer_base`; each slider is a native
range input named by its label (`slider`). Needs the course extra (ipywidgets, anywidget).
"""

from __future__ import annotations

from typing import Iterable

from kvlesson.lesson import charts
from kvlesson.lesson.card_sentences import card_tag
from kvlesson.lesson.explorer_base import Explorer, share_slider, slider
from kvlesson.lesson.pause_sentences import PauseView, pause_view
from kvlesson.lesson.sentences import (
    CeilingView,
    FloorView,
    SweepView,
    ceiling_view,
    floor_view,
    sweep_view,
)
from kvlesson.memory.floor import RESERVE_BYTES, ServerWontStart
from kvlesson.memory.specs import A100_80GB, GPU, LLAMA_31_8B, Model
from kvlesson.serving.chats import Chat, as_chats, lesson_chats
from kvlesson.serving.settings import LESSON_LONGEST, LESSON_SHARE
from kvlesson.serving.sweep import CAPS
from kvlesson.serving.trace import trace

__all__ = [  # the other explorers' modules take their base and sliders from here
    "CEILING_CHOICES",
    "CeilingExplorer",
    "Explorer",
    "FloorExplorer",
    "PauseExplorer",
    "SweepExplorer",
    "share_slider",
    "slider",
    "sweep_tops",
]

CEILING_CHOICES = (2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000)


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
