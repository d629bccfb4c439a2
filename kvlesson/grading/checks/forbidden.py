"""Forbidden functions: found by what runs, at any depth, whatever the name used.

An exercise may forbid package functions ("work out the pool without
`kv.memory_parts`"). A name is not enough to catch them: `kv.room` calls
`memory_parts` inside, `getattr(kv, "memory" + "_parts")` builds the name at run time.
So a forbidden function is known by its code object: `resolve` finds the code of every
kvlesson function or method of that name, and `watching` notes each of them that starts
to run while a probe runs, at any depth. `reaching` reads code without running it: the
forbidden functions a cell's names lead to, through the package's own calls.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import os
import pkgutil
import sys
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

PACKAGE = "kvlesson"


WINGS = ("memory", "serving", "lesson")  # where an exercise's forbidden functions live


@functools.lru_cache(maxsize=1)
def _load_all() -> tuple[types.ModuleType, ...]:
    """Every module of the model and the lesson, imported (a module not imported has no
    code to find)."""
    modules = []
    for wing in WINGS:
        package = importlib.import_module(f"{PACKAGE}.{wing}")
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            try:
                modules.append(importlib.import_module(info.name))
            except ImportError:  # an optional extra (ipywidgets) is missing: nothing to forbid
                continue
    return tuple(modules)


def _functions_of(module: types.ModuleType) -> Iterator[types.FunctionType]:
    """The plain functions a module defines, and the methods and properties of its classes."""
    for value in vars(module).values():
        value = getattr(value, "__wrapped__", value)  # the function inside an lru_cache
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            yield value
        elif isinstance(value, type) and value.__module__ == module.__name__:
            for member in vars(value).values():
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                elif isinstance(member, property):
                    member = member.fget
                elif isinstance(member, functools.cached_property):
                    member = member.func
                if isinstance(member, types.FunctionType):
                    yield member


@functools.lru_cache(maxsize=1)
def catalogue() -> dict[types.CodeType, str]:
    """Every function of the package by its code object: its qualified name."""
    return {
        f.__code__: f"{f.__module__}.{f.__qualname__}"
        for module in _load_all()
        for f in _functions_of(module)
    }


@functools.lru_cache(maxsize=1)
def _definers() -> dict[str, frozenset[str]]:
    """Which modules of the model and the lesson define a function or method of each name,
    read from their source without importing them."""
    home = str(Path(__file__).resolve().parents[2])  # kvlesson/: this file is two below it
    found: dict[str, set[str]] = {}
    for wing in WINGS:
        for path in sorted(Path(home, wing).rglob("*.py")):
            module = ".".join((PACKAGE, *path.relative_to(home).with_suffix("").parts))
            module = module.removesuffix(".__init__")
            tree = ast.parse(path.read_text())
            for node in tree.body:
                members = node.body if isinstance(node, ast.ClassDef) else [node]
                for member in members:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        found.setdefault(member.name, set()).add(module)
    return {name: frozenset(modules) for name, modules in found.items()}


def resolve(names: Iterable[str]) -> dict[types.CodeType, str]:
    """The code objects of the package's functions called one of `names` (the last part of
    the qualified name: "memory_parts", "concurrency_at"), with their qualified names. Only
    the modules that define them are imported."""
    wanted = set(names)
    found = {}
    for module in sorted({m for name in wanted for m in _definers().get(name, ())}):
        try:
            loaded = importlib.import_module(module)
        except ImportError:  # an optional extra (ipywidgets) is missing: nothing to forbid there
            continue
        found.update(
            {
                f.__code__: f"{f.__module__}.{f.__qualname__}"
                for f in _functions_of(loaded)
                if f.__name__ in wanted
            }
        )
    return found


def trusted_roots() -> tuple[str, ...]:
    """Where the course's own code and Python's live: the library, the installed packages
    and kvlesson. Code anywhere else was written in a notebook (or by a student)."""
    import kvlesson

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(kvlesson.__file__)}
    return tuple(os.path.realpath(root) + os.sep for root in roots)


@contextmanager
def watching(codes: dict[types.CodeType, str], seen: list[str], test_file: str = ""):
    """Within the block, note in `seen` the qualified name of each function of `codes` that
    starts to run, at any depth, in this thread, when code a student wrote is among its
    callers (not only the test in `test_file` and the course's package: a test may call the
    package's own judge, which uses what the student may not). A trace function sees every
    call of a Python function; one already set (the grading box's ledger) keeps running:
    this one hands every call on to it."""
    previous, roots = sys.gettrace(), trusted_roots()

    def by_a_student(frame) -> bool:
        caller = frame.f_back
        while caller is not None:
            name = caller.f_code.co_filename
            if name == test_file:
                return False
            if not name.startswith(roots) and not name.startswith("<frozen "):
                return True
            caller = caller.f_back
        return False

    def trace(frame, event, arg):
        name = codes.get(frame.f_code)
        if name is not None and name not in seen and by_a_student(frame):
            seen.append(name)
        return previous(frame, event, arg) if previous is not None else None

    sys.settrace(trace)
    try:
        yield seen
    finally:
        sys.settrace(previous)


CONSTRUCTORS = ("__new__", "__init__", "__post_init__")  # what making an instance runs


@functools.lru_cache(maxsize=1)
def _calls() -> dict[types.CodeType, set[types.CodeType]]:
    """For each function of the package, the package functions its code calls by name: a
    function it looks up as a global, the constructors of a class it looks up, and a
    function of a package module it looks up (`quote.gb`). A method called on an instance
    (`self.parts.tokens`) is not followed: what is read here must never blame an honest
    answer; running code is watched at any depth by `watching`. Nested functions and
    lambdas count as their parent's code."""
    functions = {f.__code__: f for module in _load_all() for f in _functions_of(module)}
    graph = {}
    for code, function in functions.items():
        names = {name for inner in _nested(code) for name in inner.co_names}
        graph[code] = {
            c for word in names for c in _called(function.__globals__.get(word), names, functions)
        }
    return graph


def _called(value: object, names: set[str], functions: dict) -> Iterator[types.CodeType]:
    """The package functions that using `value` by name (with the attribute `names` of the
    same code) calls."""
    value = getattr(value, "__wrapped__", value)  # the function inside an lru_cache
    if isinstance(value, types.FunctionType) and value.__code__ in functions:
        yield value.__code__
    elif isinstance(value, type) and value.__module__.startswith(PACKAGE):
        yield from (f.__code__ for f in _members(value) if f.__name__ in CONSTRUCTORS)
    elif isinstance(value, types.ModuleType) and value.__name__.startswith(PACKAGE):
        for word in names:
            member = package_member(value, word)
            if isinstance(member, types.FunctionType) and member.__code__ in functions:
                yield member.__code__


def package_member(module: types.ModuleType, name: str) -> object:
    """A member of one of the package's modules, None if it has none: also a name the
    package's surface loads on first use (`kv.startup`; kvlesson's `__getattr__` imports
    only the package's own modules, never a student's code)."""
    return getattr(module, name, None)


def _members(cls: type) -> Iterator[types.FunctionType]:
    module = sys.modules[cls.__module__]
    yield from (
        f for f in _functions_of(module) if f.__qualname__.startswith(cls.__qualname__ + ".")
    )


def _nested(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


@functools.lru_cache(maxsize=4096)
def reachable(code: types.CodeType) -> frozenset[types.CodeType]:
    """The package functions a function's code can run, itself included (read, not run)."""
    graph, seen, todo = _calls(), {code}, [code]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


def reaching(obj: object, codes: dict[types.CodeType, str]) -> list[str]:
    """The forbidden functions (of `codes`) that calling `obj`, a package function, class or
    bound method, can run; [] for anything else."""
    if inspect.ismethod(obj):
        obj = obj.__func__
    if isinstance(obj, type) and obj.__module__.startswith(PACKAGE):
        starts = [f.__code__ for f in _members(obj) if f.__name__ in CONSTRUCTORS]
    elif isinstance(obj, types.FunctionType) and obj.__code__ in catalogue():
        starts = [obj.__code__]
    else:
        return []
    found = {codes[c] for start in starts for c in reachable(start) if c in codes}
    return sorted(found)


def dotted_names(source: str) -> list[str]:
    """The names and attribute chains a cell's code reads ("kv.room", "mp", "parts.tokens"):
    what the cell could call. A cell that does not parse reads nothing here."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            parts, inner = [], node
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name):
                found.add(".".join([inner.id, *reversed(parts)]))
    return sorted(found)


def used_in(source: str, namespace: dict, codes: dict[types.CodeType, str]) -> list[str]:
    """Which forbidden functions (of `codes`) a cell's code leads to, read in the namespace
    the cell ran in: each name or attribute chain it reads is looked up, and a package
    function or class it finds is followed through the package's own calls."""
    found = set()
    for dotted in dotted_names(source):
        head, *rest = dotted.split(".")
        if head not in namespace:
            continue
        value = namespace[head]
        for attr in rest:
            if isinstance(value, types.ModuleType) and value.__name__.startswith(PACKAGE):
                value = package_member(value, attr)
                if value is None:
                    break
                continue
            try:
                value = inspect.getattr_static(value, attr)
            except AttributeError:
                break
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
        found.update(reaching(value, codes))
    return sorted(found)
