"""What a self-check's stamp holds: per probe a salt and the salted hash of the right answer,
and the hints of the known mistakes it can name.

The build (`kvlesson.authoring.stamping`) runs the instructor's answer and every known mistake
of it in the notebook's kernel; this module turns what they gave into the stamp of one
`verify` call (`make_stamp`), which the notebook's setup cell then loads
(`kvlesson.authoring.stamp_places`). A hint is sealed with the answers that earn it
(`kvlesson.grading.checks.messages.seal`): nothing in a release reads as an answer.
"""

from __future__ import annotations

import hashlib
import json

from kvlesson.authoring.key_mistakes import one_mistake
from kvlesson.grading.checks import selfcheck
from kvlesson.grading.checks.messages import seal, words_digest


def salt_for(*parts: object) -> str:
    """A salt per probe, the same at every build of the same setting (stable diffs)."""
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:16]


def make_stamp(
    entry: dict, wrong: list[dict], index: int, where: str, named: set[str] | None = None
) -> str:
    """The stamp of one verify call: the setting; per probe a salt and the hash of the right
    answer; and the hints: each known mistake's words, sealed with its answers
    (`kvlesson.grading.checks.messages.seal`), and the hashes of what it gives on every probe
    but the yes-or-no ones (None there: a yes or no never names a mistake, any wrong one is
    every mistake's; the numbers beside it do). A hint is kept only when the mistake gives an
    answer on each such probe and no mistake with other words gives the same answers
    (`unique_hints`); with `named` (the words the key names mistakes in), only a hint the key
    can name too: the self-check, the feedback and the report name the same mistakes."""
    salts = [
        salt_for(where, index, number, probe["label"], json.dumps(entry["setting"]))
        for number, probe in enumerate(entry["probes"])
    ]
    counted = [probe["kind"] != "yes_no" for probe in entry["probes"]]
    hints = []
    if any(counted):
        right = tuple(p["normal"] for p, c in zip(entry["probes"], counted) if c)
        for words, values in unique_hints(entry, wrong, index, right, counted):
            if named is not None and words not in named:
                continue
            given = iter(values)
            hashes = [
                selfcheck.digest(salt, next(given)) if c else None
                for salt, c in zip(salts, counted)
            ]
            hints.append(
                {
                    "said": seal(words, salts[0], list(values)),
                    "named": words_digest(words),
                    "hashes": hashes,
                }
            )
    probes = [
        {"salt": salt, "hash": selfcheck.digest(salt, probe["normal"])}
        for salt, probe in zip(salts, entry["probes"])
    ]
    return json.dumps(
        {"setting": entry["setting"], "probes": probes, "hints": hints}, separators=(",", ":")
    )


def unique_hints(
    entry: dict, wrong: list[dict], index: int, right: tuple, counted: list[bool] | None = None
) -> list[tuple[str, tuple]]:
    """(words, what the mistake gives on each probe `counted` keeps: by default all) for each
    known mistake of a verify call that gives an answer on each of them (one that raises
    shows its error instead) and a wrong one somewhere, once per set of answers, and only
    where the mistakes giving those answers are one
    (`kvlesson.authoring.key_mistakes.one_mistake`; the cell's `hints=` words first)."""
    found: dict[tuple, list[dict]] = {}
    for mistake in wrong:
        given = mistake["values"][index]
        values = tuple(v for v, c in zip(given, counted or [True] * len(given)) if c)
        if values != right and all(v is not None for v in values):
            words = entry["hints"].get(mistake["mistake"], mistake["hint"])
            found.setdefault(values, []).append({**mistake, "words": words})
    return [(same[0]["words"], values) for values, same in found.items() if one_mistake(same)]


def hint_words(entry: dict, wrong: list[dict], index: int) -> list[str]:
    """The words of every hint a verify call's self-check could give, before the key's
    filter (as `make_stamp` picks them)."""
    counted = [probe["kind"] != "yes_no" for probe in entry["probes"]]
    right = tuple(p["normal"] for p, c in zip(entry["probes"], counted) if c)
    return (
        [words for words, _ in unique_hints(entry, wrong, index, right, counted)]
        if any(counted)
        else []
    )
