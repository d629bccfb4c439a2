"""Mistakes about a function's arguments, as mutations of the instructor's solution.

A student's function can work out the right formula on the wrong inputs: it reads the
notebook's global instead of its argument (`model` for `m`, `SHARE` for `share`), writes in
a value the self-check happens to pass it, or takes two arguments in the wrong order.
`kvlesson.authoring.mutants` adds these to its one-spot mistakes.
"""

from __future__ import annotations

import ast
import copy
from typing import Iterator

from kvlesson.grading.course.known_mistakes import MISTAKES


def global_mutants(
    tree: ast.Module, like: dict[str, dict[int, list[str]]]
) -> Iterator[tuple[str, str, ast.Module]]:
    """Each function argument ignored: the body reads the notebook's global of the same
    name (the parameter renamed away), its upper-case parameter (share -> SHARE), or a
    notebook variable that holds the same kind of thing (`like`: per function and argument
    position, such names: `model` for an argument `m`)."""
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        for position, arg in enumerate(function.args.args):
            same_kind = like.get(function.name, {}).get(position, [])
            for reads in dict.fromkeys((arg.arg, arg.arg.upper(), *same_kind)):
                mutated = copy.deepcopy(tree)
                target = next(
                    n
                    for n in ast.walk(mutated)
                    if isinstance(n, ast.FunctionDef) and n.name == function.name
                )
                target.args.args[position].arg = f"_{arg.arg}_ignored"
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id == arg.arg:
                        name.id = reads
                yield (
                    "global",
                    f"{function.name} should use its argument `{arg.arg}`, not "
                    f"the notebook's `{reads}`.",
                    mutated,
                )


def _renamed(tree: ast.Module, function: str, names: dict[str, ast.AST]) -> ast.Module:
    """`tree` with, in `function`'s body, each name of `names` read as its replacement."""
    mutated = copy.deepcopy(tree)
    target = next(
        n for n in ast.walk(mutated) if isinstance(n, ast.FunctionDef) and n.name == function
    )

    class Swap(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            new = names.get(node.id)
            return (
                copy.deepcopy(new) if new is not None and isinstance(node.ctx, ast.Load) else node
            )

    target.body = [Swap().visit(statement) for statement in target.body]
    return mutated


def argument_mutants(
    tree: ast.Module, examples: dict[str, list[str]]
) -> Iterator[tuple[str, str, ast.Module]]:
    """Two arguments taken in the wrong order; an argument replaced by a value written in
    the notebook's examples of the call (`examples`: parameter name to the texts the
    self-check passes it) or by its default."""
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        params = [a.arg for a in function.args.args]
        for i, first in enumerate(params):
            for second in params[i + 1 :]:
                yield (
                    "swapped",
                    MISTAKES["swapped"],
                    _renamed(
                        tree,
                        function.name,
                        {first: ast.Name(second, ast.Load()), second: ast.Name(first, ast.Load())},
                    ),
                )
        defaults = dict(
            zip(params[len(params) - len(function.args.defaults) :], function.args.defaults)
        )
        for name in params:
            texts = list(dict.fromkeys(examples.get(name, [])))
            values = [  # each named as the self-check's call writes it (-1e9, not -1000000000.0)
                (ast.parse(t, mode="eval").body, t, "one value the self-check passes it")
                for t in texts
            ]
            if name in defaults:
                values.append((defaults[name], ast.unparse(defaults[name]), "its default"))
            for value, written, where in values:
                yield (
                    "hardcoded",
                    (
                        f"{function.name} should use its argument `{name}`, not `{written}`, "
                        f"{where}: it must work for any `{name}`."
                    ),
                    _renamed(tree, function.name, {name: value}),
                )
