"""Where a notebook keeps its self-checks' stamps: named in each test cell, held in the setup cell.

A test cell's `selfcheck.verify(..., stamp="06_traffic/ex6_2_tests#0")` names its stamp;
the notebook's setup cell, the one that imports the self-checks, loads every stamp of the
notebook on one line (`selfcheck.load_stamps('{...}')`). The build (`kvlesson.authoring.stamping`)
writes both. So a test cell stays short and readable, also where nbgrader's Validate shows
a failed cell's source, and the salted hashes sit in one place.
"""

from __future__ import annotations

import ast
import json

import nbformat


def stamp_calls(source: str) -> list[ast.Call]:
    """The `selfcheck.verify(..., stamp=...)` calls of a test cell, in order: the only ones
    that carry hashes (a hidden test's `record` carries none)."""
    calls = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "verify"
        and any(k.arg == "stamp" for k in node.keywords)
    ]
    return sorted(calls, key=lambda node: (node.lineno, node.col_offset))


def with_stamps(source: str, stamps: list[str]) -> str:
    """`source` with the value of each `stamp=` argument replaced, in order."""
    calls = stamp_calls(source)
    if len(calls) != len(stamps):
        raise ValueError(f"{len(calls)} stamp= arguments for {len(stamps)} stamps in:\n{source}")
    starts = line_offsets(source)
    data = source.encode()
    for call, stamp in reversed(list(zip(calls, stamps))):
        value = next(k.value for k in call.keywords if k.arg == "stamp")
        begin = starts[value.lineno - 1] + value.col_offset
        end = starts[value.end_lineno - 1] + value.end_col_offset
        data = data[:begin] + repr(stamp).encode() + data[end:]
    return data.decode()


LOADER = "selfcheck.load_stamps("  # the setup cell's line that loads a notebook's stamps
IMPORT = (
    "from kvlesson.grading.checks import selfcheck"  # the setup cell's import of the self-checks
)


def stamp_key(where: str, number: int) -> str:
    """The name a verify call's `stamp=` gives its stamp: "06_traffic/ex6_2_tests#0"."""
    return f"{where}#{number}"


def put_stamps(nb: nbformat.NotebookNode, answers: dict[str, str]) -> None:
    """Put the notebook's stamps (salted hashes, never an answer) in its setup cell, on one
    line after the import of the self-checks, so that a test cell names its stamp and no
    more: nbgrader's Validate shows a failed test cell's source, which stays readable. The
    setup cell's code is folded in JupyterLab (`jupyter.source_hidden`); a click unfolds it."""
    blob = json.dumps(
        {key: json.loads(stamp) for key, stamp in answers.items()},
        separators=(",", ":"),
        sort_keys=True,
    )
    line = f"{LOADER}{blob!r})  # the self-checks' answers, salted and hashed"
    for cell in nb.cells:
        if cell.cell_type == "code" and IMPORT in cell.source.splitlines():
            lines = [x for x in cell.source.splitlines() if not x.startswith(LOADER)]
            at = lines.index(IMPORT) + 1
            cell.source = "\n".join(lines[:at] + [line] + lines[at:])
            # folded in JupyterLab: its line of stamps is kilobytes of hashes that a student
            # need not scroll past (walk item 24); its output, the setting, still shows
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
            return
    raise ValueError(f"no cell imports the self-checks ({IMPORT}): the stamps have no place")


def stamps_of(nb: nbformat.NotebookNode) -> dict[str, dict]:
    """The stamps a notebook's setup cell loads, by key (as read by `selfcheck.load_stamps`)."""
    for cell in nb.cells:
        for line in cell.source.splitlines() if cell.cell_type == "code" else []:
            if line.startswith(LOADER):
                call = ast.parse(line).body[0].value
                return json.loads(ast.literal_eval(call.args[0]))
    return {}


def stamp_names(source: str) -> list[str]:
    """The `stamp=` keys of a test cell's verify calls, in order."""
    return [
        ast.literal_eval(next(k.value for k in call.keywords if k.arg == "stamp"))
        for call in stamp_calls(source)
    ]


def line_offsets(source: str) -> list[int]:
    """The byte offset at which each line of `source` starts (ast's columns are bytes)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode()))
    return starts
