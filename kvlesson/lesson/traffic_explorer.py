"""Notebook 6's explorer: a day of chats, with arrival-rate, budget and cap sliders.

`traffic_view` serves the day with the fast engine and says what users
feel; `TrafficChart` draws each chat's time to first token and time per
output token in the order the chats arrived, and the gaps between tokens
(ITL) that a frozen step lengthens (fixed log axes, so the dots move, not the
scale); `TrafficExplorer` wires the sliders to them. Needs the
course extra (ipywidgets).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from matplotlib.figure import Figure

from kvlesson.arguments import positive, whole
from kvlesson.lesson import quote
from kvlesson.lesson.card_sentences import card_tag
from kvlesson.lesson.explorers import Explorer, slider
from kvlesson.lesson.figures import BLUE, DARK_GREY, LABEL_BOX, MIN_TEXT_PT, VERMILION, WIDTH_IN
from kvlesson.memory.floor import RESERVE_BYTES
from kvlesson.memory.specs import A100_80GB
from kvlesson.memory.units import counted
from kvlesson.serving.arrivals import poisson_arrivals
from kvlesson.serving.chats import Chat, as_chats, lesson_chats
from kvlesson.serving.fast_engine import serve_fast
from kvlesson.serving.latency import Latency, chat_times, latency
from kvlesson.serving.sweep import CAPS

RATES = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0)  # chats a second
BUDGETS = (128, 512, 2_048, 8_192, 0)  # tokens a step; 0 on the slider: no budget
DAY = 300  # chats in the explorer's day
MOST_CAP = BUDGETS[0]  # the cap slider stops at the smallest budget (vLLM: budget >= cap)
# The fixed axes: TTFT from 5 ms to 10 minutes, TPOT and the gaps from 5 ms to 10 s (a longer
# worst gap is drawn at the top, its length written on it).
TTFT_RANGE, TPOT_RANGE = (0.005, 600.0), (0.005, 10.0)


@dataclass(frozen=True)
class TrafficView:
    """One setting's day: per chat (arrival order) TTFT and TPOT, and the run's report."""

    rate: float
    budget: int | None
    cap: int
    ttft_s: list[float]
    tpot_s: list[float]
    report: Latency
    card: str = ""

    @property
    def caption(self) -> str:
        r = self.report
        budget = "no budget" if self.budget is None else f"a budget of {self.budget:,} tokens"
        return (
            f"**{counted(self.rate, 'chat')} a second, cap {self.cap}, {budget}:** time to first "
            f"token p50 {r.ttft.p50:.2f} s, p95 {r.ttft.p95:.2f} s, p99 {r.ttft.p99:.2f} s; "
            f"TPOT p95 {r.tpot.p95 * 1000:.1f} ms; every gap between tokens (ITL) p99 "
            f"{quote.duration(r.itl.p99)}, worst {quote.duration(r.itl.worst)}; "
            f"{r.tokens_per_s:,.0f} tokens/s; at most {r.most_waiting} waiting; "
            f"{counted(r.pauses, 'pause')}." + (f" Card: {self.card}." if self.card else "")
        )


def traffic_view(
    chats: list[Chat], rate: float, budget: int | None, cap: int, seed: int = 0, **settings
) -> TrafficView:
    """The chats arriving at `rate` a second (Poisson, `seed`), served with this budget and cap."""
    result = serve_fast(poisson_arrivals(chats, rate, seed), cap, budget=budget, **settings)
    times = chat_times(result).sort_values("sent_s")
    card = card_tag(settings.get("gpu", A100_80GB), settings.get("reserve_bytes", RESERVE_BYTES))
    return TrafficView(
        rate, budget, cap, list(times["ttft_s"]), list(times["tpot_s"]), latency(result), card
    )


class TrafficChart:
    """Each chat's TTFT (left) and TPOT (right) in arrival order, the p95 of each as a dashed
    line; on the right also every gap between tokens (ITL) pooled: its p99 and its worst, as
    named lines, since a frozen step shows there and hardly in a chat's TPOT."""

    def __init__(self, view: TrafficView):
        self.figure = Figure(figsize=(WIDTH_IN, 3.6), layout="constrained")
        self.axes = self.figure.subplots(1, 2)
        self.dots, self.p95 = [], []
        for ax, label, limits, colour, marker in (
            (self.axes[0], "time to first token (s)", TTFT_RANGE, BLUE, "o"),
            (self.axes[1], "time per output token, gap (s)", TPOT_RANGE, VERMILION, "s"),
        ):
            self.dots.append(
                ax.plot([], [], marker, color=colour, markersize=2.5, linestyle="none")[0]
            )
            self.p95.append(ax.axhline(1, color=DARK_GREY, linewidth=2, linestyle="--"))
            ax.set_yscale("log")
            ax.set_ylim(*limits)
            ax.set_xlim(0, len(view.ttft_s))
            ax.set_xlabel("chats, in the order they arrived")
            ax.set_ylabel(label)
            ax.tick_params(labelsize=MIN_TEXT_PT)
            ax.grid(alpha=0.3)
        gaps = self.axes[1]
        self.itl = [
            gaps.axhline(1, color="black", linewidth=1.5, linestyle=style) for style in (":", "-.")
        ]
        self.itl_names = [
            gaps.text(
                0.98,
                1,
                "",
                transform=gaps.get_yaxis_transform(),
                ha="right",
                va="bottom",
                fontsize=MIN_TEXT_PT,
                bbox=LABEL_BOX,
            )
            for _ in self.itl
        ]
        self.title = self.figure.suptitle(
            "dashed lines: p95 across chats; dotted: every gap "
            "between tokens (ITL), p99; dash-dot: the worst gap",
            fontsize=MIN_TEXT_PT,
        )
        self.moving = [*self.dots, *self.p95, *self.itl, *self.itl_names]
        self.alt = ""
        self.update(view)

    def update(self, view: TrafficView) -> None:
        r = view.report
        for dots, line, values, spread in zip(
            self.dots, self.p95, (view.ttft_s, view.tpot_s), (r.ttft, r.tpot)
        ):
            dots.set_data(range(len(values)), values)
            line.set_ydata([spread.p95] * 2)
        top = TPOT_RANGE[1]
        for line, name, (words, gap) in zip(
            self.itl, self.itl_names, (("ITL p99", r.itl.p99), ("worst gap", r.itl.worst))
        ):
            shown = min(gap, top)  # past the axis: drawn at its top, the name says how long
            line.set_ydata([shown] * 2)
            name.set_position((0.98, shown))
            name.set_text(f"{words} {gap * 1000:,.1f} ms")
        self.alt = (
            f"Two dot charts of the {len(view.ttft_s)} chats in the order they arrived, "
            f"log scales ({view.caption.replace('**', '').split(':')[0]}). Left: time to "
            f"first token per chat, p95 {r.ttft.p95:.2f} s. Right: time per output token "
            f"per chat, p95 {r.tpot.p95 * 1000:.1f} ms; every gap between tokens (ITL) "
            f"p99 {r.itl.p99 * 1000:,.1f} ms, worst {r.itl.worst * 1000:,.1f} ms."
        )


class TrafficExplorer(Explorer):
    """Arrival-rate, budget and cap sliders over a day of chats (notebook 6).

    `budget` is one of BUDGETS (0: no budget); `cap` at most the smallest budget.
    """

    def __init__(
        self,
        chats: Iterable[Chat] | None = None,
        rate: float = 1.0,
        budget: int = 512,
        cap: int = 64,
        **settings,
    ):
        self.chats = lesson_chats(n=DAY) if chats is None else as_chats(chats)
        self.settings = settings
        rate = positive("rate", rate)
        cap = whole("cap", cap, 1, MOST_CAP)
        if budget not in BUDGETS:
            raise ValueError(
                f"budget must be one of {', '.join(map(str, BUDGETS))} "
                f"(0: no budget), got {budget!r}"
            )
        self.rate = slider(
            "arrivals (chats/s)", [(f"{r:g}", r) for r in sorted(set(RATES) | {rate})], rate
        )
        self.budget = slider(
            "token budget a step", [(f"{b:,}" if b else "none", b) for b in BUDGETS], budget
        )
        self.cap = slider(
            "cap (most chats at once)", sorted({c for c in CAPS if 2 <= c <= MOST_CAP} | {cap}), cap
        )
        controls = [self.rate, self.budget, self.cap]
        super().__init__(controls, TrafficChart(self.compute((rate, budget, cap))))
        self.refresh()

    def compute(self, setting: tuple) -> TrafficView:
        rate, budget, cap = setting
        return traffic_view(self.chats, rate, budget or None, cap, **self.settings)

    def show(self, view: TrafficView) -> str:
        self.chart.update(view)
        return view.caption
