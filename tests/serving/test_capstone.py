"""The capstone's grader: users, targets, the grid's best and the verdicts.

The stored best choices (what the grader compares with, so that a notebook
does not run 162 servers a user) must be what the grid search finds: this
runs the grid for every stored day. The instructor's choices must pass on
the day shown and on the hidden days; wrong choices must fail with a message
that names the target and by how much.
"""

from __future__ import annotations

import pytest

from kvlesson.serving import capstone

SOLUTION = {  # the notebook's instructor answers (solutions: Exercise 6.3)
    "assistant": dict(share=90, longest=32_000, cap=4, budget=1_024, admission=None),
    "office": dict(share=95, longest=16_000, cap=64, budget=1_024, admission=None),
    "app": dict(share=90, longest=8_000, cap=64, budget=256, admission=None),
}


@pytest.mark.parametrize("key", sorted(capstone.BEST))
def test_stored_best_is_the_grid_search(key):
    name, seed = key
    choice, tokens_per_s = capstone.search(name, seed)
    assert (choice, round(tokens_per_s, 6)) == (capstone.BEST[key][0],
                                                 round(capstone.BEST[key][1], 6))


@pytest.mark.parametrize("name", sorted(SOLUTION))
@pytest.mark.parametrize("seed", [capstone.SHOWN_SEED, *capstone.HIDDEN_SEEDS])
def test_the_solution_passes_every_day(name, seed):
    verdict = capstone.verdict(name, SOLUTION[name], seed)
    assert verdict.passes, str(verdict)
    assert str(verdict).startswith("Meets the target")


def test_a_ceiling_too_low_for_the_documents_is_named():
    verdict = capstone.verdict("assistant", dict(SOLUTION["assistant"], longest=16_000))
    assert not verdict.passes
    assert "1 chat passes the ceiling of 16,000 tokens (the longest is 16,338)" in str(verdict)


def test_a_missed_target_says_by_how_much():
    verdict = capstone.verdict("app", dict(SOLUTION["app"], cap=4))
    text = str(verdict)
    assert text.startswith("Not yet: p99 TTFT is ") and "over the target of 8.00 s by" in text
    assert "of the best choice's" in text  # cap 4 falls behind: its tokens/s is low too


def test_a_small_share_loses_the_office_its_cached_histories():
    verdict = capstone.verdict("office", dict(SOLUTION["office"], share=85))
    assert not verdict.passes and "p95 TTFT" in str(verdict)


def test_a_server_that_cannot_start_is_named():
    verdict = capstone.verdict("assistant", dict(SOLUTION["assistant"], share=60))
    assert not verdict.passes and "does not start" in str(verdict)


@pytest.mark.parametrize("choice, message", [
    (dict(share=90), "keys share, longest, cap, budget, admission"),
    ("90,32000", "a choice must be a dict"),
])
def test_bad_choices_are_named(choice, message):
    with pytest.raises(TypeError, match=message):
        capstone.verdict("office", choice)


def test_unknown_user():
    with pytest.raises(ValueError, match="user must be one of assistant, office, app"):
        capstone.verdict("bank", SOLUTION["office"])
