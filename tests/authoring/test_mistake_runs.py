"""(In the kernel) every known mistake swapped in and noted in one request: each run as a
cell of its own, quietly; the right answer back after each; a mistake whose code does not
run noted as such; a right answer that no longer runs stops the build."""

from __future__ import annotations

import json

import pytest
from IPython.core.interactiveshell import InteractiveShell

from kvlesson.authoring import mistake_runs

RIGHT = "def f(x):\n    return x + 1"


@pytest.fixture
def shell(monkeypatch):
    """An IPython shell in this process, standing in for the notebook's kernel."""
    found = InteractiveShell.instance()
    monkeypatch.setattr(mistake_runs, "_shell", lambda: found)
    found.run_cell(RIGHT)
    found.run_cell("from kvlesson.grading.checks import selfcheck")
    yield found
    InteractiveShell.clear_instance()


def test_each_mistake_is_in_place_while_noted_and_the_right_answer_comes_back(shell, tmp_path):
    plan = tmp_path / "plan.json"
    inputs = [
        {"text": f'selfcheck.count("f({x})", lambda: f({x}), "blocks")'} for x in (1, 10)
    ]  # as the plan writes a probe
    plan.write_text(json.dumps({"inputs": inputs}))
    codes = [
        "def f(x):\n    return x",  # one less
        "def f(x) return x",  # no Python: does not run
        "def f(x):\n    print('noise')\n    return x * 2",  # prints: unseen
        "def f(x):\n    raise ValueError('no')",  # runs, and raises on every input
    ]
    out = tmp_path / "answers.json"
    mistake_runs.search_values(codes, RIGHT, str(plan), str(out))
    rows = json.loads(out.read_text())
    assert rows == [["int:1", "int:10"], None, ["int:2", "int:20"], [None, None]]
    assert shell.user_ns["f"](1) == 2  # the right answer is back


def test_a_right_answer_that_no_longer_runs_stops(shell, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"inputs": []}))
    with pytest.raises(mistake_runs.RightAnswerLost, match="no longer runs after"):
        mistake_runs.search_values(
            ["x = 1"], "raise RuntimeError()", str(plan), str(tmp_path / "o")
        )
    assert shell.showtraceback.__name__ != "<lambda>"  # IPython's own again


def test_the_stamp_notes_only_the_mistakes_that_ran(shell, tmp_path, monkeypatch):
    from kvlesson.grading.checks import selfcheck

    noted = []
    monkeypatch.setattr(
        selfcheck,
        "wrong_values",
        lambda mistake, hint, same: noted.append((mistake, shell.user_ns["f"](1))),
    )
    mistakes = [
        ("off by one", "hint", "def f(x):\n    return x", "same"),
        ("broken", "hint", "def f(x) return", ""),
        ("doubled", "hint", "def f(x):\n    return 2 * x + 2", ""),
    ]
    out = tmp_path / "ran.json"
    mistake_runs.stamp_values(mistakes, RIGHT, str(out))
    assert json.loads(out.read_text()) == [True, False, True]
    assert noted == [("off by one", 1), ("doubled", 4)]  # each noted while it was in place
    assert shell.user_ns["f"](1) == 2
