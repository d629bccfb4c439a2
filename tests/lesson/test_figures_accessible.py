"""Every figure the course draws can be read without seeing it and without telling colours
apart: its alt text states the numbers it draws (compared here with the drawn artists), text
is at least 12 px as shown and 4.5:1 on white, lines and bar edges at least 3:1, and every
legend entry differs by more than its colour."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import kvlesson as kv
from kvlesson.lesson import charts, traffic_charts
from kvlesson.lesson.figures import COLUMN_PX, DPI, MIN_TEXT_PX, contrast
from kvlesson.lesson.real_server_explorer import PlanBar
from kvlesson.lesson.traffic_explorer import TrafficChart, traffic_view
from kvlesson.memory.startup import startup

CHATS = kv.lesson_chats()
SWEEP = kv.cap_sweep(CHATS)
HAND = kv.trace([(30, 10), (30, 10)], 10, blocks=4)
BOB = [kv.Request(500, 400, 0.0), kv.Request(700, 300, 0.2), kv.Request(7_700, 300, 1.0)]
DAY = [kv.Request(100, 300, 0.0)] * 5


def gap_runs():
    return {
        f"budget {b or 'none'}": kv.trace(BOB, 64, budget=b, max_steps=100_000)
        for b in (None, 2_048, 256)
    }


def queue_runs():
    return {
        "proxy 2": kv.serve(DAY, 8, blocks=100, longest=None, admission=2),
        "no proxy": kv.serve(DAY, 8, blocks=100, longest=None),
    }


def plan(share):
    bar = PlanBar()
    bar.update(startup(kv.H100_80GB, kv.LLAMA_33_70B, share, 131_072, tp=2))
    return bar


FIGURES = {  # name: () -> a chart object (figure, alt) or a Drawn
    "memory bar 90%": lambda: charts.MemoryBar(kv.memory_parts(90)),
    "memory bar 20%": lambda: charts.MemoryBar(kv.memory_parts(20)),
    "memory bar 1%": lambda: charts.MemoryBar(kv.memory_parts(1)),
    "chats that fit": lambda: charts.ChatsThatFit(
        kv.room(90, 8_000), [kv.room(90, 8_000, True), kv.room(90, 32_000, True)]
    ),
    "chats that fit, no start": lambda: charts.ChatsThatFit(
        kv.room(40, 128_000), [kv.room(40, 128_000, True)]
    ),
    "sweep": lambda: charts.SweepChart(SWEEP, kv.stops_paying(SWEEP), 64, "90% share"),
    "knee by pool": lambda: charts.knee_by_pool({35: kv.cap_sweep(CHATS, share=35), 90: SWEEP}),
    "block grid": lambda: charts.BlockGrid(HAND, 4, 3),
    "gap chart": lambda: traffic_charts.gap_chart(gap_runs(), 0, "Chat 0's reply"),
    "queue chart": lambda: traffic_charts.queue_chart(queue_runs(), "proxy"),
    "traffic": lambda: TrafficChart(traffic_view(kv.lesson_chats(n=60), 5.0, None, 64)),
    "plan 95%": lambda: plan(95),
    "plan 40%": lambda: plan(40),
}


@pytest.fixture(params=list(FIGURES), scope="module")
def made(request):
    return FIGURES[request.param]()


def visible_texts(figure) -> list[Text]:
    FigureCanvasAgg(figure).draw()  # tick labels exist once drawn
    return [
        t
        for t in figure.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_figure() is not None
    ]


def test_every_text_is_12_px_or_more_as_shown(made):
    figure = made.figure
    width_px = figure.get_figwidth() * DPI
    scale = min(1.0, COLUMN_PX / width_px)  # the site's column shrinks a wider figure
    small = {
        t.get_text(): round(t.get_fontsize() * DPI / 72 * scale, 1)
        for t in visible_texts(figure)
        if t.get_fontsize() * DPI / 72 * scale < MIN_TEXT_PX
    }
    assert small == {}, f"texts under {MIN_TEXT_PX} px as shown: {small}"


def test_text_is_4_5_to_1_and_lines_and_bar_edges_3_to_1_on_white(made):
    figure = made.figure
    faint = [
        f"text {t.get_text()!r}"
        for t in visible_texts(figure)
        if contrast(to_rgba(t.get_color())) < 4.5
    ]
    for ax in figure.axes:
        grid = set(ax.xaxis.get_gridlines()) | set(ax.yaxis.get_gridlines())
        for line in ax.get_lines():
            if line in grid or not line.get_visible() or len(line.get_xdata()) == 0:
                continue
            colours = [line.get_color()]
            if line.get_marker() not in ("None", None, ""):
                colours = [line.get_markeredgecolor()]
            faint += [f"line {line.get_label()!r}" for c in colours if contrast(to_rgba(c)) < 3]
        for patch in ax.patches:
            if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_width() > 0:
                edge, face = patch.get_edgecolor(), patch.get_facecolor()
                if face[3] > 0 and max(contrast(edge), contrast(face)) < 3:
                    faint.append(f"bar {patch.get_label()!r}")
    assert faint == []


def test_every_legend_entry_differs_by_more_than_its_colour(made):
    for legend in [*made.figure.legends, *(ax.get_legend() for ax in made.figure.axes)]:
        if legend is None:
            continue
        looks = []
        for handle in legend.legend_handles:
            if isinstance(handle, Line2D):
                looks.append((handle.get_linestyle(), handle.get_marker()))
            else:
                looks.append(handle.get_hatch() or "")
        assert len(set(looks)) == len(looks), f"entries told apart by colour alone: {looks}"


def numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)]


@pytest.mark.parametrize("share", [1, 20, 22, 50, 90, 100])
def test_the_memory_bars_alt_text_gives_the_sizes_it_draws(share):
    bar = charts.MemoryBar(kv.memory_parts(share))
    for name, drawn in zip(["Weights", "reserve", "cache pool", "Unused"], bar.bar.bars):
        found = re.search(rf"{name} (?:of )?([\d.]+) GB", bar.alt, flags=re.IGNORECASE)
        if drawn.get_width() == 0:
            assert found is None or float(found.group(1)) == 0
            continue
        assert found, f"{name} missing from {bar.alt!r}"
        assert float(found.group(1)) == pytest.approx(drawn.get_width(), abs=0.051)
    assert f"{share}% share" in bar.alt and f"{bar.bar.line.get_xdata()[0]:.1f} GB" in bar.alt


def test_the_chats_alt_text_gives_each_bars_height():
    chart = FIGURES["chats that fit"]()
    counts = [int(n) for n in re.findall(r"([\d,]+) chats", chart.alt.replace(",", ""))]
    assert counts == [bar.get_height() for bar in chart.bars]


def test_the_sweep_alt_text_gives_its_ends_its_knee_and_its_ring():
    chart = charts.SweepChart(SWEEP, 64, 128)
    rates, waits = (np.asarray(line.get_ydata()) for line in (chart.rate_line, chart.wait_line))
    for cap, rate, wait in [
        (1, rates[0], waits[0]),
        (512, rates[-1], waits[-1]),
        (64, *(m.get_ydata()[0] for m in charts.SweepChart(SWEEP, 64, 64).marks)),
        (128, *(m.get_ydata()[0] for m in chart.marks)),
    ]:
        assert f"cap {cap}: {round(rate):,} tokens/s, wait {wait:.1f} ms" in chart.alt
    assert chart.knees[0].get_xdata()[0] == 64 and "Cap 64 is the knee" in chart.alt


def test_the_knee_alt_text_gives_every_bars_height():
    drawn = FIGURES["knee by pool"]()
    (ax,) = drawn.figure.axes
    heights = [round(p.get_height()) for p in ax.patches]  # cap by cap, share by share
    said = [int(n.replace(",", "")) for n in re.findall(r"cap \d+ ([\d,]+)", drawn.alt)]
    caps = 3
    assert said == [heights[k * 2 + s] for s in range(2) for k in range(caps)]


def test_the_block_grid_alt_text_names_each_block():
    grid = charts.BlockGrid(HAND, 4, 3)
    for b, name in enumerate(grid.names):
        assert f"block {b + 1} {name.get_text()}" in grid.alt


def test_the_gap_and_queue_alt_texts_give_what_the_lines_reach():
    gaps = traffic_charts.gap_chart(gap_runs(), 0)
    for line in gaps.figure.axes[0].get_lines():
        y = line.get_ydata()
        assert f"{line.get_label()}: gaps from {min(y):.1f} ms to {max(y):.1f} ms" in gaps.alt
    queue = traffic_charts.queue_chart(queue_runs())
    inside, outside = queue.figure.axes
    for line_in, line_out in zip(inside.get_lines(), outside.get_lines()):
        assert (
            f"{line_in.get_label()}: at most {max(line_in.get_ydata())} waiting inside" in queue.alt
        )
        assert f"at most {max(line_out.get_ydata())} retrying outside" in queue.alt


def test_the_traffic_alt_text_gives_the_lines_it_draws():
    chart = FIGURES["traffic"]()
    ttft, tpot = (line.get_ydata()[0] for line in chart.p95)
    p99, worst = (line.get_ydata()[0] for line in chart.itl)
    assert f"p95 {ttft:.2f} s" in chart.alt and f"p95 {tpot * 1000:.1f} ms" in chart.alt
    assert f"p99 {p99 * 1000:,.1f} ms" in chart.alt
    assert f"worst {worst * 1000:,.1f} ms" in chart.alt or worst == 10.0  # drawn at the top


@pytest.mark.parametrize("share", [40, 95])
def test_the_plans_alt_text_gives_the_sizes_it_draws(share):
    bar = plan(share)
    card = startup(kv.H100_80GB, kv.LLAMA_33_70B, share, 131_072, tp=2).parts.gpu_bytes
    for name, drawn in zip(["weights / tp", "profiled", "KV pool", "unused"], bar.bar.bars):
        said = float(re.search(rf"{name} ([\d.]+) GB", bar.alt).group(1))
        assert said == pytest.approx(drawn.get_width() * card / 100 / 1e9, abs=0.051)


def test_a_drawn_figure_is_an_img_with_its_alt_text_and_the_png():
    drawn = charts.memory_bar(kv.memory_parts(90))
    bundle = drawn._repr_mimebundle_()
    assert bundle["text/plain"] == drawn.alt
    assert bundle["text/html"].startswith(
        f'<img alt="{html.escape(drawn.alt)}" src="data:image/png;base64,'
    )
    assert bundle["image/png"] in bundle["text/html"]
    assert "53.9 GB" in drawn.alt and "25,720 blocks" in drawn.alt
    assert numbers(drawn.alt)  # its numbers, not only words
