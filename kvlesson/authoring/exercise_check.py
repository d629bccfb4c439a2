"""`kvlesson check`: every check that concerns one exercise, in one command, and what to change.

    kvlesson check 02_ceiling ex2_3

It builds the assignment first when its instructor notebook changed since the last build (the
key records what it was built from: `built_from`), then runs the course's own tests for that
exercise alone, and says in a few lines what each found:

* the self-check against the build's mutations, the exercise's declared mistakes and the
  wrong answers of a student's own in `HAND` (no lie, none blind), and every probe held
  against the exercise's authority (tests/authoring/test_selfchecks.py);
* no answer in view of its question (test_shown_numbers.py), the exercise's rules
  (test_exercise_rules.py);
* the notebook's own rules (tests/system/test_notebooks.py: numbers in the prose come out
  of the code, test cells record then verify, the key is the build's, the release without
  answers fails) and the grader's reading of its answer cells (test_marks.py);
* the notebook for another card and share (`kvlesson for`), whose self-checks hold that
  setting's answers.

The same selection in one pytest line, without the build and the other card:
`python -m pytest -p kvlesson.authoring.exercise_check --exercise 02_ceiling/ex2_3 FILES`
(FILES: `TESTS` below). Needs pytest: `pip install -e ".[author]" -c constraints.txt`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from kvlesson.authoring.build import build, source_digest
from kvlesson.authoring.command import ROOT
from kvlesson.authoring.scaffold import notebook_of
from kvlesson.grading.course.key import key_path
from kvlesson.grading.course.notebooks import is_test_cell, meta

TESTS = (  # the test files that hold checks of one exercise or of its notebook
    "tests/authoring/test_selfchecks.py",
    "tests/authoring/test_shown_numbers.py",
    "tests/authoring/test_exercise_rules.py",
    "tests/system/test_notebooks.py",
    "tests/grading/marking/test_marks.py",
)
NOTEBOOK_TESTS = (  # of a notebook's tests, those an exercise added to it can fail
    "test_every_quantity_in_the_prose_is_an_output_of_the_notebook",
    "test_each_test_cell_records_first_then_verifies_with_stamps",
    "test_the_key_matches_what_the_hidden_tests_printed",
    "test_every_answer_cell_is_followed_by_its_self_check",
    "test_autograde_knows_each_locked_cells_released_form",
    "test_every_unanswered_release_fails_its_tests",
    "test_the_reading_finds_nothing_in_the_instructors_answers",
)
OTHER_SETTING = {"gpu": "H100_80GB", "share": 50}  # tests/system/test_course_for.py's first run
AUTHOR_INSTALL = 'pip install -e ".[author]" -c constraints.txt'


# --- the pytest plugin: only the tests of one exercise -----------------------------------


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--exercise",
        metavar="ASSIGNMENT/NAME",
        help="only the tests of one exercise (02_ceiling/ex2_3) and of its notebook",
    )
    parser.addoption("--exercise-report", metavar="PATH", help="each test's outcome, as JSON")


def pytest_collection_modifyitems(config, items) -> None:
    """Keep the tests whose parameter is the exercise's test cell, and the notebook's tests
    of NOTEBOOK_TESTS whose parameter is its assignment."""
    chosen = config.getoption("--exercise")
    if not chosen:
        return
    assignment, grade_id = tests_id(chosen)
    kept, left = [], []
    for item in items:
        said = getattr(getattr(item, "callspec", None), "id", None)
        mine = said == grade_id or (said == assignment and item.originalname in NOTEBOOK_TESTS)
        (kept if mine else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
    items[:] = kept


def pytest_runtest_logreport(report) -> None:
    """Note each test's outcome for `kvlesson check` (its failure in words, what it said)."""
    path = os.environ.get("KVLESSON_CHECK_REPORT")
    if not path or (report.when != "call" and report.passed):
        return
    crash = getattr(report.longrepr, "reprcrash", None)
    said = crash.message if crash is not None else str(report.longrepr or "")
    row = {
        "test": report.nodeid,
        "outcome": report.outcome,
        "when": report.when,
        "why": said if report.failed else "",
        "printed": report.capstdout,
    }
    with open(path, "a") as out:
        out.write(json.dumps(row) + "\n")


def tests_id(chosen: str) -> tuple[str, str]:
    """(assignment, the exercise's test cell id) of "02_ceiling/ex2_3" (or ".../ex2_3_tests")."""
    assignment, _, name = chosen.partition("/")
    if not assignment or not name:
        raise ValueError(f"exercise must be ASSIGNMENT/NAME, such as 02_ceiling/ex2_3: {chosen!r}")
    return assignment, name if name.endswith("_tests") else f"{name}_tests"


# --- the verb -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One check: what it holds (its test's name in words), passed or not, and what it said:
    its failure (what to change), or its last line of print."""

    what: str
    passed: bool
    said: str


BUILD_LOG = Path(".kvlesson") / "build.log"  # in the course root: the last check's build, whole


def built_afresh(root: Path, assignment: str, grade_id: str = "") -> bool:
    """Build `assignment` if its instructor notebook changed since its key was written
    (whether it did), showing what the build says of `grade_id` (the whole log: BUILD_LOG;
    its end, if the build stops)."""
    key = key_path(root, assignment)
    built = json.loads(key.read_text()).get("built_from") if key.is_file() else None
    nb = nbformat.read(notebook_of(root, assignment), as_version=4)
    if built == source_digest(nb):
        return False
    said = f"changed since it was built: kvlesson build {assignment} (log: {BUILD_LOG})"
    print(f"solutions/{assignment} {said}")
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):
            build(root, [assignment])
    except Exception:
        print("\n".join(log.getvalue().splitlines()[-20:]))
        raise
    finally:
        (root / BUILD_LOG).parent.mkdir(exist_ok=True)
        (root / BUILD_LOG).write_text(log.getvalue())
    print("\n".join(said_about(log.getvalue(), f"{assignment}/{grade_id}")))
    return True


def said_about(log: str, test: str) -> list[str]:
    """A build's log's lines about the test cell `test` (ASSIGNMENT/GRADE_ID), indented too."""
    lines, mine = [], False
    for line in log.splitlines():
        if not line.startswith(" "):
            mine = line.startswith(f"{test}:")
        if mine:
            lines.append(line)
    return lines


def exercise_tests(root: Path, assignment: str, grade_id: str) -> list[Outcome]:
    """Run the course's tests of one exercise (pytest, in the course root); their outcomes."""
    try:
        import pytest  # noqa: F401 (only whether it is installed)
    except ImportError:
        raise RuntimeError(f"the checks need pytest, in the author extra: {AUTHOR_INSTALL}")
    missing = [name for name in TESTS if not (root / name).is_file()]
    if missing:
        raise RuntimeError(
            f"the checks are the course repository's own tests, and {root} lacks "
            f"{', '.join(missing)}: run kvlesson check in a clone of the course repository"
        )
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.jsonl"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", __name__, "--tb=no", "--no-header"]
            + ["-p", "no:randomly", f"--exercise={assignment}/{grade_id}", *TESTS],
            cwd=root,
            env={**os.environ, "KVLESSON_CHECK_REPORT": str(report)},
            capture_output=True,
            text=True,
        )
        rows = (
            [json.loads(line) for line in report.read_text().splitlines()]
            if report.is_file()
            else []
        )
    if done.returncode not in (0, 1) or not rows:
        raise RuntimeError(
            f"pytest could not run the checks:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    return [outcome_of(row, grade_id) for row in rows]


def outcome_of(row: dict, grade_id: str = "") -> Outcome:
    """A test's report in words: "the self checks reject what the grade rejects", and its
    failure (its message, without pytest's explanation of the assert) or, passed, the line
    it printed about the exercise."""
    name = row["test"].split("::")[-1].split("[")[0].removeprefix("test_").replace("_", " ")
    if row["when"] != "call":
        name += f" ({row['when']})"
    if row["outcome"] != "passed":
        why = []
        for line in row["why"].splitlines():
            if line.lstrip().startswith(("assert ", "+")):
                break  # pytest's explanation of the assert follows
            why.append(line.strip())
        said = " ".join(why).removeprefix("AssertionError: ").removeprefix("Failed: ")
        return Outcome(name, False, said)
    printed = [line.strip() for line in (row["printed"] or "").splitlines() if line.strip()]
    about = [line for line in printed if grade_id and line.startswith(grade_id)]
    return Outcome(name, True, (about or [""])[0])


def other_setting(root: Path, assignment: str) -> Outcome:
    """The notebook for another card and share (`kvlesson for`), in a folder of its own: it
    must run there too, its self-checks made for that setting."""
    from kvlesson.authoring.course_for import course_for

    what = f"the notebook for {OTHER_SETTING['gpu']} at a {OTHER_SETTING['share']}% share"
    with tempfile.TemporaryDirectory() as scratch:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                course_for(
                    Path(scratch) / "course",
                    OTHER_SETTING["gpu"],
                    share=OTHER_SETTING["share"],
                    root=root,
                    names=[assignment],
                    jobs=1,
                )
        except (ValueError, RuntimeError) as error:
            return Outcome(
                what,
                False,
                f"kvlesson for --gpu {OTHER_SETTING['gpu']} --share "
                f"{OTHER_SETTING['share']} {assignment}: {error}",
            )
    return Outcome(what, True, "")


def exercise_in(root: Path, assignment: str, name: str) -> str:
    """The test cell id of exercise `name` of `assignment`, or a clear refusal naming the
    exercises the notebook has."""
    grade_id = tests_id(f"{assignment}/{name}")[1]
    nb = nbformat.read(notebook_of(root, assignment), as_version=4)
    tests = [meta(c)["grade_id"] for c in nb.cells if is_test_cell(c)]
    if grade_id not in tests:
        raise ValueError(
            f"{assignment} has no exercise {name} (no test cell {grade_id}); its exercises "
            f"are {', '.join(t.removesuffix('_tests') for t in tests) or 'none'} "
            f"(kvlesson exercise {assignment} {name} writes a new one)"
        )
    return grade_id


def check(root: Path, assignment: str, name: str) -> list[Outcome]:
    """Every check of one exercise: built first if its notebook changed."""
    grade_id = exercise_in(root, assignment, name)
    built_afresh(root, assignment, grade_id)
    print(f"checking {assignment}/{grade_id}", flush=True)
    return [*exercise_tests(root, assignment, grade_id), other_setting(root, assignment)]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment", metavar="ASSIGNMENT", help="a folder of solutions/")
    parser.add_argument("name", metavar="NAME", help="the exercise: ex2_3 (or ex2_3_tests)")


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    started = time.monotonic()
    outcomes = check(ROOT, args.assignment, args.name)
    for outcome in outcomes:
        print(f"  {'ok    ' if outcome.passed else 'CHANGE'}  {outcome.what}")
        if outcome.said:
            print(
                textwrap.fill(outcome.said, 96, initial_indent=" " * 10, subsequent_indent=" " * 10)
            )
    failed = sum(not o.passed for o in outcomes)
    print(
        f"{args.assignment} {args.name}: {len(outcomes)} checks, {failed} to change "
        f"({time.monotonic() - started:.0f} s)"
    )
    return 1 if failed else 0
