"""Which card a figure is drawn on, said every time, and said again where it changes.

The course reads one card two ways. Notebooks 1 to 4 (and 6, and the toy's
explorers) take the data sheet at its word, "80 GB" as 80e9 bytes, with the
toy's fixed reserve of 2 GB: their figures are the lesson's. A real server
takes its share of the total the card reports (`cudaMemGetInfo`, a little under
its GiB) and measures what profiling takes (3 GB assumed in notebook 5). The
same share then gives another pool. So every setting line and explorer names
its reading (`card_phrase`, `card_tag`), and every notebook that changes reading
says so in one sentence with what it changes (`switch_sentence`);
tests/lesson/test_one_card.py holds the notebooks to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.lesson import quote
from kvlesson.lesson.quote import Say
from kvlesson.memory.floor import RESERVE_BYTES, memory_parts
from kvlesson.memory.specs import GIB, GPU, Model, as_measured
from kvlesson.memory.startup import PROFILED_BYTES

SWITCH = "**Which card.**"  # how a switch sentence starts, so a reader (and a test) finds it


@dataclass(frozen=True)
class Reading:
    """A card as one part of the course draws it: by its data sheet or as vLLM measures it,
    with the reserve that goes with that reading."""

    gpu: GPU
    measured: bool
    reserve_bytes: float

    @property
    def name(self) -> str:
        """The card's own name, without what `as_measured` adds to it."""
        return self.gpu.name.split(" (")[0]

    @property
    def card(self) -> GPU:
        """The card as this reading draws it: its data sheet's size, or its measured total."""
        return as_measured(self.gpu) if self.measured else self.gpu

    @property
    def memory_bytes(self) -> int:
        return self.card.memory_bytes

    @property
    def size(self) -> str:
        """The memory as the reading writes it: '80.0 GB', or '79.22 GiB, 85.1 GB'."""
        if self.measured:
            return f"{self.memory_bytes / GIB:.2f} GiB, {quote.gb(self.memory_bytes)}"
        return quote.gb(self.memory_bytes)

    @property
    def reserve(self) -> str:
        """The reserve in the reading's words: the toy's fixed figure, or what vLLM profiles."""
        if self.measured or self.reserve_bytes == PROFILED_BYTES:
            return f"{quote.gb(self.reserve_bytes)} assumed for what profiling takes"
        return f"the toy's fixed reserve of {quote.gb(self.reserve_bytes)}"

    @property
    def how(self) -> str:
        """'as vLLM measures it' or 'as its data sheet reads it'."""
        return "as vLLM measures it" if self.measured else "as its data sheet reads it"


def toy(gpu: GPU, reserve_bytes: float = RESERVE_BYTES) -> Reading:
    """The lesson's reading: the data sheet's size and the toy's fixed reserve."""
    return Reading(gpu, False, reserve_bytes)


def real(gpu: GPU, reserve_bytes: float = PROFILED_BYTES) -> Reading:
    """vLLM's reading: the total cudaMemGetInfo reports, and what profiling takes (a card with
    no measured total keeps its data sheet's size, with the profiled reserve)."""
    return Reading(gpu, gpu.measured_bytes is not None, reserve_bytes)


def card_phrase(reading: Reading) -> str:
    """The card, its reading and its reserve, in the words every setting line uses:
    'the A100 80GB as its data sheet reads it (80.0 GB), with the toy's fixed reserve of
    2.0 GB'."""
    return f"the {reading.name} {reading.how} ({reading.size}), with {reading.reserve}"


def card_line(reading: Reading) -> Say:
    """The card a section draws, as a sentence of its own: 'The card: the H100 80GB as vLLM
    measures it (79.22 GiB, 85.1 GB), with 3.0 GB assumed for what profiling takes.'"""
    return Say(f"The card: {card_phrase(reading)}.")


def card_tag(gpu: GPU, reserve_bytes: float) -> str:
    """The short form an explorer's caption starts with, for a card as given: an
    `as_measured` card is vLLM's reading, any other the data sheet's."""
    measured = gpu.measured_bytes is not None and gpu.measured_bytes == gpu.memory_bytes
    reading = Reading(gpu, measured, reserve_bytes)
    reserve = "profiled" if measured else "reserve"
    return f"{reading.name} {reading.how} ({reading.size}; {quote.gb(reserve_bytes)} {reserve})"


def switch_sentence(
    before: Reading,
    where: str,
    after: Reading,
    share: int,
    model: Model,
    here: str = "this notebook",
) -> Say:
    """One sentence for a notebook that draws a card another way than `where` did: both
    readings, and the pool each gives `model` at the same `share`."""
    if before.name != after.name or card_phrase(before) == card_phrase(after):
        raise ValueError(
            f"a switch is one card read two ways, got {card_phrase(before)!r} "
            f"and {card_phrase(after)!r}"
        )
    pools = [
        max(memory_parts(share, reading.card, model, reading.reserve_bytes).pool_bytes, 0)
        for reading in (before, after)
    ]
    return Say(
        f"{SWITCH} {where[0].upper() + where[1:]} drew {card_phrase(before)}; {here} draws "
        f"it {after.how} ({after.size}), with {after.reserve}. At the same {share}% share "
        f"{model.name} gets a cache pool of {quote.gb(pools[1])} here against "
        f"{quote.gb(pools[0])} there, so compare a figure only with figures of the same "
        f"reading."
    )
