"""One quoted number: its value, the lesson's way of writing it, and what it is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One quoted number: its value, the lesson's way of writing it, what it is."""

    value: float | int | bool | None
    text: str
    about: str
