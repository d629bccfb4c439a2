"""The explorers without a browser: each slider move runs the same callback a
student's move runs, and the caption and the figure must follow it."""

from __future__ import annotations

import pytest

import kvlesson as kv
from kvlesson import figures, story, widgets
from kvlesson.quote import Say


def caption(explorer) -> str:
    return explorer.caption.value


def test_the_floor_explorer_follows_the_share():
    explorer = widgets.FloorExplorer()
    before = explorer.image.value
    explorer.share.value = 50
    assert "At a 50% share" in caption(explorer) and "21.9 GB" in caption(explorer)
    assert explorer.image.value != before
    pool_bar = explorer.chart.bars[2]
    assert pool_bar.get_width() == pytest.approx(kv.memory_parts(50).pool_bytes / 1e9)
    assert explorer.chart.line.get_xdata()[0] == pytest.approx(40.0)


def test_the_floor_explorer_shows_an_empty_pool_below_the_first_block():
    explorer = widgets.FloorExplorer()
    explorer.share.value = 22
    assert "no block is left for the cache pool" in caption(explorer)
    assert explorer.chart.bars[2].get_width() == 0


def test_the_ceiling_explorer_says_when_the_server_will_not_start():
    explorer = widgets.CeilingExplorer()
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
    explorer = widgets.SweepExplorer()
    assert explorer.chart.knees[0].get_xdata()[0] == 64
    explorer.cap.value = 128
    assert "Cap 128: 1,300 tokens/s" in caption(explorer)
    assert list(explorer.chart.marks[0].get_xdata()) == [128]
    explorer.share.value = 35
    assert explorer.view.knee == 32 and explorer.chart.knees[0].get_xdata()[0] == 32
    assert "Cap 128: 1,018 tokens/s" in caption(explorer) and "39 pauses" in caption(explorer)


def test_the_sweep_explorer_survives_a_share_that_cannot_start():
    explorer = widgets.SweepExplorer()
    explorer.share.value = 20
    assert "will not start" in caption(explorer)
    assert len(explorer.chart.rate_line.get_xdata()) == 0
    explorer.share.value = 90
    assert "Cap 64: 1,202 tokens/s" in caption(explorer)
    assert len(explorer.chart.rate_line.get_xdata()) == len(kv.CAPS)


def test_the_pause_explorer_replays_the_hand_case():
    explorer = widgets.PauseExplorer()
    assert explorer.step.max == 18
    explorer.step.value = 3
    assert "B, the newest running chat, was paused" in caption(explorer)
    owners = [name.get_text() for name in explorer.chart.names]
    assert owners == ["A", "A", "A", "free"]
    explorer.step.value = 11
    assert "B joined and read its 32 tokens" in caption(explorer)


@pytest.mark.parametrize("make", [widgets.FloorExplorer, widgets.CeilingExplorer,
                                  widgets.SweepExplorer, widgets.PauseExplorer])
def test_a_stored_explorer_is_a_hint_without_a_widget_id(make):
    bundle = make()._repr_mimebundle_()
    assert bundle["text/plain"] == f"{make.__name__}: run this cell to get its sliders."
    assert "model_id" in bundle["application/vnd.jupyter.widget-view+json"]


def test_views_are_the_same_sentences_a_notebook_prints():
    assert widgets.FloorExplorer(share=30).caption.value == f"<p>{story.floor_view(30).caption}</p>"
    assert isinstance(story.ceiling_view(90, 8000).caption, Say)


def test_a_bad_step_index_names_the_range():
    steps = kv.trace([(30, 10), (30, 10)], 10, blocks=4)
    with pytest.raises(ValueError, match=r"step index must be in 0\.\.17"):
        story.pause_view(steps, 18)


def test_figures_use_the_colour_blind_palette_and_units():
    bar = figures.MemoryBar(kv.memory_parts(90))
    assert [b.get_facecolor()[:3] for b in bar.bars] == [
        pytest.approx(tuple(int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)))
        for c in (figures.BLUE, figures.ORANGE, figures.GREEN, figures.GREY)]
    assert "GB" in bar.ax.get_xlabel()
    assert sum(b.get_width() for b in bar.bars) == pytest.approx(80.0)
    chart = figures.SweepChart(kv.cap_sweep(kv.lesson_chats()), 64)
    assert "tokens/s" in chart.rate_ax.get_ylabel() and "(ms)" in chart.wait_ax.get_ylabel()
    assert "cap" in chart.rate_ax.get_xlabel()
