"""Notebook 5's explorer: a real launch, per GPU, from a card, a model and vLLM's flags.

The card is taken as vLLM measures it (its cudaMemGetInfo total), the rules are vLLM 0.33's.

Pick a card, a model (or paste a `config.json`), the tensor-parallel size,
the weights' and the cache's precision, the share and the longest request;
see one GPU's floor plan, the tokens of its pool and the requests of full
length that fit at once, or the start-up error worded as vLLM words it.
`real_view` computes what to show (a test calls it without a browser);
`RealServerExplorer` wires the controls to it. Needs the course extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as w
from matplotlib.figure import Figure

from kvlesson.lesson import quote
from kvlesson.lesson.explorers import Explorer, share_slider, slider
from kvlesson.lesson.figures import BLUE, GREEN, GREY, ORANGE, VERMILION, WARNING, WIDTH_IN
from kvlesson.lesson.real_server_launches import TWO_H100, Launch
from kvlesson.lesson.stacked_bar import StackedBar, card_segments
from kvlesson.memory.specs import GPU, GPUS, MODELS, Model
from kvlesson.memory.startup import PROFILED_BYTES, VLLM_SHARE, Startup, startup
from kvlesson.memory.units import gib

PASTED = "pasted config.json"  # the model choice that reads the text box
TP_CHOICES = (1, 2, 4, 8)  # GPUs one model is split over: the sizes of one server's NVLink group
LONGEST_CHOICES = (4_096, 8_192, 32_768, 131_072, 262_144)  # common max_model_len values
PLAN = (
    ("weights / tp", BLUE, ""),
    ("profiled", ORANGE, "//"),
    ("KV pool", GREEN, "--"),
    ("unused", GREY, ".."),
)


@dataclass(frozen=True)
class RealView:
    """What the explorer shows: the launch (None if the model could not be built) and a caption."""

    launch: Startup | None
    caption: str


def real_view(
    gpu: GPU,
    model: Model | str,
    tp: int,
    weights: str,
    cache: str,
    share: int,
    longest: int,
    reserve_bytes: float = PROFILED_BYTES,
) -> RealView:
    """One launch per GPU, or the reason it cannot be sized or started.

    `model` is a Model or the text of a config.json; a config that cannot be
    sized, a tp the model cannot take, or a bad precision is shown, not raised.
    """
    if isinstance(model, str) and not model.strip():
        return RealView(None, "**Paste a config.json** in the box above to size its model.")
    try:
        if isinstance(model, str):
            model = Model.from_hf_config(json.loads(model), name="pasted model")
        model = model.with_dtypes(weights=weights, cache=cache)
        refused = _refused_before_loading(model, tp, longest)
        if refused is not None:  # vLLM stops before it loads anything: there is no floor plan
            return RealView(None, refused)
        launch = startup(gpu, model, share, longest, reserve_bytes, tp)
    except (ValueError, TypeError) as error:  # json.JSONDecodeError is a ValueError
        return RealView(None, f"**This cannot be sized:** {error}")
    if not launch.loads:  # stopped in step 2: no cache check, no floor plan to draw
        return RealView(
            None,
            f"**The server does not start:** it runs out of memory while it "
            f"loads the weights (step 2). {launch.error()}",
        )
    return RealView(launch, _plan(launch) + _outcome(launch))


def _refused_before_loading(model: Model, tp: int, longest: int) -> str | None:
    """What vLLM says when the launch's configuration alone stops it: a split the model
    cannot take, or a max_model_len past its config's (None: neither)."""
    refusal = model.tp_refusal(tp)
    if refusal is not None:
        return (
            f"**The server does not start.** {model.name} cannot be split over {tp} GPUs; "
            f"vLLM says: {refusal}"
        )
    refusal = model.max_len_refusal(longest)
    if refusal is not None:
        return (
            f"**The server does not start.** {model.name}'s config allows "
            f"{model.context:,} tokens, not {longest:,}; vLLM says: {refusal}"
        )
    return None


def _plan(launch: Startup) -> str:
    """One GPU's floor plan in a sentence: budget, weights, what profiling took, the pool."""
    p = launch.parts
    gpus = "One GPU" if launch.tp == 1 else f"Each of {launch.tp} GPUs"
    return (
        f"{gpus} ({p.gpu.name}, {p.model.name}): budget "
        f"{quote.gb(p.allowed_bytes)}, weights {quote.gb(p.weights_bytes, 2)}, profiled "
        f"{quote.gb(p.reserve_bytes)}, KV pool {quote.gb(max(p.pool_bytes, 0), 2)}. "
    )


def _outcome(launch: Startup) -> str:
    """What the pool holds and what vLLM logs of it, or the error it stops with; and what
    may still stop a launch the check lets through (a hybrid model's cap)."""
    if not launch.starts:
        return f"**The server does not start.** vLLM says: {launch.error()}"
    per_token = launch.parts.model.cache_bytes_per_token(launch.tp)
    held = (
        f"The pool holds **{quote.count(launch.tokens)} tokens** "
        f"({quote.count(per_token)} bytes a token per GPU); one request of "
        f"{launch.longest:,} needs {gib(launch.needed_bytes)} of it, so "
        f"**{launch.concurrency:.2f} requests of full length** fit at once (vLLM logs "
        f'"Maximum concurrency for {launch.longest:,} tokens per request: '
        f'{launch.concurrency:.2f}x").'
    )
    return held if launch.warning is None else f"{held} **Beware:** {launch.warning}"


class PlanBar:
    """One GPU's memory as one bar, in percent of the card, so every card shares the axis."""

    def __init__(self):
        self.figure = Figure(figsize=(WIDTH_IN, 2.4), layout="constrained")
        self.ax = self.figure.add_subplot()
        self.bar = StackedBar.on(self.ax, PLAN, VERMILION)
        self.ax.set_yticks([])
        self.ax.set_ylim(-0.5, 0.6)
        self.ax.set_xlim(0, 100)
        self.ax.set_xlabel("one GPU's memory (% of the card); the dashed line is the share")
        self.bar.legend(self.figure)
        self.ax.set_title(" " * 80, fontsize=10)  # room for the longest title
        self.moving = [*self.bar.artists, self.ax.title]
        self.alt = ""

    def update(self, launch: Startup | None) -> None:
        """Draw one GPU of `launch`, or an empty bar when nothing could be sized."""
        if launch is None:
            self.bar.clear()
            self.ax.set_title("nothing to draw: see the message above", color=WARNING, fontsize=10)
            self.alt = "An empty bar: nothing could be sized (the message above says why)."
            return
        p = launch.parts
        segments = card_segments(p)
        self.bar.show(
            segments,
            p.allowed_bytes,
            p.weights_bytes + p.reserve_bytes,
            p.gpu_bytes,
            p.gpu_bytes / 100,
            lambda part, width: quote.gb(width),
            least=0.08,
        )
        verdict = (
            f"{quote.count(launch.tokens)} tokens, {launch.concurrency:.2f} at full length"
            if launch.starts
            else "does not start"
        )
        self.ax.set_title(
            f"{p.gpu.name}, TP={p.tp}, {p.model.name}: {verdict}",
            color="black" if launch.starts else WARNING,
            fontsize=10,
        )
        sizes = ", ".join(
            f"{name} {quote.gb(width)}" for (name, _, _), (_, width) in zip(PLAN, segments)
        )
        self.alt = (
            f"Bar chart of one GPU's memory in percent of the card ({p.gpu.name}, "
            f"{quote.gb(p.gpu_bytes)}), {p.model.name} split over {p.tp}, a dashed line "
            f"at the {p.share}% share ({quote.gb(p.allowed_bytes)}): {sizes}. "
            + (
                f"The pool holds {quote.count(launch.tokens)} tokens, "
                f"{launch.concurrency:.2f} requests of full length."
                if launch.starts
                else "The server does not start."
            )
        )


class RealServerExplorer(Explorer):
    """Card, model (or a pasted config.json), TP, precisions, share and longest request."""

    def __init__(
        self,
        gpu: str = "H100_80GB",
        model: str = "LLAMA_31_8B",
        tp: int = 1,
        share: int = VLLM_SHARE,
        longest: int = 131_072,
        reserve_bytes: float = PROFILED_BYTES,
    ):
        self.reserve_bytes = reserve_bytes
        self.gpu = w.Dropdown(description="card", options=list(GPUS), value=gpu.upper())
        # A course for a model's config.json (kvlesson for --model-config): MODEL names the
        # file beside the notebook, which starts out pasted.
        pasted = model.lower().endswith(".json")
        self.model = w.Dropdown(
            description="model",
            options=[*MODELS, PASTED],
            value=PASTED if pasted else model.upper(),
        )
        self.config = w.Textarea(
            description="config.json",
            value=Path(model).read_text() if pasted else "",
            placeholder=f"paste a config.json here, then pick '{PASTED}' as the model",
            layout=w.Layout(width="640px", height="80px"),
        )
        self.tp = slider("GPUs (tensor parallel)", list(TP_CHOICES), tp)
        self.weights = w.Dropdown(
            description="weights", options=["bf16", "fp16", "fp8"], value="bf16"
        )
        self.cache = w.Dropdown(description="KV cache", options=["auto", "fp8"], value="auto")
        self.share = share_slider(share)
        choices = sorted(set(LONGEST_CHOICES) | {longest})
        self.longest = slider("max_model_len (tokens)", [(f"{n:,}", n) for n in choices], longest)
        self.preset = w.Button(
            description=preset_name(TWO_H100),
            layout=w.Layout(width="auto"),
            tooltip="set every control to section 5's launch",
        )
        self.preset.on_click(lambda _: self.launch(TWO_H100))
        self.holding = False
        controls = [
            self.gpu,
            self.model,
            self.config,
            self.weights,
            self.cache,
            self.tp,
            self.share,
            self.longest,
        ]
        super().__init__(controls, PlanBar())
        self.box.children = (self.preset, *self.box.children)
        self.refresh()

    def launch(self, preset: Launch) -> None:
        """Set every control to `preset` (weights in BF16, the cache as computed), then redraw
        once."""
        with self.held():
            self.gpu.value, self.model.value, self.tp.value = preset.gpu, preset.model, preset.tp
            self.share.value, self.longest.value = preset.share, preset.longest
            self.weights.value, self.cache.value = "bf16", "auto"
        self.refresh()

    @contextmanager
    def held(self) -> Iterator[None]:
        """No redraw while several controls change together."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False

    def _changed(self, change) -> None:
        if not self.holding:
            super()._changed(change)

    def compute(self, setting: tuple) -> RealView:
        gpu, model, config, weights, cache, tp, share, longest = setting
        return real_view(
            GPUS[gpu],
            config if model == PASTED else MODELS[model],
            tp,
            weights,
            cache,
            share,
            longest,
            self.reserve_bytes,
        )

    def show(self, view: RealView) -> str:
        self.chart.update(view.launch)
        return view.caption


def preset_name(preset: Launch) -> str:
    """The preset button's words: the model, the GPUs, the share and max_model_len."""
    return (
        f"§5's launch: {MODELS[preset.model].name} on {preset.tp} × {GPUS[preset.gpu].name}, "
        f"share {preset.share}%, max_model_len {preset.longest:,}"
    )
