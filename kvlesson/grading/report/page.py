"""The class report as one self-contained HTML page: tables, and the charts inside it.

Nothing is fetched: the style is in the page and each chart is a PNG in the page itself
(a data URL) with its alt text; every text of a student's (an id, a flag's words) is escaped,
and the page's own policy lets it run no script at all. It prints on paper as it shows on
screen. By default the page names no student (it can be shown to the class): the counts
and shares only, and the flags without their student, whose id is also taken out of the
flag's words; with `names`, each group of answers lists its students, and each flag its student.
"""

from __future__ import annotations

import re
from html import escape

from kvlesson.grading.course.known_mistakes import MISTAKES, NAMES
from kvlesson.grading.course.results import FAILED, Flag
from kvlesson.grading.course.text import counted
from kvlesson.grading.report.charts import Chart, outcome_chart, score_chart
from kvlesson.grading.report.counts import AssignmentReport, Carry, ExerciseCount

STYLE = """
body { font-family: system-ui, sans-serif; color: #111; background: #fff; margin: 2rem auto;
       max-width: 60rem; padding: 0 1rem; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; width: 100%; }
caption { text-align: left; font-weight: 600; padding: 0.3rem 0; }
th, td { border: 1px solid #555; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #eee; }
figure { margin: 1rem 0; }
img { max-width: 100%; height: auto; border: 1px solid #ccc; }
code { font-size: 0.95em; }
.note { color: #333; }
@media print { body { margin: 0; max-width: none; } h2 { break-before: auto; }
               table, figure { break-inside: avoid; } }
"""


# What the page may load and run: its own style and its PNGs, nothing else (every text of a
# student's on it is escaped as well).
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def share(count: int, whole: int) -> str:
    """A count as a share of the class, in whole percents."""
    return f"{100 * count / whole:.1f}%" if whole else "-"


def _words(text: str) -> str:
    """A hint's words as HTML: `code` in backquotes shown as code."""
    parts = escape(text).split("`")
    return "".join(
        f"<code>{part}</code>" if inside % 2 else part for inside, part in enumerate(parts)
    )


def unnamed(text: str, students: tuple[str, ...]) -> str:
    """A flag's words with every student's id taken out."""
    for student in sorted(students, key=len, reverse=True):
        text = re.sub(rf"(?<![\w.-]){re.escape(student)}(?![\w-])", "(a student)", text)
    return text


def _figure(chart: Chart, caption: str) -> str:
    return (
        f'<figure><img src="data:image/png;base64,{chart.png}" alt="{escape(chart.alt)}">'
        f'<figcaption class="note">{escape(caption)}</figcaption></figure>'
    )


def _table(caption: str, head: list[str], rows: list[list[str]], numbers: set[int]) -> str:
    """A table; `rows` are HTML already; the columns in `numbers` align right."""
    cells = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{cell}</td>' if i in numbers else f"<td>{cell}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return (
        f"<table><caption>{escape(caption)}</caption><thead><tr>"
        + "".join(f'<th scope="col">{escape(h)}</th>' for h in head)
        + f"</tr></thead><tbody>{cells}</tbody></table>"
    )


def exercises_table(report: AssignmentReport) -> str:
    rows = [
        [
            f"<code>{escape(e.exercise)}</code>",
            f"{e.points:g}",
            str(e.submitted),
            str(e.passed),
            str(e.failed),
            str(e.skipped),
        ]
        for e in report.exercises
    ]
    return _table(
        "Each exercise: how many handed it in, passed, failed and skipped it",
        ["exercise", "points", "handed in", "passed", "failed", "skipped"],
        rows,
        {1, 2, 3, 4, 5},
    )


def failures_table(exercise: ExerciseCount, names: bool) -> str:
    head = [
        "what the answer was",
        "the self-check's hint for it",
        "students",
        "share of the class",
    ] + (["who"] if names else [])
    rows = []
    for group in exercise.failures:
        what = escape(group.name) + (
            f" (<code>{group.key}</code>)" if group.key in MISTAKES else ""
        )
        row = [
            what,
            _words(group.words) if group.words else "-",
            str(group.count),
            share(group.count, exercise.submitted),
        ]
        rows.append(row + ([escape(", ".join(group.students)) or "-"] if names else []))
    return _table(
        f"{exercise.exercise}: the {counted(exercise.failed, 'failed answer')}, by the known "
        f"mistake each matched on the graded inputs",
        head,
        rows,
        {2, 3},
    )


def flags_table(flags: tuple[Flag, ...], students: tuple[str, ...], names: bool) -> str:
    if not flags:
        return "<p>No flags.</p>"
    rows = [
        ([escape(f.student)] if names else [])
        + [
            escape(f.notebook),
            escape(f.cell),
            _words(f.reason if names else unnamed(f.reason, students)),
        ]
        for f in flags
    ]
    head = (["student"] if names else []) + ["notebook", "cell", "reason"]
    return _table(
        f"{counted(len(flags), 'flag')} (the grading command's summary and flags/ list them "
        "with the student)",
        head,
        rows,
        set(),
    )


def students_table(report: AssignmentReport) -> str:
    """With names: each student's total and the known mistakes their answers matched."""
    rows = []
    for student, score in report.scores:
        mistakes = [
            f"<code>{escape(a.exercise)}</code>: {escape(NAMES.get(a.mistake, ''))}"
            for a in report.answers
            if a.student == student and a.mistake and a.outcome == FAILED
        ]
        rows.append([escape(student), f"{score:g}", "; ".join(mistakes) or "-"])
    return _table(
        "Each student: total autograded score and the known mistakes matched",
        ["student", f"score (of {report.max_score:g})", "known mistakes"],
        rows,
        {1},
    )


def assignment_section(report: AssignmentReport, names: bool, titled: bool) -> str:
    """One assignment's part of a page: its charts and tables, under its own heading when
    `titled` (the course's page)."""
    h, sub = ("h2", "h3") if titled else ("h2", "h2")
    parts = [
        f'<{h} id="{escape(report.assignment)}">{escape(report.assignment)}</{h}>'
        if titled
        else "",
        f"<p>{counted(len(report.students), 'submission')} graded.</p>",
        _figure(
            score_chart(report),
            "Total autograded scores (written answers, graded by hand, are not in them).",
        ),
        _figure(outcome_chart(report), "Each exercise across the class."),
        exercises_table(report),
        f"<{sub}>What the failed answers were</{sub}>",
        '<p class="note">Each wrong answer is held against the answers the course\'s '
        "known mistakes give on the same inputs the grade used; the hint is the words "
        "the self-check shows a student who makes that mistake.</p>",
    ]
    parts += [failures_table(e, names) for e in report.exercises if e.failed]
    if names:
        parts.append(students_table(report))
    parts += [f"<{sub}>Flags</{sub}>", flags_table(report.flags, report.students, names)]
    return "\n".join(parts)


def carry_table(carries: list[Carry], names: bool) -> str:
    if not carries:
        return "<p>No known mistake made in one notebook can be made in a later one.</p>"
    rows = [
        [
            escape(NAMES.get(c.mistake, c.mistake)),
            escape(c.earlier),
            str(len(c.made)),
            escape(c.later),
            str(len(c.handed_in)),
            str(len(c.again)),
            share(len(c.again), len(c.handed_in)),
        ]
        + ([escape(", ".join(c.again)) or "-"] if names else [])
        for c in carries
    ]
    head = [
        "known mistake",
        "made in",
        "students",
        "later notebook",
        "of them, handed it in",
        "made it again",
        "share",
    ] + (["who made it again"] if names else [])
    return _table("How mistakes carry from one notebook to the next", head, rows, {2, 4, 5, 6})


def page(title: str, body: str, names: bool) -> str:
    """A whole page around `body`: everything it says inside one `<main>` landmark, so a
    screen reader's "go to main content" lands on the title and nothing is outside a
    landmark."""
    who = (
        "Students are named: keep this page to yourself."
        if names
        else "No student is named: this page can be shown to the class."
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body><main>"
        f'<h1>{escape(title)}</h1><p class="note">{who}</p>\n{body}\n'
        "</main></body></html>\n"
    )


def assignment_page(report: AssignmentReport, names: bool) -> str:
    return page(
        f"{report.assignment}: what the class got wrong",
        assignment_section(report, names, titled=False),
        names,
    )


def course_page(reports: list[AssignmentReport], carries: list[Carry], names: bool) -> str:
    body = [
        "<h2>Mistakes carried from notebook to notebook</h2>",
        '<p class="note">Of the students whose answers matched a known mistake in one '
        "notebook, those who handed in a later notebook where the same mistake can be "
        "made, and how many of them made it again there.</p>",
        carry_table(carries, names),
    ]
    body += [assignment_section(report, names, titled=True) for report in reports]
    return page("The course: what the class got wrong", "\n".join(body), names)
