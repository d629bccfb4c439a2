"""Stamp mode: a self-check run by the build, which writes the instructor's answers down.

`kvlesson build` starts the instructor notebook's kernel with `STAMP_FILE` set. Then
`selfcheck.verify` and `selfcheck.record` judge nothing: each appends what the instructor's
solution gives on its probes to that file (`stamp_entry`), and after the build swaps in a
known mistake of the answer, `wrong_values` appends what the mistake gives. The build turns
those lines into the stamps of the release (salted hashes, never an answer) and the
grader's key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kvlesson.grading.checks.probes import Probe, answer_text, encode, error_of, evaluate, normal

PARAMETERS = ("GPU", "MODEL", "SHARE", "LONGEST", "CAP")  # each notebook's parameters cell
STAMP_FILE = "KVLESSON_STAMP_FILE"  # set by the build: stamp mode, entries appended here

# Stamp mode is fixed when the kernel imports this module (the build starts the kernel with
# the variable set); a student's cell that sets it later changes nothing.
_STAMP_PATH = os.environ.get(STAMP_FILE)


def stamping() -> Path | None:
    """The build's stamp file in stamp mode; None in a student's or the grader's kernel."""
    return Path(_STAMP_PATH) if _STAMP_PATH else None


def setting_of(names: dict) -> dict:
    """The notebook's parameters (GPU, MODEL, SHARE, LONGEST, CAP) from its globals."""
    return {name: names.get(name) for name in PARAMETERS}


_PENDING: list[tuple[str, list[Probe], dict]] = []  # the calls of the last test cell


def start_cell() -> None:
    """A new test cell begins."""
    _PENDING.clear()


def stamp_entry(role: str, probes: list[Probe], names: dict, extra: dict) -> None:
    """Append the right answers of the instructor's solution to the stamp file: `role` is
    "verify" or "record", `names` the notebook's globals, `extra` what else the build keeps
    of the call (its hints, its forbidden functions, its grade id)."""
    entry = {"role": role, **extra, "setting": setting_of(names), "probes": []}
    for probe in probes:
        value = evaluate(probe)
        entry["probes"].append(
            {
                "label": probe.label,
                "kind": probe.kind,
                "unit": probe.unit,
                "places": probe.places,
                "scale": probe.scale,
                "normal": normal(probe, value),
                "expected": encode(value),
            }
        )
    _PENDING.append((role, probes, entry))
    _append(entry)


def wrong_values(mistake: str, hint: str, same: str = "") -> None:
    """After the build swapped in a mutated answer: append what the probes of the last test
    cell give now, as the values of the known mistake `mistake`: their normal forms (None
    where there is none), hashed into the self-checks' hints, and their answer texts, which
    the grader's key keeps to name the mistake by value."""
    values, answers = [], []
    for _, probes, _ in _PENDING:
        row, texts = [], []
        for probe in probes:
            try:
                value = probe.get()
                encoded = encode(value)
            except Exception as error:
                row.append(None)
                texts.append(answer_text(probe, error_of(error)))
                continue
            try:
                row.append(normal(probe, value))
            except Exception:
                row.append(None)
            texts.append(answer_text(probe, encoded))
        values.append(row)
        answers.append(texts)
    _append(
        {
            "role": "mistake",
            "mistake": mistake,
            "hint": hint,
            "same": same,
            "values": values,
            "answers": answers,
        }
    )


def _append(row: dict) -> None:
    with open(stamping(), "a") as out:
        out.write(json.dumps(row) + "\n")
