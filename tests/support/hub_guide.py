"""docs/jupyterhub.md, section 4, read as tests/system/test_hub.py's script.

The guide marks each command block the test runs with an HTML comment, `<!-- hub-test:
NAME -->`, right before a ```bash fence, and its table of who may do what with
`<!-- hub-test: who-may-do-what -->`. This module reads them, and puts the test's own
account names, the course's source and the hub's address in place of the guide's
(`teacher`, `alice`, `bob`, `carol`, `https://github.com/OWNER/REPO.git`, `https://HUB`,
the certificate's files),
failing loudly when the guide no longer holds what it replaces: a guide the test cannot
follow is a failing test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from support.paths import ROOT

GUIDE = ROOT / "docs" / "jupyterhub.md"
BLOCK = re.compile(r"<!-- hub-test: ([\w-]+) -->\n```bash\n(.*?)```", re.S)
TABLE = re.compile(r"<!-- hub-test: who-may-do-what -->\n((?:\|.*\n)+)")
OPERATIONS = ("read", "write", "create", "rename")
ON_FILES, ON_FOLDERS = {"read", "write"}, {"read", "create", "rename"}
GUIDE_INSTRUCTOR, GUIDE_STUDENTS = "teacher", ("alice", "bob", "carol")
GUIDE_OUTSIDER = "mallory"  # the table's account outside the course
REPOSITORY = "https://github.com/OWNER/REPO.git"
ADDRESS = "https://HUB"  # the hub's public address in the start block
CHAIN = "/etc/letsencrypt/live/HUB/fullchain.pem"  # the certificate block's files
KEY = "/etc/letsencrypt/live/HUB/privkey.pem"


def blocks() -> dict[str, str]:
    """The guide's command blocks the test runs, by name, in the guide's order."""
    found = BLOCK.findall(GUIDE.read_text())
    names = [name for name, _ in found]
    assert len(set(names)) == len(names), f"a hub-test block name is used twice: {names}"
    return dict(found)


def commands(block: str) -> list[str]:
    """A block's commands, one per line, without blank lines."""
    return [line for line in block.splitlines() if line.strip()]


def replaced(text: str, old: str, new: str, count: int = 1) -> str:
    """`text` with `old` replaced by `new`, which must occur exactly `count` times."""
    assert text.count(old) == count, (
        f"the guide's block should hold {old!r} {count} time(s):\n{text}"
    )
    return text.replace(old, new)


def with_accounts(block: str, instructor: str, students: list[str]) -> str:
    """The accounts block with the test's names in the guide's two assignments."""
    block = re.sub(r"^INSTRUCTOR=.*$", f"INSTRUCTOR={instructor}", block, count=1, flags=re.M)
    block = re.sub(r"^STUDENTS=.*$", f'STUDENTS="{" ".join(students)}"', block, count=1, flags=re.M)
    assert f"INSTRUCTOR={instructor}\n" in block and f'STUDENTS="{" ".join(students)}"' in block, (
        "the accounts block no longer sets INSTRUCTOR= and STUDENTS= on lines of their "
        f"own:\n{block}"
    )
    return block


@dataclass(frozen=True)
class Line:
    """One line of the table: a place (as the guide writes it) and, for each of the guide's
    accounts, the operations it may do there."""

    place: str
    allowed: dict[str, frozenset[str]]


def table() -> list[Line]:
    """The table of who may do what, line by line."""
    match = TABLE.search(GUIDE.read_text())
    assert match, "docs/jupyterhub.md has no table marked hub-test: who-may-do-what"
    rows = [
        [cell.strip() for cell in row.strip().strip("|").split("|")]
        for row in match[1].strip().splitlines()
    ]
    header, rows = rows[0], rows[2:]
    accounts = [re.search(r"`(\w+)`", cell)[1] for cell in header[1:]]
    assert accounts == [GUIDE_INSTRUCTOR, *GUIDE_STUDENTS[:2], GUIDE_OUTSIDER], header
    lines = []
    for row in rows:
        place = re.match(r"`([^`]+)`", row[0])
        assert place, f"a place of the table is not a path in backquotes: {row[0]}"
        allowed = {
            account: frozenset(op for op in OPERATIONS if re.search(rf"\b{op}\b", cell))
            for account, cell in zip(accounts, row[1:])
        }
        lines.append(Line(place[1], allowed))
    return lines
