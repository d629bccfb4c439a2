"""Self-checks and hidden tests: a student's answers against salted hashes, and the record.

A test cell of the course calls `verify` (the self-check the student sees) and,
in its hidden part, `record` (what the grader reads). Both take probes: an
answer to evaluate (a variable, or a call of the student's function on some
input), with the kind of answer asked for. The expected answers are never in a
notebook: `kvlesson build` runs the instructor's solution and
stamps, into each `verify` call's `stamp=` argument, the setting, a salt and a hash
of each expected answer (and of the answers that known mistakes give, for hints).
`record` carries no hash and no key: it prints one line, `KVLESSON-MARK {...}`, with
the student's values in a typed encoding and the forbidden functions their code ran;
`kvlesson.grading.marking` compares it with the key, outside the kernel. A forbidden
function is found by what runs, at any depth, whatever the name used
(`kvlesson.grading.checks.forbidden`); verify and the grade say it in the same words.
"""

from __future__ import annotations

import hashlib
import json
import sys

from kvlesson.grading.checks import forbidden as forbidding, messages
from kvlesson.grading.checks.probes import (
    NotYet,
    Probe,
    WrongKind,
    assigns,
    count,
    count_or_none,
    encode,
    error_of,
    evaluate,
    float_for_count,
    mentioned,
    normal,
    number,
    whole_float,
    yes_no,
)
from kvlesson.grading.checks.records import record_line
from kvlesson.grading.checks.stamp_mode import (  # noqa: F401 (the build calls them here)
    PARAMETERS,
    STAMP_FILE,
    setting_of,
    stamp_entry,
    stamping,
    start_cell,
    wrong_values,
)

__all__ = [
    "NotYet",
    "Probe",
    "WrongKind",
    "count",
    "count_or_none",
    "load_stamps",
    "number",
    "record",
    "verify",
    "yes_no",
]

YES_NO = messages.YES_NO  # `verify(hints=...)`'s key for what decides a yes or no


def digest(salt: str, text: str) -> str:
    """The salted hash that stands in for an answer in a notebook."""
    return hashlib.sha256(f"{salt}\n{text}".encode()).hexdigest()[:24]


def verify(
    probes: list[Probe],
    stamp: str = "",
    hints: dict[str, str] | None = None,
    forbidden: tuple[str, ...] = (),
) -> None:
    """The self-check: each probe against its salted hash; a wrong answer that a known
    mistake gives gets that mistake's hint, one right in another unit is told so, any other
    what to re-read (`kvlesson.grading.checks.messages`); a call of a `forbidden` function
    says so. Yes-or-no probes are judged together, after the numbers beside them, and never
    one by one. Prints "Self-check passed." or raises NotYet (WrongKind for a wrong kind of
    answer)."""
    names = sys._getframe(1).f_globals
    if stamping():
        stamp_entry("verify", probes, names, {"hints": hints or {}, "forbidden": list(forbidden)})
        print("Self-check passed.")
        return
    made = _stamp(stamp)
    problem = messages.setting_problem(made["setting"], setting_of(names), PARAMETERS)
    if problem:
        raise NotYet(problem)
    if len(made["probes"]) != len(probes):
        raise NotYet(
            "Not yet: this self-check's stamp does not fit its probes: run `kvlesson build` again."
        )
    codes = forbidding.resolve(forbidden)
    outcomes = _outcomes(probes, codes, sys._getframe(1).f_code.co_filename)
    wrong_yes_no = _judge(probes, made, outcomes, hints or {}, names, codes, forbidden)
    if wrong_yes_no:
        raise NotYet(messages.yes_no_message(wrong_yes_no, probes, hints or {}))
    print("Self-check passed.")


def _outcomes(probes: list[Probe], codes: dict, test: str) -> list[tuple]:
    """Every probe's (value, forbidden calls, error) first: a hint must fit the answer on all
    of them (`test`: the test cell's code, whose own calls are not the student's)."""
    outcomes = []
    for probe in probes:
        calls: list[str] = []
        try:
            with forbidding.watching(codes, calls, test):
                outcomes.append((evaluate(probe), calls, None))
        except NotYet as error:
            outcomes.append((None, calls, error))
    return outcomes


def _judge(
    probes: list[Probe],
    made: dict,
    outcomes: list[tuple],
    words: dict[str, str],
    names: dict,
    codes: dict,
    forbidden: tuple[str, ...],
) -> list[Probe]:
    """Raise on the first wrong answer that is not a yes or no, with what the self-check
    says of it; the yes-or-no probes that are wrong, to be told together."""
    checked = made["probes"]
    texts = [
        _quiet_normal(probe, value, error) for probe, (value, _, error) in zip(probes, outcomes)
    ]
    wrong_yes_no = []
    for (probe, expect), (value, calls, error) in zip(zip(probes, checked), outcomes):
        _refuse(probe.label, calls, forbidden)
        if error is not None:
            raise error
        _refuse_written(probe.label, names, codes)
        whole = whole_float(probe, value)
        if whole is not None and _is_right(expect, probe, whole):
            raise WrongKind(messages.right_but_float(probe, value))
        if _is_right(expect, probe, value if whole is None else whole):
            continue
        if probe.kind == "yes_no":
            wrong_yes_no.append(probe)
            continue
        hint = _hint(made.get("hints", []), checked, texts, [p.kind for p in probes])
        seen = messages.unit_seen(probe, value, lambda p, v: _is_right(expect, p, v))
        raise NotYet(
            messages.wrong_message(
                probe,
                value,
                hint,
                words,
                seen,
                float_for_count=whole is not None or float_for_count(probe, value),
            )
        )
    return wrong_yes_no


def _is_right(expect: dict, probe: Probe, value: object) -> bool:
    """Whether `value` is the answer the stamp `expect` holds (WrongKind for an answer of
    the wrong kind: a str, None from a function, a float that is not whole for a count)."""
    if float_for_count(probe, value) and not float(value).is_integer():
        return False
    return digest(expect["salt"], normal(probe, value)) == expect["hash"]


def _quiet_normal(probe: Probe, value: object, error: Exception | None) -> str | None:
    """A probe's normal form (a whole float read as the int it is, so a hint still fits),
    or None when it raised or is not the kind asked for."""
    if error is not None:
        return None
    whole = whole_float(probe, value)
    try:
        return normal(probe, value if whole is None else whole)
    except Exception:
        return None


def _hint(
    hints: list[dict], checked: list[dict], texts: list[str | None], kinds: list[str]
) -> str | None:
    """The words of the one known mistake whose answers, on every probe but the yes-or-no
    ones (`kinds`), are the student's; None when none is, or when mistakes with other words
    are too (a coincidence of values is not a diagnosis)."""
    found = {
        messages.unseal(
            hint["said"],
            checked[0]["salt"],
            [t for t, w in zip(texts, hint["hashes"]) if w is not None],
        )
        for hint in hints
        if all(
            wanted is None
            and kind == "yes_no"
            or (text is not None and wanted is not None and digest(expect["salt"], text) == wanted)
            for text, wanted, expect, kind in zip(texts, hint["hashes"], checked, kinds)
        )
    }
    return found.pop() if len(found) == 1 else None


_ANSWERS: dict[str, dict] = {}  # the notebook's stamps, loaded by its setup cell


def load_stamps(stamps: str) -> None:
    """The setup cell's line: load the notebook's stamps (the build writes them there, as
    JSON: a salt and salted hashes per probe, never an answer)."""
    _ANSWERS.clear()
    _ANSWERS.update(json.loads(stamps))


def _stamp(stamp: str) -> dict:
    """A verify call's stamp: the one the setup cell loaded under that name, or the stamp
    itself when it is written out (JSON)."""
    if stamp.startswith("{"):
        return json.loads(stamp)
    if stamp not in _ANSWERS:
        raise NotYet(
            "Not yet: this self-check's answers are loaded by the notebook's first "
            "code cell (the one that imports kvlesson): run it, then this cell again."
        )
    return _ANSWERS[stamp]


def _traced(probe: Probe, codes: dict, calls: list[str], test: str) -> dict:
    """A probe's value, encoded, noting the forbidden functions the student's code ran
    (`test`: the test cell's code); an exception is recorded, not raised."""
    try:
        with forbidding.watching(codes, calls, test):
            return encode(probe.get())
    except (Exception, SystemExit) as error:
        return error_of(error)


def record(grade_id: str, probes: list[Probe], forbidden: tuple[str, ...] = ()) -> None:
    """The hidden test: print the grader's record line, the student's values and the
    forbidden functions (of `forbidden`) their code ran, at any depth. It holds no
    expected value: the grader compares the line with the key, outside the kernel.
    Raises NotYet, with the grade's words, when a forbidden function ran."""
    names = sys._getframe(1).f_globals
    out = sys.stdout  # as it is now: a probe that swaps sys.stdout does not hide the line
    calls: list[str] = []
    codes, test = forbidding.resolve(forbidden), sys._getframe(1).f_code.co_filename
    values = [_traced(probe, codes, calls, test) for probe in probes]
    line = {"id": grade_id, "values": values, "calls": calls, "setting": setting_of(names)}
    out.write(record_line(line))
    out.flush()
    if stamping():
        stamp_entry("record", probes, names, {"grade_id": grade_id, "forbidden": list(forbidden)})
        return
    _refuse(grade_id, calls, forbidden)


def forbidden_message(
    what: str, used: list[str], forbidden: tuple[str, ...], through: str = ""
) -> str:
    """How the self-check and the grade say that an answer used a forbidden function."""
    names = ", ".join(sorted({name.rsplit(".", 1)[-1] for name in used}))
    return (
        f"Not yet: {what} {through or 'calls'} {names}; this exercise asks you to work it "
        f"out without {', '.join(forbidden)}, and the grade gives no point for it."
    )


def _refuse_written(label: str, names: dict, codes: dict) -> None:
    """A variable answer: the cell that last set it (in IPython's input history, `In`) must
    not name a forbidden function, nor use a package function that calls one (read with the
    notebook's own names), as the grader's reading of that cell will see."""
    forbidden = tuple(sorted({name.rsplit(".", 1)[-1] for name in codes.values()}))
    if not forbidden or not label.isidentifier():
        return
    cell = next((source for source in reversed(names.get("In", [])) if assigns(source, label)), "")
    used = mentioned(cell, forbidden) or forbidding.used_in(cell, names, codes)
    if used:
        raise NotYet(forbidden_message(label, used, forbidden, through="is worked out with"))


def _refuse(name: str, calls: list[str], forbidden: tuple[str, ...]) -> None:
    if calls:
        raise NotYet(forbidden_message(name, calls, forbidden))
