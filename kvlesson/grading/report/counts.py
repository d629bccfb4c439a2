"""What the class got wrong: an assignment's answers counted exercise by exercise, and how
each student's mistakes carry from one notebook to the next.

For each exercise: how many handed it in, passed, failed and skipped it; the failures
split by the known mistake each answer matched (`kvlesson.grading.marking.diagnosis`), with the
count and the share of the class, then those no known mistake explains, those whose
values were right but a flag cost the points, and those that could not be graded. For
the assignment: every student's total autograded score, and the flags. Across
assignments: of the students who made a mistake in one notebook, how many handed in a
later notebook where the same mistake can be made, and how many made it again there.
Students are kept by id; the page decides whether to name them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlesson.grading.course.folders import Course, how_to_hand_in
from kvlesson.grading.course.known_mistakes import MISTAKES, is_known, name_of, rank
from kvlesson.grading.course.results import (
    FAILED,
    NOT_GRADED,
    PASSED,
    SKIPPED,
    ZEROED,
    Answer,
    Flag,
)
from kvlesson.grading.report.graded import (
    check_known,
    class_answers,
    graded_assignments,
    graded_notebooks,
    known_mistakes,
)

NO_MATCH = "none"  # the group of wrong answers no known mistake gives
GROUPS = {  # the other groups of failures: the words the report gives them
    NO_MATCH: "a wrong answer no known mistake gives",
    ZEROED: "right values, but a flag cost the points (see the flags)",
    NOT_GRADED: "the submission could not be graded (see the flags)",
}


@dataclass(frozen=True)
class Group:
    """Failed answers of one kind: a known mistake (its code, its name, its hint's words),
    or one of GROUPS; the students who gave them."""

    key: str
    name: str
    words: str
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass(frozen=True)
class ExerciseCount:
    """One exercise across the class: handed in, passed, failed, skipped, and the failures
    by group (known mistakes first, most common first; then no match, zeroed, not graded)."""

    notebook: str
    exercise: str
    points: float
    submitted: int
    passed: int
    skipped: int
    failures: tuple[Group, ...]

    @property
    def failed(self) -> int:
        return self.submitted - self.passed - self.skipped


@dataclass(frozen=True)
class AssignmentReport:
    """One assignment across the class."""

    assignment: str
    students: tuple[str, ...]
    exercises: tuple[ExerciseCount, ...]
    scores: tuple[tuple[str, float], ...]  # (student, total autograded score)
    max_score: float
    flags: tuple[Flag, ...]
    answers: tuple[Answer, ...]

    def made(self, mistake: str) -> set[str]:
        """The students who gave, in some exercise, the answer `mistake` gives."""
        return {a.student for a in self.answers if a.outcome == FAILED and a.mistake == mistake}


@dataclass(frozen=True)
class Carry:
    """A mistake carried from an earlier assignment to a later one: who made it there, who
    of them handed in the later one (where it can be made too), who made it again."""

    mistake: str
    earlier: str
    later: str
    made: tuple[str, ...]
    handed_in: tuple[str, ...]
    again: tuple[str, ...]


def assignment_report(course: Course, assignment: str) -> AssignmentReport:
    """The report of one graded assignment; ValueError when nothing of it is graded."""
    if assignment not in graded_assignments(course):
        raise ValueError(
            f"nothing of {assignment} is graded yet: {how_to_hand_in(assignment)}, then "
            f"kvlesson grade {assignment}"
        )
    answers = class_answers(course, assignment)
    graded = graded_notebooks(course, assignment)
    students = tuple(sorted({g.student for g in graded}))
    totals = {s: sum(g.score for g in graded if g.student == s) for s in students}
    most = max(sum(g.max_score for g in graded if g.student == s) for s in students)
    order = dict.fromkeys((a.notebook, a.exercise, a.points) for a in answers)
    exercises = tuple(
        _count(
            notebook,
            exercise,
            points,
            [a for a in answers if a.exercise == exercise and a.notebook == notebook],
        )
        for notebook, exercise, points in order
    )
    flags = tuple(dict.fromkeys(f for g in graded for f in g.flags))
    return AssignmentReport(
        assignment, students, exercises, tuple(totals.items()), most, flags, tuple(answers)
    )


def _count(notebook: str, exercise: str, points: float, answers: list[Answer]) -> ExerciseCount:
    def who(test) -> tuple[str, ...]:
        return tuple(sorted(a.student for a in answers if test(a)))

    failed = [a for a in answers if a.outcome == FAILED]
    known = {(a.mistake, a.words) for a in failed if a.mistake}
    groups = [
        Group(
            code,
            name_of(code),
            words,
            who(lambda a, c=code, w=words: a.outcome == FAILED and a.mistake == c and a.words == w),
        )
        for code, words in known
    ]
    groups.sort(
        key=lambda g: (-g.count, rank(g.key) if is_known(g.key) else len(MISTAKES), g.words)
    )
    groups.append(
        Group(NO_MATCH, GROUPS[NO_MATCH], "", who(lambda a: a.outcome == FAILED and not a.mistake))
    )
    for outcome in (ZEROED, NOT_GRADED):
        students = who(lambda a, o=outcome: a.outcome == o)
        if students:
            groups.append(Group(outcome, GROUPS[outcome], "", students))
    return ExerciseCount(
        notebook,
        exercise,
        points,
        len(answers),
        sum(a.outcome == PASSED for a in answers),
        sum(a.outcome == SKIPPED for a in answers),
        tuple(groups),
    )


def carry_over(reports: list[AssignmentReport], can_make: dict[str, set[str]]) -> list[Carry]:
    """For each known mistake and each assignment where some students made it: for every
    later assignment whose exercises can give it (`can_make`: assignment -> mistake codes),
    who of them handed that one in and who made the mistake again there."""
    carries = []
    for mistake in MISTAKES:
        for place, earlier in enumerate(reports):
            made = earlier.made(mistake)
            if not made:
                continue
            for later in reports[place + 1 :]:
                handed_in = made & set(later.students)
                if mistake in can_make.get(later.assignment, set()) and handed_in:
                    carries.append(
                        Carry(
                            mistake,
                            earlier.assignment,
                            later.assignment,
                            tuple(sorted(made)),
                            tuple(sorted(handed_in)),
                            tuple(sorted(handed_in & later.made(mistake))),
                        )
                    )
    return carries


def course_reports(
    course: Course, assignments: list[str] | None = None
) -> tuple[list[AssignmentReport], list[Carry]]:
    """The report of every graded assignment (or of `assignments`), and the carry-over
    between them; ValueError when nothing is graded yet."""
    for name in assignments or ():
        check_known(course, name)
    names = assignments or graded_assignments(course)
    if not names:
        raise ValueError(
            f"nothing is graded yet in {course.root}: {how_to_hand_in('ASSIGNMENT')}, then "
            "kvlesson grade ASSIGNMENT"
        )
    reports = [assignment_report(course, name) for name in sorted(names)]
    can_make = {name: known_mistakes(course, name) for name in names}
    return reports, carry_over(reports, can_make)
