"""A copy of kvlesson without an exercise's forbidden functions, for a second run.

A watch inside the student's process can be switched off by that process. So the grade
does not only watch: a submission whose answers forbid functions is run a second time, in
a fresh box whose kvlesson lacks them (`Walls.replaced`: this copy takes the place of every
kvlesson on the import path, and the box shows nothing else of the machine where another
copy could be read). In the copy, each forbidden function (every function or method of the
model and the lesson of that name, as `kvlesson.grading.checks.forbidden.resolve` finds
them) keeps its name and its signature, and raises `WITHHELD` when called: whatever the
student's code does, in a thread, through a pipe or its own kernel channel, there is no
code left in that process that computes it. The course's own cells that need it fail too,
and what they would have computed is missing in that run as well.

Each copy is made once per set of names, into a folder the caller keeps (the grading run's),
compiled, so the kernel imports it as fast as the original.
"""

from __future__ import annotations

import ast
import compileall
import hashlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import kvlesson
from kvlesson.grading.checks.forbidden import WINGS

PACKAGE = Path(kvlesson.__file__).resolve().parent
WITHHELD = "withheld by the grader"  # the start of what a withheld function raises


def _stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Replace a function's body by a raise that says it is withheld."""
    message = (f"{function.name} is {WITHHELD} in this run: the answer is worked out "
               "again without the functions its exercise forbids")
    function.body = [ast.Raise(exc=ast.Call(func=ast.Name("RuntimeError", ast.Load()),
                                            args=[ast.Constant(message)], keywords=[]))]


def withhold(source: str, names: frozenset[str]) -> str | None:
    """A module's source with every function and method called one of `names` stubbed
    (`_stub`), or None when it defines none of them."""
    tree = ast.parse(source)
    found = False
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and member.name in names:
                _stub(member)
                found = True
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" if found else None


def digest(names: Iterable[str]) -> str:
    """A name for the copy without `names`: the names and the package's source."""
    h = hashlib.sha256("\n".join(sorted(set(names))).encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        h.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def package_without(names: Iterable[str], cache: Path) -> Path:
    """The copy of kvlesson that lacks `names`, made in `cache` if it is not there yet (a
    folder of its own per set of names; safe when two workers make it at once)."""
    wanted = frozenset(names)
    target = Path(cache) / f"kvlesson-{digest(wanted)}"
    if target.is_dir():
        return target
    Path(cache).mkdir(parents=True, exist_ok=True)
    building = Path(cache) / f".{target.name}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    shutil.copytree(PACKAGE, building, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for wing in WINGS:
        for path in sorted((building / wing).rglob("*.py")):
            changed = withhold(path.read_text(), wanted)
            if changed is not None:
                path.write_text(changed)
    compileall.compile_dir(building, quiet=2, workers=1)
    try:
        building.rename(target)
    except OSError:  # another worker made it first
        shutil.rmtree(building, ignore_errors=True)
    return target
