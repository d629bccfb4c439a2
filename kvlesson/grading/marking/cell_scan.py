"""Reading a student's cells as code, never running them: what a cell tampers with.

The grade reads every cell a student could edit or add (answer cells, cells they added,
the course's cells they changed, the set-up cell included), with IPython's own reading of
`%` magics and `!` shell lines. A finding is one of two kinds: `TAMPERING`, which costs the
whole notebook (writing to the course's modules, the kernel's machinery, a shell line or
a magic that runs other code), and `LOOK`, which asks the instructor to look (reflection,
`open`, a string that names a forbidden function). A cell that names a forbidden function,
or uses a package function that calls one, is `kvlesson.grading.checks.forbidden.used_in`'s
business.
"""

from __future__ import annotations

import ast
import importlib
import types
from dataclasses import dataclass

from kvlesson.grading.course.notebooks import parsed, python_of
from kvlesson.grading.course.results import LOOK, TAMPERING

# Imports that reach the kernel's machinery: a cell that needs one is tampering.
MACHINERY = {
    "builtins",
    "ctypes",
    "gc",
    "inspect",
    "importlib",
    "IPython",
    "ipykernel",
    "profile",
    "cProfile",
    "trace",
    "bdb",
    "pdb",
    "sys",
    "types",
    "_posixsubprocess",
    "kvlesson.grading",
}
# Imports an answer never needs: the instructor should look.
UNUSUAL = {
    "os",
    "subprocess",
    "signal",
    "threading",
    "multiprocessing",
    "hashlib",
    "socket",
    "shutil",
    "pathlib",
    "pickle",
    "marshal",
    "operator",
}
MACHINERY_NAMES = {
    "get_ipython",
    "input_transformers",
    "input_transformers_post",
    "__builtins__",
    "setprofile",
    "settrace",
    "__code__",
    "__globals__",
    "f_globals",
    "f_locals",
    "f_back",
    "gi_frame",
    "tb_frame",
}
REFLECTION = {
    "setattr",
    "getattr",
    "delattr",
    "vars",
    "globals",
    "locals",
    "eval",
    "exec",
    "compile",
    "__import__",
    "open",
    "breakpoint",
    "attrgetter",
    "methodcaller",
}
HARMLESS_MAGICS = {"matplotlib", "time", "timeit"}  # `%matplotlib inline`, timing
HARMLESS_IMPORTS = {"IPython.display"}  # display(HTML(...)): what it shows is cleaned


@dataclass(frozen=True)
class Finding:
    """One thing a cell's code does that an answer never needs, and what it costs."""

    kind: str  # TAMPERING or LOOK
    what: str


def _magic(node: ast.Call) -> tuple[str, str] | None:
    """For `get_ipython().run_line_magic("name", ...)` and its kin: (the method, the magic)."""
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
    ):
        return None
    name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
    return func.attr, str(name)


def _root_name(node: ast.AST) -> str | None:
    """`a` for `a.b.c`: the name an attribute chain starts from."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return []


def _in(module: str, names: set[str]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


def scan(
    source: str, course_names: set[str], course_modules: set[str] = frozenset()
) -> list[Finding]:
    """What a cell's code does that an answer never needs. `course_names` are the names the
    course's own cells bind (kv, selfcheck, charts, gpu, ...): a cell may use them, never
    rebind them or write to their attributes; it may import again what they import
    (`course_modules`)."""
    try:
        tree = ast.parse(python_of(source))
    except SyntaxError as error:
        return [Finding(LOOK, f"does not parse ({error.msg}, line {error.lineno})")]
    found: set[Finding] = set()
    explained: set[int] = set()  # get_ipython() calls of a magic, said as the magic
    own = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (magic := _magic(node)) is not None:
            method, name = magic
            explained.add(id(node.func.value.func))
            if method in ("run_line_magic", "run_cell_magic") and name in HARMLESS_MAGICS:
                continue
            if method in ("system", "getoutput"):
                found.add(Finding(TAMPERING, "runs a shell command (a `!` line)"))
            else:
                found.add(Finding(TAMPERING, f"runs the magic %{name}"))
    for node in ast.walk(tree):
        for module in imported(node):
            if module in course_modules or module in HARMLESS_IMPORTS:
                continue
            if _in(module, MACHINERY):
                found.add(Finding(TAMPERING, f"imports {module}"))
            elif _in(module, UNUSUAL):
                found.add(Finding(LOOK, f"imports {module}"))
        word = (
            node.id
            if isinstance(node, ast.Name)
            else node.attr
            if isinstance(node, ast.Attribute)
            else None
        )
        if word is not None and id(node) not in explained:
            if word in MACHINERY_NAMES:
                found.add(Finding(TAMPERING, f"uses {word}"))
            elif word in REFLECTION:
                found.add(Finding(LOOK, f"uses {word}"))
            elif word.startswith("__") and word.endswith("__"):
                found.add(Finding(LOOK, f"uses {word}"))
        if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            root = _root_name(node.value) if isinstance(node, ast.Attribute) else None
            if root in course_names | own | {"kvlesson"} and isinstance(node, ast.Attribute):
                found.add(Finding(TAMPERING, f"writes to an attribute of {root}"))
            if isinstance(node, ast.Name) and node.id in course_names:
                found.add(Finding(TAMPERING, f"rebinds {node.id}, which the course's cells use"))
    return sorted(found, key=lambda f: (f.kind, f.what))


def names_of(source: str) -> dict[str, object]:
    """The course's names a cell's imports bind: `import kvlesson as kv`, `from
    kvlesson.memory.floor import memory_parts as mp`, resolved in the grader's own process
    (only kvlesson's modules are imported, never a student's)."""
    tree = parsed(source)
    if tree is None:
        return {}
    names: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kvlesson":
                    module = _module(alias.name if alias.asname else "kvlesson")
                    if module is not None:
                        names[alias.asname or "kvlesson"] = module
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kvlesson":
            module = _module(node.module)
            for alias in node.names:
                value = getattr(module, alias.name, None) if module is not None else None
                value = value if value is not None else _module(f"{node.module}.{alias.name}")
                if value is not None:
                    names[alias.asname or alias.name] = value
    return names


def _module(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def strings_naming(source: str, forbidden: set[str]) -> list[str]:
    """The strings in a cell that could name a forbidden function for getattr or an import:
    a name or a dotted path with one of them as a part ("kv.memory_parts"), not prose."""
    tree = parsed(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = node.value.strip().split(".")
            if all(word.isidentifier() for word in words) and not forbidden.isdisjoint(words):
                found.append(node.value[:40])
    return found
