"""A student's id: the one rule every way in checks, and why a name is not one.

A student id comes from a name the instructor did not choose: a folder of the exchange's
inbound (the student's), a file in a learning platform's download (named after the
student's own file), a folder a teaching assistant makes by hand. It then stands in the
gradebook, in the course's folder names, in the formgrader's pages (whose header writes it
into the HTML unescaped), the feedback, the class report, CSV files and the terminal. So
every way in (collect, the zip path, the grading command's reading of submitted/) takes only
an id that is inert in all of them: letters and digits of any script, and `_ . @ -`,
starting with a letter, a digit or `_` (never a dot, as nbgrader's own folders do; never `-`
or `@`, which start an option or a spreadsheet formula), at most `MAX_ID` characters. Such
an id holds no markup (`<`, `&`, quotes), no path (`/`), no line break or terminal escape,
no byte that is not UTF-8, and no `+` (the exchange's separator in a submission's name).
Every page still escapes it where it writes it; this rule is the first wall, not the only.
"""

from __future__ import annotations

MAX_ID = 128  # characters of a student id in nbgrader's gradebook (api.Student.id: String(128))
MARKS = "_.@-"  # besides letters and digits
FIRST_MARKS = "_"  # the only mark an id may start with


def id_problem(name: str) -> str:
    """Why `name` cannot be a student id, in words that follow "its name" ("" when it can):
    e.g. "holds '<': a student id holds only letters, digits and _ . @ -"."""
    if not name:
        return "is empty"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8 text"
    if any(not ch.isprintable() for ch in name):
        return "holds a line break or another control character"
    if len(name) > MAX_ID:
        return f"is longer than {MAX_ID} characters"
    if not (name[0].isalnum() or name[0] in FIRST_MARKS):
        return f"starts with {name[0]!r}: a student id starts with a letter, a digit or _"
    odd = next((ch for ch in name if not (ch.isalnum() or ch in MARKS)), "")
    if odd:
        return f"holds {odd!r}: a student id holds only letters, digits and {' '.join(MARKS)}"
    return ""
