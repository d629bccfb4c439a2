"""The class report's files: the page and the same numbers as CSV, in reports/.

    reports/ASSIGNMENT.html, reports/ASSIGNMENT.csv        one assignment, anonymous
    reports/course.html, reports/course.csv                every graded assignment
    ... .names.html, .names.csv                            the same with students named

The CSV has one row per number of the page, so a spreadsheet can check or redraw it (a
cell that would start like a formula, as a flag's words may, starts with an apostrophe).
`section` says what the row counts ("exercise": handed in, passed, failed, skipped;
"mistake": a group of failed answers; "score": students with a total score; "flag";
"made" and "carry": a mistake made in `assignment`, and made again in `then`), `count`
out of `out_of`, and `share` in percent; `students` only in the named files.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from kvlesson.grading.course import folders
from kvlesson.grading.course.folders import Course
from kvlesson.grading.course.text import csv_cell
from kvlesson.grading.report import counts, page
from kvlesson.grading.report.charts import score_bins
from kvlesson.grading.report.counts import AssignmentReport, Carry

REPORTS_FOLDER = "reports"  # in the course root, beside flags/
COLUMNS = [
    "section",
    "assignment",
    "then",
    "exercise",
    "item",
    "words",
    "count",
    "out_of",
    "share",
    "students",
]


def _percent(count: int, whole: int) -> str:
    """A share in percent to one decimal, as the page writes it (without the %)."""
    return page.share(count, whole).rstrip("%") if whole else ""


def _row(
    section: str,
    assignment: str,
    item: str,
    count: int,
    out_of: int,
    *,
    exercise: str = "",
    words: str = "",
    then: str = "",
    students=(),
    names: bool = False,
) -> dict:
    return {
        "section": section,
        "assignment": assignment,
        "then": then,
        "exercise": exercise,
        "item": item,
        "words": words,
        "count": count,
        "out_of": out_of,
        "share": _percent(count, out_of),
        "students": " ".join(students) if names else "",
    }


def assignment_rows(report: AssignmentReport, names: bool) -> list[dict]:
    """The numbers of one assignment's part of the page, row by row."""
    a, whole, rows = report.assignment, len(report.students), []
    for e in report.exercises:
        for item, count in (
            ("handed in", e.submitted),
            ("passed", e.passed),
            ("failed", e.failed),
            ("skipped", e.skipped),
        ):
            rows.append(_row("exercise", a, item, count, e.submitted, exercise=e.exercise))
        rows += [
            _row(
                "mistake",
                a,
                g.key,
                g.count,
                e.submitted,
                exercise=e.exercise,
                words=g.words or g.name,
                students=g.students,
                names=names,
            )
            for g in e.failures
        ]
    rows += [_row("score", a, label, count, whole) for label, count in score_bins(report)]
    for flag in report.flags:
        reason = flag.reason if names else page.unnamed(flag.reason, report.students)
        rows.append(
            _row(
                "flag",
                a,
                flag.cell,
                1,
                whole,
                exercise=flag.notebook,
                words=reason,
                students=(flag.student,),
                names=names,
            )
        )
    return rows


def carry_rows(reports: list[AssignmentReport], carries: list[Carry], names: bool) -> list[dict]:
    whole = {r.assignment: len(r.students) for r in reports}
    rows, made = [], {}
    for c in carries:
        made.setdefault((c.mistake, c.earlier), c.made)
    rows += [
        _row(
            "made", earlier, mistake, len(students), whole[earlier], students=students, names=names
        )
        for (mistake, earlier), students in made.items()
    ]
    rows += [
        _row(
            "carry",
            c.earlier,
            c.mistake,
            len(c.again),
            len(c.handed_in),
            then=c.later,
            students=c.again,
            names=names,
        )
        for c in carries
    ]
    return rows


def _write(folder: Path, stem: str, html: str, rows: list[dict], names: bool) -> Path:
    folder.mkdir(exist_ok=True)
    base = folder / (f"{stem}.names" if names else stem)
    page = base.with_name(base.name + ".html")
    page.write_text(html)
    with base.with_name(base.name + ".csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, COLUMNS)
        writer.writeheader()
        # a flag's words and a student's id are the student's text: never a formula
        writer.writerows({name: csv_cell(value) for name, value in row.items()} for row in rows)
    return page


def for_assignment(course: Course, assignment: str, names: bool) -> Path:
    """Write the report of one graded assignment: reports/ASSIGNMENT.html and .csv
    (.names.html and .names.csv with `names`); the page's path. ValueError when nothing of
    it is graded."""
    report = counts.assignment_report(course, assignment)
    return _write(
        course.root / REPORTS_FOLDER,
        assignment,
        page.assignment_page(report, names),
        assignment_rows(report, names),
        names,
    )


def for_course(course: Course, assignments: list[str], names: bool) -> Path:
    """Write the report of every graded assignment (or of `assignments`), with how mistakes
    carry from one to the next: reports/course.html and .csv (.names. with `names`); the
    page's path. ValueError for an unknown assignment or when nothing is graded."""
    reports, carries = counts.course_reports(course, assignments)
    rows = carry_rows(reports, carries, names)
    for report in reports:
        rows += assignment_rows(report, names)
    return _write(
        course.root / REPORTS_FOLDER,
        "course",
        page.course_page(reports, carries, names),
        rows,
        names,
    )


def report_line(course: Course, assignment: str, names: bool) -> str:
    """What the grading command prints of an assignment's report: where it is, or why
    there is none."""
    try:
        path = for_assignment(course, assignment, names)
    except ValueError as error:
        return f"no class report: {error}"
    return f"the class report of {assignment}: {path} (its numbers: {path.with_suffix('.csv')})"


def course_line(course: Course, assignments: list[str], names: bool) -> str:
    """What `--report` prints: where the report is; ValueError as `for_course`."""
    path = for_course(course, assignments, names)
    return f"the class report: {path} (its numbers: {path.with_suffix('.csv')})"


def arguments(parser: argparse.ArgumentParser) -> None:
    """`kvlesson report`'s arguments."""
    parser.add_argument(
        "assignments",
        nargs="*",
        metavar="ASSIGNMENT",
        help="only these assignments (default: every graded one)",
    )
    parser.add_argument(
        "--names",
        action="store_true",
        help="name the students (default: anonymous, so that it can be shown to the class)",
    )
    parser.add_argument(
        "--course",
        type=Path,
        help="the course root (default: the one the "
        "nbgrader configuration names, else this folder)",
    )


def run(args: argparse.Namespace) -> int:
    """Write the class report of every graded assignment (or of each ASSIGNMENT), with how
    mistakes carry from one to the next; say where it is."""
    root, config = folders.course_root(Path.cwd(), args.course)
    print(course_line(Course(root, config), args.assignments, args.names))
    return 0
