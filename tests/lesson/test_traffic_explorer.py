"""Notebook 6's explorer and figures, without a browser: the view, the sliders, the axes."""

from __future__ import annotations

import math

import pytest

import kvlesson as kv
from kvlesson.lesson import traffic_charts
from kvlesson.lesson.traffic_explorer import (
    DAY,
    TPOT_RANGE,
    TTFT_RANGE,
    TrafficExplorer,
    traffic_view,
)

CHATS = kv.lesson_chats(n=60)


def test_the_view_is_the_fast_engines_day():
    view = traffic_view(CHATS, 1.0, 512, 16)
    result = kv.serve(kv.poisson_arrivals(CHATS, 1.0, 0), 16, budget=512)
    assert len(view.ttft_s) == len(CHATS)
    assert math.isclose(view.report.ttft.p95, kv.latency(result).ttft.p95, rel_tol=1e-9)
    assert "1 chat a second, cap 16, a budget of 512 tokens" in view.caption


def test_a_busier_day_waits_longer():
    calm, busy = traffic_view(CHATS, 0.2, 512, 4), traffic_view(CHATS, 5.0, 512, 4)
    assert busy.report.ttft.p95 > calm.report.ttft.p95
    assert busy.report.most_waiting > calm.report.most_waiting


def test_sliders_redraw_and_the_axes_stay():
    explorer = TrafficExplorer(CHATS)
    first = explorer.image.value
    limits = [ax.get_ylim() for ax in explorer.chart.axes]
    explorer.rate.value = 5.0
    explorer.budget.value = 0  # no budget
    assert "no budget" in explorer.caption.value and "5 chats a second" in explorer.caption.value
    assert explorer.image.value != first
    assert [ax.get_ylim() for ax in explorer.chart.axes] == limits == [TTFT_RANGE, TPOT_RANGE]
    assert explorer.chart.axes[0].get_xlim() == (0, len(CHATS))
    assert len(kv.lesson_chats(n=DAY)) == 300


def test_gap_and_queue_figures():
    steps = kv.trace([kv.Request(100, 30), kv.Request(2_000, 5, 0.05)], 4, longest=None, blocks=500)
    gaps = traffic_charts.token_gaps(steps, 0)
    assert len(gaps) == 29 and max(gaps) > 5 * min(gaps)  # the step that read 2,000 tokens
    figure = traffic_charts.gap_chart({"no budget": steps}, 0).figure
    assert len(figure.axes[0].lines) == 1
    run = kv.serve(
        [kv.Request(100, 30, 0.0), kv.Request(100, 30, 0.5)], 1, longest=None, blocks=500
    )
    figure = traffic_charts.queue_chart({"one": run}).figure
    assert len(figure.axes[0].lines) == 1


def test_the_queue_chart_shows_the_clients_a_proxy_turned_away():
    chats = [kv.Request(100, 300, 0.0)] * 5
    runs = {
        "proxy 2": kv.serve(chats, 8, blocks=100, longest=None, admission=2),
        "no proxy": kv.serve(chats, 8, blocks=100, longest=None),
    }
    inside, outside = traffic_charts.queue_chart(runs).figure.axes
    assert len(inside.lines) == len(outside.lines) == 2
    assert outside.get_ylabel() == "retrying outside"
    proxied, open_door = (line.get_ydata() for line in outside.lines)
    assert max(proxied) == 3 and max(open_door) == 0  # three refused at once; none without it


def test_any_cap_up_to_the_smallest_budget():
    explorer = TrafficExplorer(CHATS, cap=100, rate=0.7)
    assert explorer.cap.value == 100 and explorer.rate.value == 0.7


@pytest.mark.parametrize(
    "settings_, message",
    [
        (dict(cap=129), r"cap must be in 1\.\.128"),
        (dict(budget=300), r"budget must be one of 128, 512, 2048, 8192, 0 \(0: no budget\)"),
        (dict(rate=0), r"rate must be > 0"),
    ],
)
def test_bad_explorer_settings_are_named(settings_, message):
    with pytest.raises(ValueError, match=message):
        TrafficExplorer(CHATS, **settings_)
