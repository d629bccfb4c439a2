"""Which of the student's cells can reach an answer: read as code, never run.

An answer is whatever produced it, not only the cell that names it. The code that works out
an exercise's answer is its answer cell, every cell of the student's above the test that can
change a name the test or that code reads, and so on back, where a cell can change a name by:

* binding it at its top level (`x = ...`, `def x`, `import x`): the search for that name
  stops there, as the grade runs the notebook top to bottom;
* changing it in place or from inside a function (`x[k] = ...`, `x.a = ...`, `x += ...`,
  `x.update(...)`, `fill(x)`, `global x` in a function): such a cell is followed, and so
  are the cells before it back to the one that bound the name;
* calling a function of the student's that changes it (the cell that defines the function
  counts for what its body changes, the cells that call it too);
* ending with an expression, which IPython keeps in `_`, `__`, `___`, `Out` and `_N`: a
  cell that reads those is fed by every such cell of the student's above it (`In`, `_i`,
  `_ih`: by every cell of the student's above it);
* writing names it does not spell out (`globals()`, `vars()`, `exec`, `setattr`, a star
  import): such a cell can change any name.

A course's own cell is not followed (it is the course's, and its names are the course's),
but a course cell that binds a name ends the search for it.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from kvlesson.grading.course.notebooks import parsed

HISTORY_OUT = re.compile(r"_{1,3}|Out|_oh|_\d+")  # IPython's output history
HISTORY_IN = re.compile(r"In|_ih|_i{1,3}|_i\d+")  # IPython's input history
ANY_NAME = {
    "globals",
    "vars",
    "locals",
    "exec",
    "eval",
    "setattr",
    "delattr",
    "__dict__",
    "__builtins__",
    "compile",
    "__import__",
}
# Functions that change none of their arguments: a value passed to them is only read.
PURE = frozenset(
    {
        "print",
        "len",
        "sorted",
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "str",
        "repr",
        "int",
        "float",
        "bool",
        "round",
        "min",
        "max",
        "sum",
        "abs",
        "type",
        "isinstance",
        "range",
        "enumerate",
        "zip",
        "display",
        "format",
        "divmod",
        "pow",
        "any",
        "all",
        "map",
        "filter",
        "reversed",
        "hash",
        "id",
    }
)


@dataclass(frozen=True)
class Effects:
    """What one cell's code reads and can change (see the module's rules)."""

    binds: frozenset[str] = frozenset()  # bound at the top level: a search stops here
    changes: frozenset[str] = frozenset()  # changed in place, or from a function's body
    reads: frozenset[str] = frozenset()  # read anywhere in the cell, functions included
    calls: frozenset[str] = frozenset()  # names the cell calls
    defines: frozenset[str] = frozenset()  # functions it defines at its top level
    any_name: bool = False  # it writes names it does not spell out
    shows: bool = False  # it ends with an expression (IPython's `_`, `Out`)


def _root(node: ast.AST) -> str | None:
    """`a` for `a.b[c].d`: the name a chain of attributes and subscripts starts from."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _top_level_binds(tree: ast.Module) -> set[str]:
    names = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in statement.names)
        elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in _outside_functions(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


def _outside_functions(node: ast.AST):
    """The nodes of `node`, not descending into function or class bodies."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _outside_functions(child)


@functools.lru_cache(maxsize=4096)  # a class's cells are mostly the course's, read over and over
def effects(source: str, course: frozenset[str] = frozenset()) -> Effects:
    """What a cell's code reads and can change; a cell that does not parse can change any
    name (the kernel ran what it could of it). The names of `course` (what the course's
    cells bind: `kv`, `gpu`, ...) and the functions of PURE change nothing passed to them,
    and a method of a course name changes nothing of the student's."""
    pure = PURE | course
    tree = parsed(source)
    if tree is None:
        return Effects(any_name=True)
    changes, reads, calls, any_name = set(), set(), set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.add(node.id)
            any_name |= node.id in ANY_NAME
        elif isinstance(node, ast.Attribute):
            any_name |= node.attr in ANY_NAME
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(
            node.ctx, (ast.Store, ast.Del)
        ):
            changes.add(_root(node))
        elif isinstance(node, ast.AugAssign):
            changes.add(_root(node.target))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            changes.update(node.names)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            any_name = True
        elif isinstance(node, ast.Call):
            callee = _root(node.func)
            if isinstance(node.func, ast.Name):
                calls.add(node.func.id)
            elif isinstance(node.func, ast.Attribute) and callee not in pure:
                changes.add(callee)  # x.update(...): x may change
            if callee not in pure:  # fill(x): x may change
                changes.update(_root(a) for a in [*node.args, *(k.value for k in node.keywords)])
    last = tree.body[-1] if tree.body else None
    defines = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return Effects(
        frozenset(_top_level_binds(tree)),
        frozenset(changes - {None}),
        frozenset(reads),
        frozenset(calls),
        frozenset(defines),
        any_name,
        isinstance(last, ast.Expr),
    )


def feeding_cells(
    sources: dict[int, str], theirs: set[int], start: int, course: frozenset[str] = frozenset()
) -> set[int]:
    """The cells of the student's (`theirs`, indices into `sources`, every code cell's
    source) that can reach what cell `start` reads, by the module's rules (`course`: the
    names the course's cells bind); `start` itself is among them only if it is the
    student's."""
    flows = {index: effects(source, course) for index, source in sources.items()}
    found, todo = set(), [start]
    while todo:
        index = todo.pop()
        for cell in _feeding(flows, theirs, index):
            if cell not in found:
                found.add(cell)
                todo.append(cell)
    return found | ({start} & theirs)


def _feeding(flows: dict[int, Effects], theirs: set[int], index: int) -> set[int]:
    """The student's cells above cell `index` that can change what it reads."""
    mine = flows[index]
    above = sorted((i for i in flows if i < index), reverse=True)
    fed = set()
    if any(HISTORY_IN.fullmatch(name) for name in mine.reads):
        fed |= {i for i in above if i in theirs}
    if any(HISTORY_OUT.fullmatch(name) for name in mine.reads):
        fed |= {i for i in above if i in theirs and flows[i].shows}
    for name in mine.reads:
        for i in above:
            cell = flows[i]
            if i in theirs and (
                cell.any_name
                or name in cell.binds
                or name in cell.changes
                or _calls_a_change(flows, theirs, i, name)
            ):
                fed.add(i)
            if name in cell.binds and not cell.any_name:
                break  # bound here: what came before it is gone
    return fed


def _calls_a_change(flows: dict[int, Effects], theirs: set[int], index: int, name: str) -> bool:
    """Whether cell `index` calls a function of the student's, defined above it, whose cell
    can change `name`."""
    return any(
        called in flows[i].defines and name in flows[i].changes
        for called in flows[index].calls
        for i in flows
        if i < index and i in theirs
    )
