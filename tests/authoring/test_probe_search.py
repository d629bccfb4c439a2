"""The probe search: every slip the course knows is made, and probes are found that catch it.

Unit tests of `kvlesson.authoring.mutants` (the slips), `kvlesson.authoring.probe_inputs`
(the inputs around a cell's probes, planned in a namespace as the kernel would) and
`kvlesson.authoring.probe_search` (what to add to each side, written into the cell). The
whole course is held to it by tests/authoring/test_selfchecks.py, which counts, per
exercise, the lies and the blind variants (both 0).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import pytest

from kvlesson.authoring import mutants, probe_inputs, probe_search, stamps
from kvlesson.grading.checks import selfcheck
from kvlesson.grading.course import notebooks
from kvlesson.grading.course.known_mistakes import MISTAKES, NAMES
from support.paths import ROOT

# The slips item 1 of the issue lists, each made by at least one mutation of these answers.
ANSWERS = {
    "def blocks(tokens):\n    return -(-tokens // 16)": {"ceil", "rounding", "true_div"},
    "def pool(share, memory):\n    return share / 100 * memory - 2e9 - 1e9": {
        "term",
        "percent",
        "swapped",
        "global",
        "gib",
    },
    "def gib(b):\n    return b / 2**30": {"gb"},
    "def kib(b):\n    return b / 1024": {"kilo"},
    "def first(values, p):\n    return sorted(values)[math.ceil(p / 100 * len(values)) - 1]": {
        "constant",
        "off_by_one",
        "rounding",
    },
    "def fits(blocks, need):\n    return blocks >= need": {"boundary", "swapped"},
    "def each(servers, share=0.9):\n    return share / servers": {"hardcoded", "global"},
}


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_every_listed_slip_is_made(answer):
    made = {m.mistake for m in mutants.mutants(answer, examples={"servers": ["2"]})}
    assert ANSWERS[answer] <= made, ANSWERS[answer] - made


def test_a_value_copied_from_an_example_is_a_slip_of_its_own():
    made = [
        m.source
        for m in mutants.mutants(
            "def steps(prompt, budget, writing):\n    return -(-prompt // (budget - writing))",
            examples={"budget": ["1_024"], "writing": ["24"]},
        )
        if m.mistake == "hardcoded"
    ]
    assert any("1024 - writing" in s for s in made) and any("budget - 24" in s for s in made)


def test_every_slip_has_words_and_a_name():
    assert set(MISTAKES) == set(NAMES)


CELL = """# Self-check
### BEGIN HIDDEN TESTS
selfcheck.record("ex_tests", [
    selfcheck.count("steps(12_000, 512, 2)", lambda: steps(12_000, 512, 2), "steps"),
    selfcheck.count("steps(511, 512, 1)", lambda: steps(511, 512, 1), "steps"),
], forbidden=("trace",))
### END HIDDEN TESTS
selfcheck.verify([
    selfcheck.count("steps(300, 256, 0)", lambda: steps(300, 256, 0), "steps"),
], forbidden=("trace",), stamp="")
"""
RIGHT = "def steps(prompt, budget, writing):\n    return -(-prompt // (budget - writing))"
IGNORES_WRITING = "def steps(prompt, budget, writing):\n    return -(-prompt // budget)"


def test_the_probes_of_a_cell_are_read_with_their_sides_and_inputs():
    cell = probe_search.Probes.of(CELL)
    assert [(p.side, p.function, p.args) for p in cell.found] == [
        ("record", "steps", ("12_000", "512", "2")),
        ("record", "steps", ("511", "512", "1")),
        ("verify", "steps", ("300", "256", "0")),
    ]
    looped = probe_search.Probes.of(
        'selfcheck.record("x", [selfcheck.count(f"f({n})", lambda n=n: f(n), "blocks") '
        "for n in (15, 16)])"
    )
    assert [(p.args, p.loop) for p in looped.found] == [(("15",), "n"), (("16",), "n")]


def test_probes_looped_over_several_inputs_at_once_stop_the_build_with_what_to_write():
    """A loop over pairs of inputs (a new instructor's Exercise 2.3, issue 27) got no added
    input from the search, and the build said nothing: it stops, and says what to write."""
    pairs = (
        'selfcheck.record("x", [selfcheck.count(f"f({s}, {t})", lambda s=s, t=t: f(s, t), '
        '"chats") for s, t in ((55, 1_000), (60, 2_500))])'
    )
    with pytest.raises(probe_search.UnreadProbes, match=r"for s, t in .*write each call out"):
        probe_search.Probes.of(pairs)


def plan_and_choose(tmp_path: Path, cell_source: str, right: str, wrong_sources: list[str]):
    """Plan in a plain namespace as the kernel would, then choose what to add."""
    namespace = {"selfcheck": selfcheck, "math": math}
    exec(right, namespace)
    plan = tmp_path / "plan.json"
    probe_inputs.plan(cell_source, str(plan), namespace)
    inputs = json.loads(plan.read_text())["inputs"]
    wrong = []
    for source in wrong_sources:
        exec(source, namespace)
        wrong.append(probe_inputs.answers_on(str(plan), namespace))
    exec(right, namespace)
    cell = probe_search.Probes.of(cell_source)
    return cell, inputs, wrong, probe_search.choose(cell, inputs, wrong)


def test_the_search_adds_probes_that_catch_an_ignored_argument_on_both_sides(tmp_path):
    """The student's Ex 6.2 case: on steps(300, 256, 0) writing cannot matter, and on the
    hidden inputs neither: the search adds an input to each side that catches it."""
    cell, inputs, wrong, choice = plan_and_choose(tmp_path, CELL, RIGHT, [IGNORES_WRITING])
    assert choice.missed == {"verify": set(), "record": set()}
    assert choice.added["verify"] and choice.added["record"]
    namespace = {"selfcheck": selfcheck}
    for side, rows in choice.added.items():
        for row in rows:
            exec(IGNORES_WRITING, namespace)
            wrong_answer = eval(row["text"], namespace)
            value = wrong_answer.get()
            assert str(value) != row["right"].split(":")[1], (side, row["text"])
    sides = {s: {tuple(r["args"]) for r in rows} for s, rows in choice.added.items()}
    assert not sides["verify"] & sides["record"], "a hidden input shown in the self-check"


def test_the_cell_is_rewritten_with_the_added_probes_and_stays_stable(tmp_path):
    cell, _, _, choice = plan_and_choose(tmp_path, CELL, RIGHT, [IGNORES_WRITING])
    rewritten = probe_search.rewrite(cell, choice.added)
    compile(rewritten, "cell", "exec")
    grown = probe_search.Probes.of(rewritten)
    assert len(grown.found) == len(cell.found) + sum(map(len, choice.added.values()))
    # searched again, the grown cell needs nothing more: a rebuild changes nothing
    again = plan_and_choose(tmp_path, rewritten, RIGHT, [IGNORES_WRITING])[3]
    assert again.added == {"verify": [], "record": []}
    assert probe_search.rewrite(probe_search.Probes.of(rewritten), again.added) == rewritten


def test_a_right_but_different_answer_is_not_a_mistake_to_catch(tmp_path):
    same = "def steps(prompt, budget, writing):\n    return math.ceil(prompt / (budget - writing))"
    _, _, _, choice = plan_and_choose(tmp_path, CELL, RIGHT, [same])
    assert choice.added == {"verify": [], "record": []}


def test_inputs_stay_within_the_range_the_cell_uses(tmp_path):
    _, inputs, _, _ = plan_and_choose(tmp_path, CELL, RIGHT, [])
    for row in inputs:
        prompt, budget, writing = (probe_inputs._number(a) for a in row["args"])
        assert 300 <= prompt <= 12_000 and 256 <= budget <= 512 and 0 <= writing <= 2


def hint_of(wrong_rows: list[dict], answer: list[str]) -> str | None:
    """The hint a self-check stamped from `wrong_rows` gives an answer (its normal forms)."""
    entry = {
        "setting": {},
        "hints": {},
        "probes": [
            {"label": f"f({n})", "kind": "count", "normal": "int:5"} for n in range(len(answer))
        ],
    }
    made = json.loads(stamps.make_stamp(entry, wrong_rows, 0, "here"))
    return selfcheck._hint(made["hints"], made["probes"], answer, ["count"] * len(answer))


def test_a_hint_names_a_mistake_only_when_no_other_gives_that_answer():
    round_down = {
        "mistake": "ceil",
        "hint": "round up",
        "same": "a",
        "values": [["int:4", "int:4"]],
    }
    off_by_one = {
        "mistake": "off_by_one",
        "hint": "off by one",
        "same": "b",
        "values": [["int:4", "int:6"]],
    }
    assert hint_of([round_down, off_by_one], ["int:4", "int:4"]) == "round up"
    assert hint_of([round_down, off_by_one], ["int:4", "int:6"]) == "off by one"
    # one answer, two different mistakes: a coincidence, no hint
    other = {**off_by_one, "values": [["int:4", "int:4"]]}
    assert hint_of([round_down, other], ["int:4", "int:4"]) is None
    # matching one probe is not enough: the answer must be the mistake's on every probe
    assert hint_of([round_down], ["int:4", "int:9"]) is None
    # one wrong function reached by two mutations: named by the first
    twin = {**other, "same": "a"}
    assert hint_of([round_down, twin], ["int:4", "int:4"]) == "round up"


def test_a_yes_or_no_probe_never_names_a_mistake():
    entry = {
        "setting": {},
        "hints": {},
        "probes": [{"label": "fits(1)", "kind": "yes_no", "normal": "bool:True"}],
    }
    wrong = [{"mistake": "boundary", "hint": "> against >=", "values": [["bool:False"]]}]
    assert json.loads(stamps.make_stamp(entry, wrong, 0, "here"))["hints"] == []


def test_every_self_check_refuses_the_functions_its_hidden_test_forbids():
    """One rule everywhere: a test cell's self-check forbids what its hidden test forbids,
    so a forbidden call says so in the notebook, not first in the grade."""
    differ = []
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in nbformat.read(path, 4).cells:
            if not notebooks.is_test_cell(cell):
                continue
            sides = {
                call.func.attr: next((k.value for k in call.keywords if k.arg == "forbidden"), None)
                for call in probe_search._side_calls(cell.source)
            }
            texts = {
                side: (
                    eval(compile(__import__("ast").Expression(v), "", "eval"))
                    if v is not None
                    else ()
                )
                for side, v in sides.items()
            }
            if texts.get("verify", ()) != texts.get("record", ()):
                differ.append(
                    f"{path.parent.name} {notebooks.meta(cell)['grade_id']}: "
                    f"verify {texts.get('verify')} record {texts.get('record')}"
                )
    assert not differ, differ


def test_the_feedback_without_a_known_mistake_says_what_to_reread_by_kind():
    """Never "check the units and the rounding" by default: a yes-or-no exercise says one is
    not right, in the cell's own words when it has them (the capstone's settings search); any
    other says plainly to re-read the question; a cell's own words come first."""
    from kvlesson.grading.marking import diagnosis

    yes_no = {"probes": [{"kind": "yes_no"}, {"kind": "yes_no"}]}
    judged = {**yes_no, "reread": {"yes_no": "change one setting at a time"}}
    counts = {"probes": [{"kind": "count"}, {"kind": "yes_no"}]}
    own = {**counts, "reread": {"else": "Re-read the budget's rule."}}
    said = {
        name: diagnosis.feedback_line("x_tests", "", diagnosis.unmatched_words(exercise))
        for name, exercise in (
            ("yes_no", yes_no),
            ("judged", judged),
            ("counts", counts),
            ("own", own),
        )
    }
    assert "a yes or no is not right" in said["yes_no"]
    assert said["judged"].endswith("change one setting at a time")
    assert said["counts"].endswith("re-read the question.")
    assert said["own"].endswith("Re-read the budget's rule.")
    assert not any("units and the rounding" in text for text in said.values())


def test_the_search_plans_inputs_inside_the_declared_domain_only(tmp_path):
    """Exercise 5.3's lesson: a key made on an input the question does not cover (here, a
    budget no larger than the writing chats) is a key no one can trust."""
    from kvlesson.grading.checks import rules

    rules.declare(domain=lambda prompt, budget, writing: 0 <= writing < budget and prompt >= 300)
    try:
        _, inputs, _, _ = plan_and_choose(tmp_path, CELL, RIGHT, [])
        outside = probe_inputs.outside(
            CELL.replace("511, 512, 1", "299, 512, 1"), {"selfcheck": selfcheck}
        )
    finally:
        rules.forget()
    planned = [[probe_inputs._number(a) for a in row["args"]] for row in inputs]
    assert planned and all(p >= 300 for p, _, _ in planned)
    assert outside == ["steps(299, 512, 1) (hidden)"]


def test_an_argument_ignored_for_the_notebooks_variable_of_its_kind_is_a_mistake(tmp_path):
    """Exercise 0.1's `m` read as the notebook's `model`: the same hint as every later
    notebook's "not the notebook's SHARE"."""
    from kvlesson.memory.specs import LLAMA_31_8B, LLAMA_33_70B

    cell = (
        'selfcheck.verify([selfcheck.count("per_token(big)", lambda: per_token(big), '
        '"bytes")], stamp="")'
    )
    namespace = {"big": LLAMA_33_70B, "model": LLAMA_31_8B, "SHARE": 90, "selfcheck": selfcheck}
    out = tmp_path / "alike.json"
    probe_inputs.alike(cell, ["model", "SHARE", "big"], str(out), namespace)
    like = {f: {int(k): v for k, v in by.items()} for f, by in json.loads(out.read_text()).items()}
    assert like == {"per_token": {0: ["model", "big"]}}
    made = mutants.mutants("def per_token(m):\n    return 2 * m.layers", like=like)
    assert any(
        m.mistake == "global"
        and "not the notebook's `model`" in m.hint
        and "model.layers" in m.source
        for m in made
    )


def test_a_declared_mistake_comes_first_with_its_own_words():
    declared = {"the attention heads": ("def f(m):\n    return m.heads", "use the KV heads.")}
    made = mutants.mutants("def f(m):\n    return m.kv_heads", declared=declared)
    assert (made[0].mistake, made[0].hint) == ("declared:the attention heads", "use the KV heads.")
    source = (
        "from kvlesson.grading.checks.rules import declare\n"
        f'declare(mistakes={declared!r})\nselfcheck.record("x", [])'
    )
    assert probe_search.declared_mistakes(source) == declared


def test_a_hint_names_no_variable_the_solution_made_for_itself():
    """A student's answer need not have the instructor's local variables: "a factor is
    missing: `per_chat`" would name something they never wrote. Their parameters and the
    notebook's names (`tp`, `kv.BLOCK_TOKENS`) are theirs too, and stay named."""
    answer = (
        "def slices(longest, tp):\n"
        "    per_chat = -(-longest // kv.BLOCK_TOKENS)\n"
        "    return kv.memory_parts(SHARE, gpu, model).blocks // per_chat // tp - spare\n"
    )
    hints = {m.hint for m in mutants.mutants(answer) if m.mistake in ("factor", "term")}
    assert not [hint for hint in hints if "per_chat" in hint]
    assert "a factor is missing: an input of the product is left out." in hints
    assert "a factor is missing: `tp`." in hints
    assert "a factor is missing: `kv.BLOCK_TOKENS`." in hints
    assert "a term of the sum is missing: `spare`." in hints
