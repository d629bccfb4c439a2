"""The explorers without a browser: each slider move runs the same callback a
student's move runs, and the caption and the figure must follow it."""

from __future__ import annotations

import html
import io
import json
import threading

import numpy as np
import pytest
from matplotlib.text import Text
from PIL import Image

import kvlesson as kv
from kvlesson.lesson import (
    charts,
    explorer_base,
    explorers,
    pause_sentences,
    recipe,
    sentences,
    tables,
)
from kvlesson.lesson.quote import Say
from support.patience import HANG


def caption(explorer) -> str:
    return explorer.caption.value


def test_the_floor_explorer_follows_the_share():
    explorer = explorers.FloorExplorer()
    before = explorer.image.value
    explorer.share.value = 50
    assert "At a 50% share" in caption(explorer) and "21.9 GB" in caption(explorer)
    assert explorer.image.value != before
    pool_bar = explorer.chart.bar.bars[2]
    assert pool_bar.get_width() == pytest.approx(kv.memory_parts(50).pool_bytes / 1e9)
    assert explorer.chart.bar.line.get_xdata()[0] == pytest.approx(40.0)


def test_the_floor_explorer_shows_an_empty_pool_below_the_first_block():
    explorer = explorers.FloorExplorer()
    explorer.share.value = 22
    assert "no block is left for the cache pool" in caption(explorer)
    assert explorer.chart.bar.bars[2].get_width() == 0


def test_the_ceiling_explorer_says_when_the_server_will_not_start():
    explorer = explorers.CeilingExplorer()
    assert "205 with blocks" in caption(explorer) and "51 with 8,000" in caption(explorer)
    explorer.longest.value = 128_000
    explorer.share.value = 40
    assert "will <b>not</b> start" in caption(explorer)
    assert "8,000 blocks and the pool has 6,646" in caption(explorer)
    explorer.share.value = 44
    assert "The server starts" in caption(explorer)
    heights = [bar.get_height() for bar in explorer.chart.bars]
    assert heights == [kv.room(44, 128_000).typical, kv.room(44, 128_000, reserved=True).typical]


def test_the_sweep_explorer_moves_the_ring_with_the_cap_and_the_knee_with_the_share():
    explorer = explorers.SweepExplorer()
    assert explorer.chart.knees[0].get_xdata()[0] == 64
    explorer.cap.value = 128
    assert "Cap 128: 1,300 tokens/s" in caption(explorer)
    assert list(explorer.chart.marks[0].get_xdata()) == [128]
    explorer.share.value = 35
    assert explorer.view.knee == 32 and explorer.chart.knees[0].get_xdata()[0] == 32
    assert "Cap 128: 1,018 tokens/s" in caption(explorer) and "39 pauses" in caption(explorer)


def test_the_sweep_explorer_survives_a_share_that_cannot_start():
    explorer = explorers.SweepExplorer()
    explorer.share.value = 20
    assert "will not start" in caption(explorer)
    assert len(explorer.chart.rate_line.get_xdata()) == 0
    explorer.share.value = 90
    assert "Cap 64: 1,202 tokens/s" in caption(explorer)
    assert len(explorer.chart.rate_line.get_xdata()) == len(kv.CAPS)


def test_the_pause_explorer_replays_the_hand_case():
    explorer = explorers.PauseExplorer()
    assert explorer.step.max == 18
    explorer.step.value = 3
    assert "B, the newest running chat, was paused" in caption(explorer)
    owners = [name.get_text() for name in explorer.chart.names]
    assert owners == ["A", "A", "A", "free"]
    explorer.step.value = 11
    assert "B joined and read its 32 tokens" in caption(explorer)


@pytest.mark.parametrize(
    "make",
    [
        explorers.FloorExplorer,
        explorers.CeilingExplorer,
        explorers.SweepExplorer,
        explorers.PauseExplorer,
    ],
)
def test_a_stored_explorer_is_a_still_with_its_alt_text_and_no_widget_id(make):
    explorer = make()
    bundle, metadata = explorer._repr_mimebundle_()
    assert bundle["text/plain"].startswith(f"{make.__name__}. A still of this explorer at ")
    assert "run this cell" in bundle["text/plain"] and explorer.alt in bundle["text/plain"]
    assert explorer.setting_words() in bundle["text/plain"]
    still = bundle["text/html"]
    assert f'<img alt="{html.escape(explorer.alt)}" src="data:image/png;base64,' in still
    assert explorer.caption.value in still and "model_id" not in still
    assert "model_id" in bundle["application/vnd.jupyter.widget-view+json"]
    # beside the still, how to make it again: the website works out its frames from it
    assert metadata == {explorer_base.RECIPE: explorer.recipe}
    again = recipe.made_again(json.loads(json.dumps(metadata[explorer_base.RECIPE])))
    assert type(again) is make and (again.caption.value, again.png) == (
        explorer.caption.value,
        explorer.png,
    )


def test_views_are_the_same_sentences_a_notebook_prints():
    caption = sentences.floor_view(30).caption
    assert explorers.FloorExplorer(share=30).caption.value == f"<p>{caption}</p>"
    assert isinstance(sentences.ceiling_view(90, 8000).caption, Say)


def test_the_pause_explorer_names_its_card_and_its_pool():
    """Every explorer's caption names the card it draws (issue 29): the pause explorer's card
    sets only the clock, so it says that the pool is the case's own blocks."""
    pause = explorers.PauseExplorer(blocks=4, gpu=kv.H100_80GB)
    assert pause.caption.value.endswith(
        "Card: H100 80GB as its data sheet reads it (80.0 GB; 2.0 GB reserve), for the clock; "
        "the pool is this case&#x27;s 4 blocks.</p>"
    ), pause.caption.value


def test_a_bad_step_index_names_the_range():
    steps = kv.trace([(30, 10), (30, 10)], 10, blocks=4)
    with pytest.raises(ValueError, match=r"step index must be in 0\.\.17"):
        pause_sentences.pause_view(steps, 18)


def test_figures_use_the_colour_blind_palette_and_units():
    bar = charts.MemoryBar(kv.memory_parts(90))
    assert [b.get_facecolor()[:3] for b in bar.bar.bars] == [
        pytest.approx(tuple(int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)))
        for c in (charts.BLUE, charts.ORANGE, charts.GREEN, charts.GREY)
    ]
    assert "GB" in bar.ax.get_xlabel()
    assert sum(b.get_width() for b in bar.bar.bars) == pytest.approx(80.0)
    chart = charts.SweepChart(kv.cap_sweep(kv.lesson_chats()), 64)
    assert "tokens/s" in chart.rate_ax.get_ylabel() and "(ms)" in chart.wait_ax.get_ylabel()
    assert "cap" in chart.rate_ax.get_xlabel()


# --- what a student reads: nothing cut off, axes that hold still, a server that will not start


def text_outside_the_image(figure) -> list[str]:
    """Every visible text (titles, labels, legend entries, captions on the chart) and every
    axes with its tick labels that reaches past the figure's edges, as the explorer's canvas
    draws it."""
    renderer = figure.canvas.get_renderer()
    edge = figure.bbox

    def outside(box) -> bool:
        return (
            box.x0 < edge.x0 - 1
            or box.y0 < edge.y0 - 1
            or box.x1 > edge.x1 + 1
            or box.y1 > edge.y1 + 1
        )

    # tick labels are checked with their axes: ticks past the axis limits are never drawn
    ticks = {
        label
        for ax in figure.axes
        for axis in (ax.xaxis, ax.yaxis)
        for tick in axis.get_major_ticks() + axis.get_minor_ticks()
        for label in (tick.label1, tick.label2)
    }
    found = [
        text.get_text()
        for text in figure.findobj(Text)
        if text not in ticks
        and text.get_visible()
        and text.get_text()
        and outside(text.get_window_extent(renderer))
    ]
    return found + [
        f"axes {i}" for i, ax in enumerate(figure.axes) if outside(ax.get_tightbbox(renderer))
    ]


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


def full_draw(explorer) -> np.ndarray:
    """The explorer's figure drawn whole, the slow way, moving artists and all."""
    drawing = explorer.drawing
    for artist in drawing.moving:
        artist.set_animated(False)
    try:
        drawing.canvas.draw()
        return np.asarray(drawing.canvas.buffer_rgba())[..., :3].astype(int)
    finally:
        for artist in drawing.moving:
            artist.set_animated(True)


MOVES = {  # explorer: slider positions a student reaches, the extremes included
    explorers.FloorExplorer: [("share", v) for v in (1, 15, 22, 23, 50, 74, 76, 98, 100)],
    explorers.CeilingExplorer: [
        ("longest", 128_000),
        ("share", 40),
        ("share", 1),
        ("share", 100),
        ("longest", 2_000),
        ("share", 44),
    ],
    explorers.SweepExplorer: [
        ("share", 20),
        ("cap", 1),
        ("share", 35),
        ("cap", 512),
        ("share", 100),
    ],
    explorers.PauseExplorer: [("step", v) for v in (3, 11, 18, 1)],
}


@pytest.mark.parametrize("make", list(MOVES), ids=lambda make: make.__name__)
def test_every_text_stays_inside_the_image_and_the_image_is_the_whole_figure(make):
    explorer = make()
    for name, value in MOVES[make]:
        getattr(explorer, name).value = value
        assert text_outside_the_image(explorer.chart.figure) == [], f"after {name} = {value}"
        # what is blitted (background once, moving artists over it) is what a full draw shows
        blitted, whole = pixels(explorer.png), full_draw(explorer)
        assert blitted.shape == whole.shape
        # (a moving artist is drawn over the static ones, so a few edge pixels may differ)
        differ = (np.abs(blitted - whole).max(axis=2) > 40).mean()
        assert differ < 0.001, f"after {name} = {value}: {differ:.2%} of the pixels differ"


def test_the_floor_plan_legend_names_all_four_parts_and_the_crossed_out_box_inside_the_image():
    explorer = explorers.FloorExplorer()
    (legend,) = explorer.chart.figure.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "weights",
        "reserve",
        "cache pool",
        "unused",
        "over the budget",
    ]
    box = legend.get_window_extent(explorer.chart.figure.canvas.get_renderer())
    assert explorer.chart.figure.bbox.contains(box.x0, box.y0)
    assert explorer.chart.figure.bbox.contains(box.x1, box.y1)
    assert Image.open(io.BytesIO(explorer.png)).size == (688, 240)


def test_the_floor_explorer_shows_and_says_the_server_cannot_start_below_the_first_block():
    explorer = explorers.FloorExplorer()
    explorer.share.value = 20
    parts = kv.memory_parts(20)
    needed = (parts.weights_bytes + parts.reserve_bytes) / 1e9
    assert "cannot start" in caption(explorer) and "2.06 GB more than that" in caption(explorer)
    assert "cannot start" in explorer.chart.ax.get_title()
    weights, reserve, pool, unused = explorer.chart.bar.bars
    # the part of the weights and the reserve past the share line is crossed out ...
    assert explorer.chart.bar.over.get_x() == pytest.approx(16.0)
    assert explorer.chart.bar.over.get_x() + explorer.chart.bar.over.get_width() == pytest.approx(
        needed
    )
    # ... and the unused part is the lesson's, the card less the share: from the share line
    # (under the weights and the reserve past it) to the card's end, and so labelled
    assert unused.get_x() == pytest.approx(16.0) and unused.get_width() == pytest.approx(64.0)
    assert explorer.chart.bar.labels[3].get_text() == "64.0 GB" and pool.get_width() == 0
    assert "Unused 64.0 GB" in explorer.alt
    explorer.share.value = 90
    assert explorer.chart.bar.over.get_width() == 0
    assert "cannot start" not in explorer.chart.ax.get_title()
    assert unused.get_x() == pytest.approx(72.0)


def test_a_memory_bar_keeps_its_card():
    bar = charts.MemoryBar(kv.memory_parts(90))
    with pytest.raises(ValueError, match="the 80.0 GB card this bar was drawn for, got 40.0 GB"):
        bar.update(kv.memory_parts(90, gpu=kv.A100_40GB))


def test_the_ceiling_explorer_draws_no_chats_when_the_server_will_not_start():
    explorer = explorers.CeilingExplorer()
    top = explorer.chart.ax.get_ylim()
    explorer.longest.value = 128_000
    explorer.share.value = 40
    assert "serves no chats at all" in caption(explorer)
    assert "A ceiling of 106,336 tokens or less would start" in caption(explorer)
    assert [bar.get_height() for bar in explorer.chart.bars] == [0, 0]
    assert [t.get_text() for t in explorer.chart.values] == ["will not\nstart"] * 2
    assert explorer.chart.stopped.get_visible()
    assert "will not start" in explorer.chart.stopped.get_text()
    assert "No chats" in explorer.chart.stopped.get_text()
    explorer.share.value = 44
    assert not explorer.chart.stopped.get_visible()
    assert explorer.chart.bars[0].get_height() == kv.room(44, 128_000).typical
    # the axis never moved, and it holds the most chats the sliders can reach
    assert explorer.chart.ax.get_ylim() == top
    assert top[1] >= kv.room(100, min(explorers.CEILING_CHOICES)).typical


def test_a_figure_of_several_ceilings_marks_each_one_that_will_not_start():
    chart = charts.ChatsThatFit(
        kv.room(40, 8_000), [kv.room(40, 8_000, True), kv.room(40, 128_000, True)]
    )
    assert [t.get_text() for t in chart.values] == [
        f"{kv.room(40, 8_000).typical:,}",
        f"{kv.room(40, 8_000, True).typical:,}",
        "will not\nstart",
    ]
    assert chart.bars[2].get_height() == 0 and not chart.stopped.get_visible()


@pytest.mark.heavy  # seconds of a core: CI runs it, the quick tier does not
def test_the_sweep_explorer_keeps_its_axes_over_the_whole_share_range():
    explorer = explorers.SweepExplorer()
    limits = (
        explorer.chart.rate_ax.get_ylim(),
        explorer.chart.wait_ax.get_ylim(),
        explorer.chart.rate_ax.get_xlim(),
    )
    # computed once, from the sweep at the slider's largest share
    top = sentences.sweep_view(explorer.chats, explorer.share.max)
    assert limits[0][1] == pytest.approx(1.1 * top.sweep["tokens_per_s"].max())
    assert limits[1][1] == pytest.approx(
        1.1 * max(top.sweep["wait_ms"].max(), explorer.view.sweep["wait_ms"].max())
    )
    for share in range(explorer.share.min, explorer.share.max + 1):
        explorer.share.value = share
        assert (
            explorer.chart.rate_ax.get_ylim(),
            explorer.chart.wait_ax.get_ylim(),
            explorer.chart.rate_ax.get_xlim(),
        ) == limits
        if explorer.view.sweep is not None:  # every point of every share's sweep is on the chart
            assert explorer.view.sweep["tokens_per_s"].max() < limits[0][1]
            assert explorer.view.sweep["wait_ms"].max() < limits[1][1]


def test_sliders_are_as_wide_as_the_charts_with_their_names_in_full():
    descriptions = {}
    for make in MOVES:
        explorer = make()
        for slider in explorer.box.children[:-2]:
            assert slider.layout.width == explorer_base.SLIDER_WIDTH == "688px"
            descriptions[slider.description] = slider
    assert set(descriptions) == {
        "memory share (%)",
        "longest chat (tokens)",
        "cap (most chats at once)",
        "step",
    }
    assert descriptions["longest chat (tokens)"].options[-1] == ("128,000", 128_000)


def test_the_trace_table_counts_steps_from_1_with_no_other_row_number():
    table = tables.trace_table(kv.trace([(30, 10), (30, 10)], 10, blocks=4))
    assert table.index.name == "step" and list(table.index) == list(range(1, 19))
    assert list(table.columns) == [
        "A blocks",
        "B blocks",
        "free",
        "joined",
        "paused",
        "finished",
        "clock (ms)",
    ]
    assert table.loc[3, "paused"] == "B"
    first_column = [line.split()[0] for line in repr(table).splitlines()[2:]]
    assert first_column == [str(step) for step in range(1, 19)]


def test_the_sweep_table_names_its_comparisons_and_shows_no_nan():
    table = tables.sweep_table(kv.cap_sweep(kv.lesson_chats()))
    assert table.index.name == "cap" and list(table.index) == list(kv.CAPS)
    assert list(table.columns) == [
        "tokens/s",
        "wait (ms)",
        "tokens/s gain vs cap before (%)",
        "wait vs cap before (times)",
        "pauses",
        "rebuilt tokens",
        "running on average",
    ]
    assert table.loc[128, "tokens/s gain vs cap before (%)"] == "8.2"
    assert table.loc[128, "wait vs cap before (times)"] == "1.68"
    assert table.loc[1, "tokens/s gain vs cap before (%)"] == ""
    assert "NaN" not in repr(table) and "nan" not in table.to_html()


# --- a setting seen before is shown again at once, and exactly as it was computed; the next
# settings along the slider just moved are computed ahead


def computed_here(explorer) -> list:
    """The views the explorer computes from now on in the kernel's own thread (not ahead)."""
    calls, compute = [], explorer.lookahead.compute

    def counted(setting):
        if threading.current_thread() is threading.main_thread():
            calls.append(setting)
        return compute(setting)

    explorer.lookahead.compute = counted
    return calls


@pytest.mark.parametrize(
    "make, control, values",
    [
        (explorers.FloorExplorer, "share", [50, 20, 90]),
        (explorers.SweepExplorer, "share", [60, 30, 90]),
        (explorers.SweepExplorer, "cap", [8, 128, 32]),
        (explorers.PauseExplorer, "step", [5, 2, 9]),
    ],
)
def test_a_setting_seen_before_is_shown_again_without_computing(make, control, values):
    explorer = make()
    for value in values:
        setattr(getattr(explorer, control), "value", value)
    computed = computed_here(explorer)
    for value in reversed(values):  # back over the same settings
        setattr(getattr(explorer, control), "value", value)
        fresh = make()
        setattr(getattr(fresh, control), "value", value)
        assert (explorer.caption.value, explorer.image.value) == (
            fresh.caption.value,
            fresh.image.value,
        )
        # the figure's artists follow what is shown: drawn now, they give the same picture
        assert explorer.drawing.png() == fresh.png
    assert computed == []


def test_an_explorer_keeps_only_its_last_settings(monkeypatch):
    monkeypatch.setattr(explorer_base, "KEPT", 10)
    explorer = explorers.FloorExplorer()
    for share in range(1, 31):
        explorer.share.value = share
    assert list(explorer.shown) == [(share,) for share in range(21, 31)]
    computed = computed_here(explorer)
    explorer.share.value = 5  # forgotten (and not next to 30): computed again
    assert computed == [(5,)] and "At a 5% share" in caption(explorer)


@pytest.mark.parametrize(
    "make, control, first, then",
    [
        (explorers.FloorExplorer, "share", 60, 61),
        (explorers.CeilingExplorer, "longest", 16_000, 32_000),  # a selection slider
        (explorers.SweepExplorer, "share", 70, 69),
    ],
)
def test_the_next_setting_along_the_slider_is_computed_ahead(make, control, first, then):
    explorer = make()
    getattr(explorer, control).value = first
    ahead = dict(explorer.lookahead.pending)
    assert ahead, "nothing computed ahead"
    for future in ahead.values():
        future.result(timeout=HANG)
    computed = computed_here(explorer)
    getattr(explorer, control).value = then
    assert computed == []
    fresh = make()
    getattr(fresh, control).value = then
    assert (explorer.caption.value, explorer.image.value) == (
        fresh.caption.value,
        fresh.image.value,
    )
