"""For the key: the answers each known mistake gives on a hidden test, and the words it is
named in.

The build runs every known mistake of an answer cell (`kvlesson.authoring.mutants`) on
the hidden test's own inputs; the key keeps, for each exercise, the answers a mistake gives
there with the words of its self-check hint, when those answers name one mistake only and
its words describe them. Where a mistake raises on an input, the key keeps "raises" there
(the student's own error message need not be the mutation's), and its answers elsewhere.
The marking (`kvlesson.grading.marking.diagnosis`) then names the mistake a student's wrong
answer matches.
"""

from __future__ import annotations

WHOLE_NUMBERS = ("count", "count_or_none")  # the probe kinds that ask for an int
FLOAT_MISTAKES = ("float", "true_div")  # the mistakes whose hints say the answer is a float
RAISES = "raises"  # a key's answer where a mistake raises, whatever its error's words


def as_keyed(answer: str) -> str:
    """An answer as the key compares it: an error of any kind and words is "raises"."""
    return RAISES if answer.startswith("error:") else answer


def key_mistakes(
    wrong: list[dict], index: int, right: list[dict], hints: dict[str, str]
) -> list[dict]:
    """For the key: the answers each known mistake gives on the hidden test at `index` of
    its cell's probe calls (`right`: that test's probes, with their right normal forms),
    with the words of its self-check hint (`hints`: the cell's own words for a mistake,
    else the mistake's). An answer is named only when the mistakes that give it are one
    (`one_mistake`): two different mistakes with one answer are a coincidence, not a
    diagnosis. Kept: a
    mistake whose words describe what it gives on some input (`_described`)."""
    right_answers = tuple(probe["normal"] for probe in right)
    found: dict[tuple, list[dict]] = {}
    for row in wrong:
        cells = row.get("answers") or []
        answers = cells[index] if index < len(cells) else []
        if (
            len(answers) != len(right)
            or tuple(answers) == right_answers
            or not any(
                _described(row["mistake"], probe, answer) for probe, answer in zip(right, answers)
            )
        ):
            continue
        keyed = [as_keyed(answer) for answer in answers]
        found.setdefault(tuple(keyed), []).append(
            {
                "mistake": row["mistake"],
                "words": hints.get(row["mistake"], row["hint"]),
                "answers": keyed,
                "same": row.get("same", ""),
            }
        )
    return [
        {k: same[0][k] for k in ("mistake", "words", "answers")}
        for same in found.values()
        if one_mistake(same)
    ]


def one_mistake(rows: list[dict]) -> bool:
    """Whether known mistakes that give one answer are one mistake, which a hint may name:
    they say the same words, or they are one wrong function (the same non-empty "same",
    what each gives on every input the build tried), in which case the first, in the
    order of MISTAKES, names them."""
    return len({row["words"] for row in rows}) == 1 or (
        len({row.get("same", "") for row in rows}) == 1 and bool(rows[0].get("same"))
    )


def _described(mistake: str, probe: dict, answer: str) -> bool:
    """Whether a known mistake's `answer` on one input is one its words describe: a wrong
    answer of the kind asked for (what a self-check gives this mistake's hint for), or a
    float where a whole number is asked, for the mistakes whose words say so. Not: an
    error, or another kind of answer (a float for yes or no)."""
    if answer == probe["normal"]:
        return False
    if answer.startswith("kind:"):
        return (
            answer == "kind:float" and mistake in FLOAT_MISTAKES and probe["kind"] in WHOLE_NUMBERS
        )
    return not answer.startswith("error:")
