"""What a self-check says of a wrong answer names only what the student did.

Each case runs `selfcheck.verify` on a stamp written out here (salted hashes of made-up right
answers, as the build would stamp them) and reads its message: a unit the answer looks like
and the one the question asks for, words by the kind of answer (never "the units and the
rounding": plainly to re-read the question, or the cell's own words), a right number given
as a float told apart from a wrong one, yes-or-no answers never named, and counted only where
the count cannot point at them, the cell's own words for what decides them, and the
message before the lines of the student's code when an answer raises.
"""

from __future__ import annotations

import json

import pytest

from kvlesson.grading.checks import selfcheck
from kvlesson.grading.checks.probes import NotYet, WrongKind

GPU = MODEL = SHARE = LONGEST = CAP = None  # a notebook's parameters, as a stamp holds them
few = [1.0, 2.0]  # a list the "notebook" holds, which a probe passes


def stamp(*answers: str, hints: list[dict] = ()) -> str:
    """A verify call's stamp whose right answers are the normal forms `answers`."""
    probes = [
        {"salt": f"s{n}", "hash": selfcheck.digest(f"s{n}", text)} for n, text in enumerate(answers)
    ]
    setting = {name: None for name in selfcheck.PARAMETERS}
    return json.dumps({"setting": setting, "probes": probes, "hints": list(hints)})


def said(probes: list, made: str, **hints) -> str:
    """The self-check's message for `probes` against the stamp `made`."""
    with pytest.raises((NotYet, WrongKind)) as raised:
        selfcheck.verify(probes, stamp=made, hints=hints or None)
    return str(raised.value)


def test_an_answer_in_another_unit_is_told_which_unit_it_looks_like():
    """Walk item 4: GB returned from a function that asks for bytes, ms for seconds."""
    gb = said(
        [selfcheck.number("pool_bytes(47)", lambda: 19.54, "GB", 2, scale=1e9)], stamp("num:19.54")
    )
    assert "looks like it is in GB; the question asks for bytes" in gb
    assert "is not the expected" not in gb
    ms = said(
        [selfcheck.number("prefill_floor_s(few)", lambda: 107.3, "ms", 2, scale=1e-3)],
        stamp("num:107.30"),
    )
    assert "looks like it is in ms; the question asks for seconds" in ms
    blocks = said([selfcheck.count("tokens_of(x)", lambda: 25_720, "tokens")], stamp("int:411520"))
    assert "looks like it is in blocks; the question asks for tokens" in blocks
    percent = said(
        [selfcheck.number("share_per_server(2)", lambda: 45.0, "share", 3)], stamp("num:0.450")
    )
    assert "looks like a percent; the question asks for a fraction of 1" in percent
    fraction = said(
        [selfcheck.count_or_none("lowest_share_for(9)", lambda: 0.23, "percent")],
        stamp("int:23"),
    )
    assert "looks like a fraction of 1; the question asks for a percent" in fraction
    assert "in share" not in fraction and "for share" not in percent  # walk item 18


def test_without_a_known_mistake_the_words_are_plain_or_the_cells_own():
    """Walk item 7: a guess at the mistake misleads (a "sum" for an answer read off a
    table, "where the count starts" for a product): with no known mistake and no words of
    its own, a cell says plainly that the answer is not right yet and to re-read the
    question; never the count's unit as if an index were a count (walk item 18)."""
    answers = {
        "count": said([selfcheck.count("paused_chat", lambda: 4, "chats")], stamp("int:2")),
        "number": said([selfcheck.number("x", lambda: 4.0, "GB", 1)], stamp("num:5.0")),
        "list": said(
            [selfcheck.number("rank(few, 50)", lambda: 4.0, "", 6)], stamp("num:5.000000")
        ),
        "none": said([selfcheck.count_or_none("share(9)", lambda: 4, "percent")], stamp("none")),
    }
    for kind, text in answers.items():
        assert "is not right yet. Re-read the question." in text, (kind, text)
        for guess in ("sum", "where the count", "goes through the list", "units and the rounding"):
            assert guess not in text, (kind, text)
    assert "count of chats" not in answers["count"]
    own = said(
        [selfcheck.count("steps(5)", lambda: 4, "steps")],
        stamp("int:5"),
        **{"else": "Re-read the budget's rule."},
    )
    assert "is not right yet. Re-read the budget's rule." in own
    assert "Re-read the question" not in own


def test_a_right_number_as_a_float_is_told_so_and_a_wrong_float_is_told_it_is_wrong():
    """Walk item 29: the value is checked before the type, so a wrong float is not told to
    wrap itself in int(...)."""
    right = said(
        [selfcheck.count("blocks_in(41e9)", lambda: 19_550.0, "blocks")], stamp("int:19550")
    )
    assert "is the right number, but a float" in right and "int(...)" in right
    wrong = said([selfcheck.count("block_bytes", lambda: 2048.0, "bytes")], stamp("int:2097152"))
    assert "looks like it is in KiB; the question asks for bytes" in wrong
    assert "also be a whole number" in wrong and "is the right number" not in wrong


def test_yes_or_no_answers_are_never_named_nor_counted_where_the_count_points_at_them():
    """Walk item 6: a count that identifies the answers (1 of 1, n of n) or a name would let
    flipping find them. A function's answers (which a student cannot flip one by one) are
    counted when some but not all are wrong; variables never are."""
    calls = {"f(1)": True, "f(2)": False, "f(3)": True}
    probes = [selfcheck.yes_no(label, lambda label=label: calls[label]) for label in calls]
    text = said(
        probes,
        stamp("bool:True", "bool:True", "bool:True"),
        yes_no="What decides each: the pauses.",
    )
    assert "1 of the 3 yes-or-no answers here is not right yet" in text
    assert "f(2)" not in text and "other way round" not in text
    assert "What decides each: the pauses." in text
    every = said(probes, stamp("bool:False", "bool:True", "bool:False"))
    assert "3 of the 3" not in every and "not every yes-or-no answer here is right yet" in every
    flags = {"a": True, "b": False, "c": True}
    variables = [selfcheck.yes_no(name, lambda name=name: flags[name]) for name in flags]
    for made in (stamp("bool:True", "bool:True", "bool:True"), stamp(*["bool:False"] * 3)):
        text = said(variables, made)
        assert "not every yes-or-no answer here is right yet" in text, text
        assert not any(char.isdigit() for char in text), text
        assert " b " not in f" {text} " and " a " not in f" {text} "


def test_a_yes_or_no_waits_for_the_number_that_decides_it():
    blocks = {"value": 10}
    probes = [
        selfcheck.count("blocks_q3", lambda: blocks["value"], "blocks"),
        selfcheck.yes_no("starts_q3", lambda: True),
        selfcheck.yes_no("starts_half_q3", lambda: True),
    ]
    made = stamp("int:5883", "bool:False", "bool:True")
    first = said(probes, made)
    assert first.startswith("Not yet: blocks_q3") and "starts_q3" not in first
    blocks["value"] = 5883
    then = said(probes, made)
    assert "not every yes-or-no answer here is right yet, though blocks_q3 is right" in then
    assert "starts_q3" not in then and "starts_half_q3" not in then and "1 of" not in then


def test_a_single_judge_says_the_cells_own_words():
    """The capstone: the probe calls the package's judge on the student's settings; the
    words fit a settings search, not "work this case through by hand"."""
    text = said(
        [selfcheck.yes_no("capstone.meets('app', app_choice)", lambda: False)],
        stamp("bool:True"),
        yes_no="`app_choice` does not meet the app's targets.",
    )
    assert text == "Not yet: `app_choice` does not meet the app's targets."


def test_a_hint_still_fits_beside_a_yes_or_no():
    """A known mistake of the number beside a yes or no is named (the key names it too, the
    number is graded with the verdict); the yes or no's place in it holds no hash."""
    from kvlesson.grading.checks.messages import seal

    made = stamp(
        "int:5883",
        "bool:False",
        hints=[
            {
                "said": seal("a term is missing", "s0", ["int:6837"]),
                "hashes": [selfcheck.digest("s0", "int:6837"), None],
            }
        ],
    )
    probes = [
        selfcheck.count("blocks_q3", lambda: 6837, "blocks"),
        selfcheck.yes_no("starts_q3", lambda: True),
    ]
    assert "is not right: a term is missing" in said(probes, made)


def test_the_message_comes_before_the_students_own_lines():
    """Walk item 30: no traceback above the message; the untouched stub raises no traceback
    at all, another error shows the student's lines under the message."""

    def stub():
        raise NotImplementedError()

    def broken():
        return 1 / 0

    with pytest.raises(NotYet) as raised:
        selfcheck.verify([selfcheck.count("f(1)", stub, "blocks")], stamp=stamp("int:1"))
    assert raised.value._render_traceback_()[0].startswith("Not yet: f(1) is not written yet")
    assert not any("Traceback" in line for line in raised.value._render_traceback_())
    with pytest.raises(NotYet) as raised:
        selfcheck.verify([selfcheck.count("g(1)", broken, "blocks")], stamp=stamp("int:1"))
    shown = raised.value._render_traceback_()
    assert shown[0].startswith("Not yet: g(1) raised ZeroDivisionError")
    assert any("return 1 / 0" in line for line in shown[1:])
    assert not any("selfcheck.py" in line for line in shown)
