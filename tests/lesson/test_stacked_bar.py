"""A card drawn as one bar (notebook 1's memory bar, notebook 5's plan): the crossed-out box
over the budget has a legend entry of its own, and no size written on the bar is lost on it: a
size sits off the box where its part leaves room, else on a white patch over it."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import kvlesson as kv
from kvlesson.lesson import charts
from kvlesson.lesson.real_server_explorer import PlanBar
from kvlesson.lesson.stacked_bar import OVER_HATCH, OVER_THE_BUDGET
from kvlesson.memory.specs import MODELS
from kvlesson.memory.startup import startup


def drawn(chart):
    """The chart drawn on an Agg canvas, and its renderer."""
    canvas = FigureCanvasAgg(chart.figure)
    canvas.draw()
    return canvas.get_renderer()


def labels_on_the_box(chart) -> list[str]:
    """The texts of the chart (the sizes on the bar, the share line's label, the title) whose
    drawn box meets the crossed-out box's and that have no white patch under them (lost in
    the hatch)."""
    renderer = drawn(chart)
    if chart.bar.over.get_width() == 0:
        return []
    box = chart.bar.over.get_window_extent(renderer)
    texts = [*chart.bar.labels, getattr(chart, "line_label", None), chart.ax.title]
    return [
        text.get_text()
        for text in texts
        if text is not None
        and text.get_text().strip()
        and text.get_window_extent(renderer).overlaps(box)
        and not (text.get_bbox_patch() and text.get_bbox_patch().get_facecolor() == (1, 1, 1, 1))
    ]


def over_the_budget_entry(chart):
    legend = chart.figure.legends[0]
    names = [text.get_text() for text in legend.get_texts()]
    return legend.legend_handles[names.index(OVER_THE_BUDGET)]


@pytest.mark.parametrize(
    "chart", [charts.MemoryBar(kv.memory_parts(20)), PlanBar()], ids=["memory bar", "plan bar"]
)
def test_the_crossed_out_box_has_a_hatched_legend_entry(chart):
    handle = over_the_budget_entry(chart)
    assert handle.get_hatch() == OVER_HATCH
    others = [h.get_hatch() for h in chart.figure.legends[0].legend_handles if h is not handle]
    assert OVER_HATCH not in others  # told apart by its hatch, not by its colour alone


@pytest.mark.parametrize("share", [1, 5, 10, 15, 20, 22, 25, 30])
def test_no_size_sits_on_the_memory_bars_crossed_out_box(share):
    chart = charts.MemoryBar(kv.memory_parts(share))
    assert labels_on_the_box(chart) == []
    assert chart.bar.over.get_width() > 0 or share >= 22
    assert chart.bar.labels[0].get_text() == "16.06 GB"  # the weights keep their size, even at 1%


@pytest.mark.parametrize(
    "gpu, model, tp",
    [
        (kv.H100_80GB, "LLAMA_33_70B", 2),
        (kv.A100_80GB, "LLAMA_31_8B", 1),
        (kv.RTX_3090, "QWEN25_7B", 1),
        (kv.A100_40GB, "LLAMA_33_70B", 4),
        (kv.RTX_3090, "LLAMA_31_8B", 2),
    ],
)
def test_no_size_sits_on_the_plans_crossed_out_box(gpu, model, tp):
    chart = PlanBar()
    crossed = 0
    for share in range(5, 101, 5):
        chart.update(startup(gpu, MODELS[model], share, 4_096, tp=tp))
        assert labels_on_the_box(chart) == [], share
        crossed += chart.bar.over.get_width() > 0
    assert crossed  # the case was met


def test_section_5s_launch_at_40_percent_keeps_the_weights_size_left_of_the_box():
    chart = PlanBar()
    chart.update(startup(kv.H100_80GB, kv.LLAMA_33_70B, 40, 131_072, tp=2))
    renderer = drawn(chart)
    weights = chart.bar.labels[0]
    assert weights.get_text() == "70.6 GB"
    assert weights.get_window_extent(renderer).x1 < chart.bar.over.get_window_extent(renderer).x0
