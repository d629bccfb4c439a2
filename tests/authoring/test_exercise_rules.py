"""Each exercise keeps the promises of its text: what it warns about, the self-check tries;
a yes or no is never checked alone; its rules are declared in a form the build reads.

Read from the instructor notebooks and the release, without running them (the mutation test,
tests/authoring/test_selfchecks.py, runs them).
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from kvlesson.authoring import command, probe_search, stamp_places
from kvlesson.grading.course import notebooks
from support.paths import ROOT

# Every case an exercise's text warns about, in its own words, and the self-check's probe
# that tries it (read from every exercise's text, December 2026).
WARNED = {
    "ex1_1_tests": [("a negative pool is fine here", "pool_bytes(21)")],
    "ex0_2_tests": [("not rounded", "weights_gb(kv.QWEN25_7B)")],
    "ex1_2_tests": [("A negative pool holds no block", "blocks_in(-1e9)")],
    "ex2_1_tests": [("A block that is only partly filled still counts whole", "chat_blocks(17)")],
    "ex2_2_tests": [("Return `None` if no share is enough", "lowest_share_for(10**6)")],
    "ex3_1_tests": [
        ("return `None` if every step adds at least 10%", "knee_of(steep)"),
        ("A step that adds exactly 10% pays", "knee_of(tenth)"),
    ],
    "ex5_1_tests": [
        ("when the config gives no `head_dim`", "bytes_per_token_of(LLAMA_70B_CONFIG)"),
        (
            "all heads are KV heads when it gives no `num_key_value_heads`",
            "bytes_per_token_of(SMALL_FP32)",
        ),
        ('4 for `"float32"`', "bytes_per_token_of(SMALL_FP32)"),
    ],
    "ex5_3_tests": [
        ("`tp` must divide the attention heads", "starts_on_h100(kv.LLAMA_33_70B, 5, 44)"),
        (
            "each be copied to the same number of GPUs",
            "starts_on_h100(kv.QWEN25_7B, 14, 90, 32_768)",
        ),
        ("`max(1, model.kv_heads // tp)`", "starts_on_h100(gqa, 4, 30)"),
        (
            "one of them is held back as the null block",
            "starts_on_h100(kv.LLAMA_33_70B, 2, 89, 13_103)",
        ),
    ],
    "ex5_4_tests": [("a pool below zero holds none", "fp8_pool_tokens(-1e9, kv.QWEN25_7B)")],
    "ex5_5_tests": [
        ("padded up to a multiple of 256", "slot_context(33_281, 5)"),
        ("it takes at most 256 slots", "slot_context(100_000, 257)"),
    ],
    "ex6_1_tests": [("7% of 100 values is rank 7 exactly", "nearest_rank(hundred, 7)")],
    "ex6_2_tests": [("the step that writes its first token counts", "steps_to_read(255, 256, 1)")],
}


def cells() -> list[tuple[str, str, str, str, str]]:
    """(assignment, grade id, the exercise's text, the released test cell, the instructor's
    test cell) per exercise."""
    found = []
    for path in command.notebook_paths(ROOT / "solutions"):
        nb = nbformat.read(path, as_version=4)
        release = nbformat.read(ROOT / "notebooks" / path.parent.name / path.name, as_version=4)
        shown = {notebooks.meta(c).get("grade_id"): c.source for c in release.cells}
        text = ""
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                text = cell.source
            if notebooks.is_test_cell(cell):
                grade_id = notebooks.meta(cell)["grade_id"]
                found.append((path.parent.name, grade_id, text, shown[grade_id], cell.source))
    return found


CELLS = cells()


def visible(source: str) -> list[ast.Call]:
    """The probes of a released test cell's self-check."""
    return [node for call in stamp_places.stamp_calls(source) for node in call.args[0].elts]


@pytest.mark.parametrize("grade_id", sorted(WARNED))
def test_every_case_the_text_warns_about_is_in_the_self_check(grade_id):
    [(_, _, text, released, _)] = [c for c in CELLS if c[1] == grade_id]
    labels = [probe.args[0].value for probe in visible(released)]
    for warning, label in WARNED[grade_id]:
        said = " ".join(text.split())  # the text as read, whatever its line breaks
        assert " ".join(warning.split()) in said, (
            f"{grade_id}: the text no longer says {warning!r}: update WARNED"
        )
        assert label in labels, f"{grade_id} warns {warning!r}; its self-check never tries it"


@pytest.mark.parametrize(
    "assignment, grade_id, text, released, _", CELLS, ids=[c[1] for c in CELLS]
)
def test_no_yes_or_no_is_checked_alone(assignment, grade_id, text, released, _):
    """A student who could flip a yes or no until the self-check passes would learn nothing:
    a yes or no the student writes as a variable sits beside a number that decides it (the
    self-check looks at it only once that number is right) and beside another yes or no
    (the message names neither nor counts them, walk item 6); one about a function's calls is
    counted with the others, never named; a package judge's verdict (the capstone) says what
    to change in the cell's own words."""
    students = {probe.function for probe in probe_search.Probes.of(released).found}
    for call in stamp_places.stamp_calls(released):
        probes = call.args[0].elts
        kinds = [probe.func.attr for probe in probes]
        labels = [probe.args[0].value for probe in probes]
        hints = next((ast.literal_eval(k.value) for k in call.keywords if k.arg == "hints"), {})
        for kind, label in zip(kinds, labels):
            if kind != "yes_no":
                continue
            if label.isidentifier():
                assert set(kinds) - {"yes_no"}, f"{grade_id}: {label} is checked alone"
                # one yes or no, however its message is worded, is found by flipping it once
                twins = [n for k, n in zip(kinds, labels) if k == "yes_no" and n.isidentifier()]
                assert len(twins) >= 2, f"{grade_id}: {label} is the only yes or no of its check"
            elif label.split("(")[0] not in students:
                assert "yes_no" in hints, f"{grade_id}: {label} needs the cell's own words"


@pytest.mark.parametrize("source", [c[4] for c in CELLS], ids=[c[1] for c in CELLS])
def test_every_declared_mistake_is_written_out(source):
    """The build reads an exercise's declared mistakes without running the cell: a dict of
    text, each a wrong answer cell that parses, and its hint, a sentence."""
    for name, (code, hint) in probe_search.declared_mistakes(source).items():
        ast.parse(code)
        assert name and hint.endswith("."), (name, hint)


@pytest.mark.parametrize(
    "assignment, grade_id, text, released, _", CELLS, ids=[c[1] for c in CELLS]
)
def test_the_self_check_compares_numbers_as_closely_as_the_grade(
    assignment, grade_id, text, released, _
):
    """A number the self-check compares to fewer decimals than the grade passes an answer
    rounded in between (Exercise 0.2 at 2 decimals against the grade's 3), which the grade
    then rejects: the self-check must fail where the grade fails."""
    from kvlesson.grading.course.key import key_path, read_key

    hidden = [
        p["places"]
        for p in read_key(key_path(ROOT, assignment))["exercises"][grade_id]["probes"]
        if p["kind"] == "number"
    ]
    shown = [
        ast.literal_eval(probe.args[3])
        for probe in visible(released)
        if probe.func.attr == "number"
    ]
    if hidden and shown:
        assert min(shown) >= max(hidden), f"{grade_id}: self-check {shown}, grade {hidden}"


NUMBER = r"(?<![\w.])\d[\d,_]*(?:\.\d+)?"


def hint_words(solution_source: str, released: str, exercise: dict) -> list[str]:
    """Every hint an exercise can give: its declared mistakes', its self-check's own words
    (`hints={...}`), and the words of every known mistake its key names."""
    words = [hint for _, hint in probe_search.declared_mistakes(solution_source).values()]
    for call in stamp_places.stamp_calls(released):
        for keyword in call.keywords:
            if keyword.arg == "hints":
                words += list(ast.literal_eval(keyword.value).values())
    return words + [known["words"] for known in exercise["mistakes"]]


def given_away(number: str, exercise: dict, released: str, stamps: dict) -> bool:
    """Whether `number` is an answer of the exercise: one its key holds (the hidden probes),
    or one a visible probe's stamp holds (tried in the probe's own normal form)."""
    from kvlesson.grading.checks import probes, selfcheck

    value = float(number.replace(",", "").replace("_", ""))
    if any(
        p["normal"].split(":", 1)[-1] not in ("True", "False", "none")
        and float(p["normal"].split(":", 1)[-1]) == value
        for p in exercise["probes"]
        if p["kind"] != "yes_no"
    ):
        return True
    names = iter(stamp_places.stamp_names(released))
    for call in stamp_places.stamp_calls(released):
        stamp = stamps[next(names)]
        for node, expect in zip(call.args[0].elts, stamp["probes"]):
            kind = node.func.attr
            if kind == "yes_no":
                continue
            unit = ast.literal_eval(node.args[2])
            places = ast.literal_eval(node.args[3]) if kind == "number" else 0
            probe = probes.Probe("x", lambda: None, kind, unit, places)
            guess = value if kind == "number" else int(value)
            if selfcheck.digest(expect["salt"], probes.normal(probe, guess)) == expect["hash"]:
                return True
    return False


@pytest.mark.parametrize(
    "assignment, grade_id, text, released, _", CELLS, ids=[c[1] for c in CELLS]
)
def test_no_hint_names_a_number_the_question_does_not_or_gives_an_answer_away(
    assignment, grade_id, text, released, _
):
    """Walk items 4, 8 and 19: a hint named a number that was in neither the student's code
    nor their answer ("is it `29`?"), another quoted another chat ("32 tokens"), another gave
    an answer away ("two at 0.9 ask for 0.45 each"). A number in any hint of an exercise must
    be in its question or its self-check's cell, and be none of its answers unless the
    question itself shows it."""
    import re

    from kvlesson.grading.course.key import key_path, read_key

    [path] = (ROOT / "solutions" / assignment).glob("*.ipynb")
    solution = next(
        c.source
        for c in nbformat.read(path, as_version=4).cells
        if notebooks.meta(c).get("grade_id") == grade_id
    )
    release = nbformat.read(ROOT / "notebooks" / assignment / path.name, as_version=4)
    stamps = stamp_places.stamps_of(release)
    exercise = read_key(key_path(ROOT, assignment))["exercises"][grade_id]
    from kvlesson.grading.course.known_mistakes import MISTAKES

    def plain(words: str) -> str:  # a hint's numbers, less the course's references and units
        return re.sub(r"(Exercise|Question|notebook) \d+(\.\d+)?|2\*\*30|1e9", "", words)

    def numbers(words: str) -> set[str]:
        return {m.replace(",", "").replace("_", "") for m in re.findall(NUMBER, plain(words))}

    # the catalogue's own words name what every exercise shares: 100 for a percent, 1,024...
    in_view = numbers(text + released) | numbers(" ".join(MISTAKES.values()))
    unseen = sorted(
        {
            (number, words)
            for words in hint_words(solution, released, exercise)
            for number in re.findall(NUMBER, plain(words))
            if number.replace(",", "").replace("_", "") not in in_view
        }
    )
    away = [(n, words) for n, words in unseen if given_away(n, exercise, released, stamps)]
    assert not away, f"{grade_id}: hints that give an answer away: {away}"
    assert not unseen, f"{grade_id}: numbers in its hints the question does not show: {unseen}"


def test_the_hint_check_catches_the_walks_hints():
    """The old hints of walk items 19 and 8: 5.6's "0.45 each" is an answer of the
    exercise's self-check; 4.1's "(is it `29`?)" a number its question never shows."""
    import re

    from kvlesson.grading.course.key import key_path, read_key

    [(_, _, _, released, _)] = [c for c in CELLS if c[1] == "ex5_6_tests"]
    [path] = (ROOT / "notebooks" / "05_real_server").glob("*.ipynb")
    stamps = stamp_places.stamps_of(nbformat.read(path, as_version=4))
    exercise = read_key(key_path(ROOT, "05_real_server"))["exercises"]["ex5_6_tests"]
    assert given_away("0.45", exercise, released, stamps)
    assert not given_away("0.5", exercise, released, stamps)
    [(_, _, text, shown, _)] = [c for c in CELLS if c[1] == "ex4_1_tests"]
    assert "29" not in re.findall(NUMBER, text + shown)
