"""Student-made text as the instructor's tools may show it: a terminal, a CSV, the gradebook.

A file name, a cell's first line, a folder name or a line of collect's list is the student's
text: it can hold bytes that are not UTF-8 (the gradebook's SQLite refuses to store them, and
its commit fails), control characters (a newline that makes a second, forged line of the
grading command's summary; terminal escapes that rewrite the screen) or a formula a
spreadsheet runs (`=HYPERLINK(...)`). Every flag, failure and name the grader stores or
prints goes through `printable`; every CSV cell through `csv_cell`. HTML pages escape it
where they write it (`kvlesson.grading.report.page`, `kvlesson.grading.grade.sanitize`).
"""

from __future__ import annotations

MAX_NAME = 120  # characters of a name shown (a longer one is cut, with its length)
MAX_TEXT = 2_000  # characters of a flag's or a failure's words
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a formula


def printable(text: str, limit: int = MAX_NAME) -> str:
    """`text` on one line that any reader can show: bytes that are not UTF-8 (Python's
    surrogate escapes) and control characters written as escapes (\\xff, \\n, \\x1b), and
    cut past `limit` characters, with its length."""
    shown = "".join(
        f"\\x{ord(ch) - 0xDC00:02x}"
        if 0xDC80 <= ord(ch) <= 0xDCFF
        else ch.encode("unicode_escape").decode("ascii")
        if not ch.isprintable() or 0xD800 <= ord(ch) <= 0xDFFF
        else ch
        for ch in str(text)
    )
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(text)} characters)"


def words(text: str) -> str:
    """A flag's or a failure's words, printable (`printable`, up to `MAX_TEXT`)."""
    return printable(text, MAX_TEXT)


def csv_cell(value: object) -> object:
    """A value as a CSV cell a spreadsheet shows as text: one that starts like a formula
    (=, +, -, @, a tab, a carriage return) gets a leading apostrophe (OWASP's advice);
    numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def terminal_safe(text: str) -> str:
    """A log's lines as a terminal may print them: every control character but the newline
    and the tab written as an escape (no colour, no cursor moves, no rewritten lines), and
    bytes that are not UTF-8 as escapes."""
    return "\n".join(
        printable(line.replace("\t", "    "), len(line) * 4 + 16) for line in str(text).split("\n")
    )


def counted(count: int, noun: str, plural: str = "") -> str:
    """A count with its noun in the right number: "1 failed answer", "3 failed answers"."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
