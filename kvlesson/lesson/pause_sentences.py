"""Notebook 4's sentences: one step of a small run in words, the run told step by step, and
a run's pauses counted.

Chats of a small case are called A, B, C, ...; `pause_view` is what the pause explorer shows
for one position of its step slider (pure, like every view), and `trace_story` tells every
step in which something happened with the same words.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.arguments import whole
from kvlesson.lesson import quote
from kvlesson.lesson.quote import Say
from kvlesson.memory.units import counted
from kvlesson.serving.results import Step


@dataclass(frozen=True)
class PauseView:
    step: Step
    caption: Say


def chat_name(chat: int) -> str:
    """Chats of a small case are called A, B, C, ... in the course."""
    return chr(ord("A") + chat) if chat < 26 else f"#{chat}"


def pause_view(steps: list[Step], index: int, card: str = "") -> PauseView:
    """What happened in one step of a trace, in words; `card`, the sentence that names the
    card whose speed sets the clock (`PauseExplorer` gives it), ends the caption."""
    index = whole("step index", index, 0, len(steps) - 1)
    step = steps[index]
    events = []
    for chat in step.paused:
        events.append(
            f"a block ran out, so {chat_name(chat)}, the newest running chat, was "
            f"paused and gave all its blocks back"
        )
    for chat in step.joined:
        events.append(f"{chat_name(chat)} joined and read its {step.context[chat]:,} tokens")
    for chat in step.finished:
        events.append(f"{chat_name(chat)} wrote its last token and will free its blocks")
    happened = "; ".join(events) if events else "every running chat wrote one token"
    held = ", ".join(
        f"{chat_name(c)} {n} ({step.context[c]:,} tokens)" for c, n in step.held.items()
    )
    return PauseView(
        step,
        Say(
            f"Step {step.step} of {len(steps)}: {happened}. Blocks held while it ran: "
            f"{held or 'none'}; {step.free} free. Clock: {quote.ms(step.clock)}.{card}"
        ),
    )


def trace_story(steps: list[Step]) -> Say:
    """A small run told step by step: every step in which something happened, and the total."""
    lines = [
        pause_view(steps, i).caption
        for i, step in enumerate(steps)
        if step.joined or step.paused or step.finished
    ]
    pauses = sum(len(step.paused) for step in steps)
    return Say(
        "\n".join(f"* {line}" for line in lines)
        + f"\n\nThe run takes {len(steps)} steps, with {pauses} "
        f"{'pause' if pauses == 1 else 'pauses'}."
    )


def pause_count(result, share: int) -> Say:
    """One run's pauses in a sentence: how often, and how much cache was rebuilt."""
    return Say(
        f"At {quote.share(share)} and cap {result.cap}: {counted(result.pauses, 'pause')}, "
        f"{quote.count(result.rebuilt_tokens)} tokens of cache rebuilt, "
        f"on average {quote.average(result.avg_running, 'chats')} running, "
        f"{quote.count(result.tokens_per_s)} tokens/s."
    )
