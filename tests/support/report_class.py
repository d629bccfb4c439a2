"""The synthetic class of 01_floor_plan and 02_ceiling that the class report is held to.

Built from the instructor's solutions with wrong answers written in as students write them
(GB read as GiB, the reserve left out, floor for ceiling, the notebook's global for the
argument, a forbidden function, an answer no known mistake gives, an untouched release, a file
that is not a notebook). The counts each report must show are worked out here from the class
as written, never from the report's own code. tests/system/conftest.py grades this class once a
run, in the course every graded assignment shares (`graded_course`); ada, who hands in the
instructor's answers, hands in every other assignment there too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kvlesson.grading.course.known_mistakes import MISTAKES
from kvlesson.grading.course.results import FAILED, NOT_GRADED, PASSED, SKIPPED, ZEROED
from support.course import edit_notebook, instructor_solutions

NOTEBOOKS = {"01_floor_plan": "floor_plan", "02_ceiling": "ceiling"}
ASSIGNMENTS = list(NOTEBOOKS)
SOLVED = {a: instructor_solutions(a, nb) for a, nb in NOTEBOOKS.items()}
# The autograded exercises (test cells) in each notebook's order, and their answer cells.
EXERCISES = {
    "01_floor_plan": {
        "q1_pool_tests": "q1_answer",
        "q1_unused_tests": "q1_answer",
        "ex1_1_tests": "ex1_1_answer",
        "ex1_2_tests": "ex1_2_answer",
    },
    "02_ceiling": {
        "ex2_1_tests": "ex2_1_answer",
        "ex2_2_tests": "ex2_2_answer",
        "q3_pool_tests": "q3_answer",
        "q3_blocks_tests": "q3_answer",
        "q3_starts_tests": "q3_answer",
    },
}
POINTS = {
    "q1_pool_tests": 1,
    "q1_unused_tests": 1,
    "ex1_1_tests": 2,
    "ex1_2_tests": 2,
    "ex2_1_tests": 1,
    "ex2_2_tests": 2,
    "q3_pool_tests": 1,
    "q3_blocks_tests": 1,
    "q3_starts_tests": 1,
}
RESERVE = "a term of the sum is missing: `kv.RESERVE_BYTES`."
GIB = MISTAKES["gib"]
CEIL = "a partly filled block still takes a whole block: round up, not down."  # Ex 2.1's words
GLOBAL_SHARE = "pool_bytes should use its argument `share`, not the notebook's `SHARE`."
GLOBAL_LONGEST = "lowest_share_for should use its argument `longest`, not the notebook's `LONGEST`."


def q1(pool_in: str = "1e9", unused_in: str = "1e9", reserve: bool = True) -> str:
    minus = " - kv.RESERVE_BYTES" if reserve else ""
    return (
        f"pool_bytes_q1 = Q1_SHARE / 100 * gpu.memory_bytes - model.weights_bytes{minus}\n"
        f"pool_gb = pool_bytes_q1 / {pool_in}\n"
        f"unused_gb = (gpu.memory_bytes - Q1_SHARE / 100 * gpu.memory_bytes) / {unused_in}\n"
    )


def q3(pool_in: str = "1e9", reserve: bool = True) -> str:
    minus = " - kv.RESERVE_BYTES" if reserve else ""
    return (
        f"pool_q3 = Q3_SHARE / 100 * gpu.memory_bytes - model.weights_bytes{minus}\n"
        f"pool_gb_q3 = pool_q3 / {pool_in}\n"
        "blocks_q3 = max(0, int(pool_q3 // (kv.BLOCK_TOKENS * model.bytes_per_token)))\n"
        "starts_q3 = blocks_q3 >= kv.blocks_for(Q3_LONGEST)\n"
        "starts_half_q3 = blocks_q3 >= kv.blocks_for(Q3_LONGEST // 2)\n"
    )


NO_RESERVE_POOL = (
    "def pool_bytes(share):\n    allowed = share / 100 * gpu.memory_bytes\n"
    "    return allowed - model.weights_bytes\n"
)
GLOBAL_POOL = (
    "def pool_bytes(share):\n    return SHARE / 100 * gpu.memory_bytes - "
    "model.weights_bytes - kv.RESERVE_BYTES\n"
)
PACKAGED_POOL = "def pool_bytes(share):\n    return kv.memory_parts(share, gpu, model).pool_bytes\n"
ODD_BLOCKS = "def blocks_in(pool):\n    return max(0, int(pool // 1_000_000))\n"
FLOOR_BLOCKS = "def chat_blocks(tokens):\n    return tokens // kv.BLOCK_TOKENS\n"
GLOBAL_LOWEST = SOLVED["02_ceiling"]["ex2_2_answer"].replace(
    "blocks_for(longest)", "blocks_for(LONGEST)"
)
assert GLOBAL_LOWEST != SOLVED["02_ceiling"]["ex2_2_answer"]

RELEASED = None  # an answer cell left as released: its exercises are skipped
NOT_JSON = {"file": "not a notebook"}  # what a student hands in instead of the notebook
NONE = "none"  # a wrong answer no known mistake gives
SKIP = (SKIPPED, "")  # an exercise left as released


@dataclass(frozen=True)
class Student:
    """One student: per assignment handed in, the answer cells changed from the solutions
    (RELEASED: left as the release gave it), and what each exercise's answer is (a
    mistake's code with its hint, NONE, ZEROED, SKIPPED); every other exercise passed. An
    assignment not named is not handed in."""

    id: str
    answers: dict[str, dict[str, str | None]]
    wrong: dict[str, tuple[str, str]] = field(default_factory=dict)

    def outcome(self, exercise: str) -> tuple[str, str, str]:
        """(outcome, mistake, words) the report must count this answer as."""
        what, words = self.wrong.get(exercise, ("", ""))
        if what in ("", SKIPPED, ZEROED, NOT_GRADED):
            return what or PASSED, "", ""
        return FAILED, "" if what == NONE else what, words


RELEASE_02 = dict.fromkeys(["ex2_1_answer", "ex2_2_answer", "q3_answer"], RELEASED)
CLASS = [
    Student("ada", {"01_floor_plan": {}, "02_ceiling": {}}),
    Student(
        "ben",
        {
            "01_floor_plan": {"q1_answer": q1("2**30", "2**30"), "ex1_2_answer": ODD_BLOCKS},
            "02_ceiling": {"q3_answer": q3("2**30")},
        },
        {
            "q1_pool_tests": ("gib", GIB),
            "q1_unused_tests": ("gib", GIB),
            "ex1_2_tests": (NONE, ""),
            "q3_pool_tests": ("gib", GIB),
        },
    ),
    Student(
        "cy",
        {"01_floor_plan": {"q1_answer": q1("2**30"), "ex1_1_answer": NO_RESERVE_POOL}},
        {"q1_pool_tests": ("gib", GIB), "ex1_1_tests": ("term", RESERVE)},
    ),
    Student(
        "dee",
        {
            "01_floor_plan": {"q1_answer": q1(reserve=False), "ex1_1_answer": NO_RESERVE_POOL},
            "02_ceiling": {"q3_answer": q3(reserve=False)},
        },
        {
            "q1_pool_tests": ("term", RESERVE),
            "ex1_1_tests": ("term", RESERVE),
            "q3_pool_tests": ("term", RESERVE),
            "q3_blocks_tests": ("term", RESERVE),
            # the yes or no is graded with the blocks that decide it, whose mistake it names
            "q3_starts_tests": ("term", RESERVE),
        },
    ),
    Student(
        "eve",
        {
            "01_floor_plan": {"ex1_1_answer": GLOBAL_POOL, "q1_answer": q1(unused_in="2**30")},
            "02_ceiling": {"ex2_1_answer": FLOOR_BLOCKS, "ex2_2_answer": GLOBAL_LOWEST},
        },
        {
            "ex1_1_tests": ("global", GLOBAL_SHARE),
            "q1_unused_tests": ("gib", GIB),
            "ex2_1_tests": ("ceil", CEIL),
            "ex2_2_tests": ("global", GLOBAL_LONGEST),
        },
    ),
    Student(
        "fay",
        {
            "01_floor_plan": {
                "ex1_1_answer": PACKAGED_POOL,
                "ex1_2_answer": RELEASED,
                "q1_answer": "",
            },  # emptied: skipped too
            "02_ceiling": {**RELEASE_02, "ex2_1_answer": FLOOR_BLOCKS},
        },
        {
            "ex1_1_tests": (ZEROED, ""),
            "ex1_2_tests": SKIP,
            "q1_pool_tests": SKIP,
            "q1_unused_tests": SKIP,
            "ex2_1_tests": ("ceil", CEIL),
            "ex2_2_tests": SKIP,
            "q3_pool_tests": SKIP,
            "q3_blocks_tests": SKIP,
            "q3_starts_tests": SKIP,
        },
    ),
    Student(
        "hal",
        {"01_floor_plan": NOT_JSON},
        dict.fromkeys(EXERCISES["01_floor_plan"], (NOT_GRADED, "")),
    ),
]
IDS = [s.id for s in CLASS]


def handed_in(assignment: str) -> list[Student]:
    return [s for s in CLASS if assignment in s.answers]


def expected_exercise_rows(assignment: str) -> dict[tuple[str, str], int]:
    """(exercise, item) -> count, as the class is written: handed in, passed, failed,
    skipped, and each group of failures."""
    rows: dict[tuple[str, str], int] = {}
    for exercise in EXERCISES[assignment]:
        outcomes = [s.outcome(exercise) for s in handed_in(assignment)]
        passed = sum(o == PASSED for o, _, _ in outcomes)
        skipped = sum(o == SKIPPED for o, _, _ in outcomes)
        rows[exercise, "handed in"] = len(outcomes)
        rows[exercise, "passed"], rows[exercise, "skipped"] = passed, skipped
        rows[exercise, "failed"] = len(outcomes) - passed - skipped
        rows[exercise, "none"] = sum(o == FAILED and not m for o, m, _ in outcomes)
        for outcome, mistake, _ in outcomes:
            if mistake:
                rows[exercise, mistake] = rows.get((exercise, mistake), 0) + 1
            elif outcome in (ZEROED, NOT_GRADED):
                rows[exercise, outcome] = rows.get((exercise, outcome), 0) + 1
    return rows


def expected_scores(assignment: str) -> Counter:
    """How many students have each total autograded score."""
    return Counter(
        sum(POINTS[e] for e in EXERCISES[assignment] if s.outcome(e)[0] == PASSED)
        for s in handed_in(assignment)
    )


def made(assignment: str, mistake: str) -> set[str]:
    return {
        s.id
        for s in handed_in(assignment)
        if any(s.outcome(e)[1] == mistake for e in EXERCISES[assignment])
    }


def submit(root: Path, student: Student, assignment: str) -> None:
    """The student's notebook where `nbgrader collect` leaves it."""
    notebook = f"{NOTEBOOKS[assignment]}.ipynb"
    folder = root / "submitted" / student.id / assignment
    folder.mkdir(parents=True)
    (folder / notebook).write_bytes((root / "notebooks" / assignment / notebook).read_bytes())
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    if student.answers[assignment] is NOT_JSON:
        (folder / notebook).write_text(NOT_JSON["file"])
        return
    answers = {**SOLVED[assignment], **student.answers[assignment]}
    edit_notebook(
        folder / notebook,
        answers={cell: source for cell, source in answers.items() if source is not RELEASED},
    )
