"""The table of wrong answers of a student's own, `HAND` in tests/authoring/test_selfchecks.py:
an exercise's entry written in.

Each exercise has at least three (the mutation test fails with fewer): mistakes a student
makes that no mutation of the solution makes, `(label, the answer cell as the student writes
it, words the self-check's message must hold, or None)`. `kvlesson exercise` writes a new
exercise's entry here, at the end of the table, in the form the formatter (ruff) keeps.
"""

from __future__ import annotations

import ast
from pathlib import Path

TABLE = Path("tests") / "authoring" / "test_selfchecks.py"  # in a course repository
NOTE = (
    "# kvlesson exercise's example: replace with three wrong answers of your exercise's\n"
    "# own, each (label, the answer cell as a student writes it, words the self-check's\n"
    "# message must hold, or None)"
)


def table_of(tree: ast.Module) -> ast.Dict:
    """The module's `HAND = {...}`."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["HAND"]
            and isinstance(node.value, ast.Dict)
        ):
            return node.value
    raise ValueError(f"{TABLE} has no HAND = {{...}} table")


def entry_text(grade_id: str, answers: list[tuple[str, str, str | None]]) -> str:
    """One entry of the table, indented as its neighbours, each answer a tuple of its own."""
    lines = [f"    {_literal(grade_id)}: ["]
    lines += [f"        {line}" for line in NOTE.splitlines()]
    for answer in answers:
        lines.append("        (")
        for part in answer:  # a cell of several lines as a literal a line, joined
            pieces = part.splitlines(keepends=True) if part else [part]
            lines += [f"            {_literal(piece)}" for piece in pieces]
            lines[-1] += ","
        lines.append("        ),")
    lines.append("    ],")
    return "\n".join(lines) + "\n"


def _literal(value: str | None) -> str:
    """A string as the formatter writes it: double quotes where it can."""
    text = repr(value)
    if text.startswith("'") and '"' not in text:  # repr chose single quotes for no reason
        text = f'"{text[1:-1]}"'
    return text


def with_entry(text: str, grade_id: str, answers: list[tuple[str, str, str | None]]) -> str:
    """The test module's `text` with `grade_id`'s entry at the end of HAND, or a refusal
    when the table has one already."""
    table = table_of(ast.parse(text))
    named = [ast.literal_eval(key) for key in table.keys if key is not None]
    if grade_id in named:
        raise ValueError(f"HAND in {TABLE} has {grade_id} already")
    lines = text.splitlines(keepends=True)
    closing = table.end_lineno - 1  # the line of the table's closing brace
    if lines[closing].strip() != "}":
        raise ValueError(f"HAND in {TABLE} does not end with a line of its own: '}}'")
    last = table.values[-1] if table.values else None
    if last is not None:
        line = lines[last.end_lineno - 1].encode()  # ast's columns count bytes
        before, after = line[: last.end_col_offset], line[last.end_col_offset :]
        if not after.lstrip().startswith(b","):  # the last entry needs its comma
            lines[last.end_lineno - 1] = (before + b"," + after).decode()
    lines.insert(closing, entry_text(grade_id, answers))
    return "".join(lines)
