"""A copy of kvlesson without an exercise's forbidden functions, for a second run.

A watch inside the student's process can be switched off by that process. So the grade
does not only watch: a submission whose answers forbid functions is run a second time, in
a fresh box whose kvlesson lacks them (`Walls.replaced`: this copy takes the place of every
kvlesson on the import path, and the box shows nothing else of the machine where another
copy could be read). In the copy, each forbidden function (every function or method of the
model and the lesson of that name, as `kvlesson.grading.checks.forbidden.resolve` finds
them) keeps its name and its signature, and raises `WITHHELD` when called: whatever the
student's code does, in a thread, through a pipe or its own kernel channel, there is no
code left in that process that computes it. The course's own constants that the package
computes with it when it is imported (the models, made from their configs) are carried in
as data, read from the package as the grader imported it; the course's own cells that call
it fail, and what they would have computed is missing in that run as well.

Each copy is made once per set of names, into a folder the caller keeps (the grading run's),
compiled, so the kernel imports it as fast as the original.
"""

from __future__ import annotations

import ast
import compileall
import fcntl
import hashlib
import importlib
import os
import pickle
import shutil
from collections.abc import Iterable
from pathlib import Path

import kvlesson
from kvlesson.grading.checks import forbidden
from kvlesson.grading.checks.forbidden import WINGS

PACKAGE = Path(kvlesson.__file__).resolve().parent
WITHHELD = "withheld by the grader"  # the start of what a withheld function raises


def _stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Replace a function's body by a raise that says it is withheld."""
    message = (
        f"{function.name} is {WITHHELD} in this run: the answer is worked out "
        "again without the functions its exercise forbids"
    )
    function.body = [
        ast.Raise(
            exc=ast.Call(
                func=ast.Name("RuntimeError", ast.Load()), args=[ast.Constant(message)], keywords=[]
            )
        )
    ]


def as_data(value: object, namespace: dict) -> ast.expr:
    """An expression that gives `value` again in a module whose names are `namespace`: its
    repr when that reads back equal (a model's dataclass, numbers, strings), else its
    pickle."""
    text = repr(value)
    try:
        if eval(text, dict(namespace)) == value:  # noqa: S307 - the course's own values
            return ast.parse(text, mode="eval").body
    except Exception:
        pass
    data = pickle.dumps(value)
    return ast.parse(f"__import__('pickle').loads({data!r})", mode="eval").body


def carry(tree: ast.Module, module: str, names: frozenset[str]) -> bool:
    """Replace, in a module's syntax tree, each value its top level assigns by calling one
    of `names` (at any depth of the package's own calls: `Model.from_hf_config(...)`) with
    that value as data, read from the module as the grader imported it: the course's own
    constants stay what they are without the code that made them. Whether any was."""
    loaded = importlib.import_module(module)
    codes = forbidden.resolve(names)
    changed = False
    for statement in tree.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if not all(isinstance(t, ast.Name) for t in targets) or not forbidden.used_in(
            ast.unparse(statement.value), vars(loaded), codes
        ):
            continue
        statement.value = as_data(getattr(loaded, targets[0].id), vars(loaded))
        changed = True
    return changed


def withhold(source: str, names: frozenset[str], module: str | None = None) -> str | None:
    """A module's source with every function and method called one of `names` stubbed
    (`_stub`) and, for `module` (its dotted name), every value its top level computes with
    them carried in as data (`carry`); None when nothing changed."""
    tree = ast.parse(source)
    found = carry(tree, module, names) if module else False
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name in names:
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
    folder of its own per set of names; made once when several workers ask at once)."""
    wanted = frozenset(names)
    target = Path(cache) / f"kvlesson-{digest(wanted)}"
    if target.is_dir():
        return target
    Path(cache).mkdir(parents=True, exist_ok=True)
    # the run's workers all need it at their first submission: one makes it, the others wait
    # for it (seconds each: making it imports the whole model) rather than make it again
    with open(Path(cache) / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_dir():
            _make(wanted, target)
    return target


def _make(wanted: frozenset[str], target: Path) -> None:
    """Write the copy of kvlesson without `wanted` at `target`, whole or not at all."""
    building = target.parent / f".{target.name}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    shutil.copytree(PACKAGE, building, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for wing in WINGS:
        for path in sorted((building / wing).rglob("*.py")):
            module = ".".join(("kvlesson", *path.relative_to(building).with_suffix("").parts))
            changed = withhold(path.read_text(), wanted, module.removesuffix(".__init__"))
            if changed is not None:
                path.write_text(changed)
    compileall.compile_dir(building, quiet=2, workers=1)
    try:
        building.rename(target)
    except OSError:  # made meanwhile by a process that took no lock
        shutil.rmtree(building, ignore_errors=True)
