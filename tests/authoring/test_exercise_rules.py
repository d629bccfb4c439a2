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
    "ex1_2_tests": [("A negative pool holds no block", "blocks_in(-1e9)")],
    "ex2_1_tests": [("A block that is only partly filled still counts whole", "chat_blocks(17)")],
    "ex2_2_tests": [("Return `None` if no share is enough", "lowest_share_for(10**6)")],
    "ex3_1_tests": [("return `None` if every step adds at least 10%", "knee_of(steep)")],
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
    "ex5_5_tests": [("padded up to a multiple of 256", "slot_context(33_281, 5)")],
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
    self-check looks at it only once that number is right); one about a function's calls is
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
            elif label.split("(")[0] not in students:
                assert "yes_no" in hints, f"{grade_id}: {label} needs the cell's own words"


@pytest.mark.parametrize("source", [c[4] for c in CELLS], ids=[c[1] for c in CELLS])
def test_every_declared_mistake_is_written_out(source):
    """The build reads an exercise's declared mistakes without running the cell: a dict of
    text, each a wrong answer cell that parses, and its hint, a sentence."""
    for name, (code, hint) in probe_search.declared_mistakes(source).items():
        ast.parse(code)
        assert name and hint.endswith("."), (name, hint)
