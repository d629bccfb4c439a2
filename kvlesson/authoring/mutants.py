"""The mistakes students make, as mutations of the instructor's solution.

Each mutation changes one spot of an answer cell's code the way a student
might get it wrong: off by one, rounding down where a partly filled block
counts whole, `/` for `//`, a factor 2 dropped (K and V), a term of the sum
dropped (the reserve), GB for GiB and back, the percent not divided by 100,
`>` for `>=`, a function reading the notebook's global instead of its argument,
a float for an int. The build runs them to give the self-checks hints for known
wrong answers; the tests run them to prove the self-checks reject what the
grade rejects.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable, Iterator

from kvlesson.grading.course.known_mistakes import MISTAKES, declared_code

GB, GIB = 1e9, 2**30  # bytes in a GB (the data sheet's reading) and in a GiB


@dataclass(frozen=True)
class Mutant:
    """One wrong version of an answer cell: its mistake's code, the hint, the code."""

    mistake: str
    hint: str
    source: str


Swap = tuple[str, str, ast.AST]  # (mistake, hint, replacement node)


def _const(node: ast.AST, *values: float) -> bool:
    return (
        isinstance(node, ast.Constant)
        and not isinstance(node.value, bool)
        and isinstance(node.value, (int, float))
        and node.value in values
    )


def _is_two_to_30(node: ast.AST) -> bool:
    return _const(node, GIB) or (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and _const(node.left, 2)
        and _const(node.right, 30)
    )


def _binop_swaps(node: ast.BinOp) -> Iterator[Swap]:
    if isinstance(node.op, ast.FloorDiv):
        yield "true_div", MISTAKES["true_div"], ast.BinOp(node.left, ast.Div(), node.right)
    if isinstance(node.op, ast.Mult):
        for keep, drop in ((node.left, node.right), (node.right, node.left)):
            if _const(drop, 2):
                yield "factor2", MISTAKES["factor2"], keep
    if isinstance(node.op, (ast.Sub, ast.Add)):
        yield "term", f"a term of the sum is missing: `{ast.unparse(node.right)}`.", node.left
    if isinstance(node.op, ast.Div) and _const(node.right, 100):
        yield "percent", MISTAKES["percent"], node.left
    if _is_two_to_30(node):
        yield "gb", MISTAKES["gb"], ast.Constant(GB)


def _math(name: str, arg: ast.AST) -> ast.Call:
    """math.NAME(arg), whether or not the answer imported math."""
    module = _call("__import__", ast.Constant("math"))
    return ast.Call(ast.Attribute(module, name, ast.Load()), [arg], [])


def _rounded(node: ast.AST) -> tuple[str, ast.AST] | None:
    """How `node` rounds, and what it rounds: ceil, floor (of a // b: a / b), round, int."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = ast.unparse(node.func).rsplit(".", 1)[-1]
        if name in ("ceil", "floor", "round", "int"):
            return name, node.args[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        return "floor", ast.BinOp(node.left, ast.Div(), node.right)
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.BinOp)
        and isinstance(node.operand.op, ast.FloorDiv)
        and isinstance(node.operand.left, ast.UnaryOp)
    ):
        return "ceil", ast.BinOp(node.operand.left.operand, ast.Div(), node.operand.right)
    return None


def _rounding_swaps(node: ast.AST) -> Iterator[Swap]:
    """Rounding up, down or to the nearest where the answer rounds another way."""
    found = _rounded(node)
    if found is None:
        return
    way, inner = found
    for other in ("ceil", "floor", "round"):
        if other != way and not (way == "int" and other == "floor"):
            new = _call("round", inner) if other == "round" else _math(other, inner)
            if (way, other) == ("ceil", "floor"):  # the mistake "ceil" names, in its words
                yield "ceil", MISTAKES["ceil"], new
            else:
                yield "rounding", MISTAKES["rounding"], new


KILO = {1024: 1000, 1000: 1024, 2**20: 10**6, 10**6: 2**20}  # binary and decimal prefixes


def _swaps(node: ast.AST) -> Iterator[Swap]:
    """The one-spot mistakes at `node`."""
    yield from _rounding_swaps(node)
    if _const(node, *KILO) or (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and _const(node.left, 2)
        and _const(node.right, 10, 20)
    ):
        value = 2**node.right.value if isinstance(node, ast.BinOp) else node.value
        yield "kilo", MISTAKES["kilo"], ast.Constant(type(value)(KILO[int(value)]))
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.BinOp)
        and isinstance(node.operand.op, ast.FloorDiv)
        and isinstance(node.operand.left, ast.UnaryOp)
    ):
        floor = ast.BinOp(node.operand.left.operand, ast.FloorDiv(), node.operand.right)
        yield "ceil", MISTAKES["ceil"], floor
    if isinstance(node, ast.BinOp):
        yield from _binop_swaps(node)
    if _const(node, GB):
        yield "gib", MISTAKES["gib"], ast.BinOp(ast.Constant(2), ast.Pow(), ast.Constant(30))
    if isinstance(node, ast.Constant) and type(node.value) is int and not _is_two_to_30(node):
        for step in (1, -1):
            words = (
                f"one of the numbers in your code looks one away from the right one (is it "
                f"`{node.value + step}`?)."
            )
            yield "constant", words, ast.Constant(node.value + step)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        flipped = {ast.GtE: ast.Gt, ast.Gt: ast.GtE, ast.LtE: ast.Lt, ast.Lt: ast.LtE}
        if type(node.ops[0]) in flipped:
            yield (
                "boundary",
                MISTAKES["boundary"],
                ast.Compare(node.left, [flipped[type(node.ops[0])]()], node.comparators),
            )
    if isinstance(node, ast.Return) and node.value is not None and not _const(node.value):
        returned = node.value
        if not (isinstance(returned, ast.Constant) and returned.value is None):
            for step, op in ((1, ast.Add()), (1, ast.Sub())):
                yield (
                    "off_by_one",
                    MISTAKES["off_by_one"],
                    ast.Return(ast.BinOp(returned, op, ast.Constant(step))),
                )
            yield "float", MISTAKES["float"], ast.Return(_call("float", returned))


def _call(name: str, arg: ast.AST) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), [arg], [])


def _answer_swaps(tree: ast.Module) -> Iterator[tuple[int, Swap]]:
    """A float for an int at the top level: `x = float(...)` for each assignment."""
    for index, statement in enumerate(tree.body):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            yield (
                index,
                (
                    "float",
                    MISTAKES["float"],
                    ast.Assign(statement.targets, _call("float", statement.value)),
                ),
            )


class _Replace(ast.NodeTransformer):
    """Replace the `target`-th node of a walk (generic_visit order) with `new`."""

    def __init__(self, target: int, new: ast.AST):
        self.target, self.new, self.seen = target, new, -1

    def visit(self, node: ast.AST) -> ast.AST:
        self.seen += 1
        if self.seen == self.target:
            return self.new
        return self.generic_visit(node)


def _numbered(tree: ast.AST) -> list[ast.AST]:
    """Every node in the order _Replace visits them."""
    nodes: list[ast.AST] = []

    class Walk(ast.NodeVisitor):
        def generic_visit(self, node: ast.AST) -> None:
            nodes.append(node)
            super().generic_visit(node)

    Walk().visit(tree)
    return nodes


def _global_mutants(
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


def _argument_mutants(
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
            values = [
                (ast.parse(t, mode="eval").body, "one value the self-check passes it")
                for t in texts
            ]
            if name in defaults:
                values.append((defaults[name], "its default"))
            for value, where in values:
                yield (
                    "hardcoded",
                    (
                        f"{function.name} should use its argument `{name}`, not "
                        f"`{ast.unparse(value)}`, {where}: it must work for any "
                        f"`{name}`."
                    ),
                    _renamed(tree, function.name, {name: value}),
                )


def mutants(
    source: str,
    keep: Callable[[str], bool] = lambda mistake: True,
    examples: dict[str, list[str]] | None = None,
    like: dict[str, dict[int, list[str]]] | None = None,
    declared: dict[str, tuple[str, str]] | None = None,
) -> list[Mutant]:
    """Every one-spot mistake of the answer cell `source` (code without solution
    markers), once each, for the mistakes `keep` accepts; `examples` gives, per parameter
    of the answer's function, the values its self-check's calls pass it; `like`, per
    function and argument position, the notebook's variables of the same kind; `declared`,
    the exercise's own mistakes (`kvlesson.grading.checks.rules`: name to (wrong answer
    cell, hint)), which come first."""
    tree = ast.parse(source)
    found: dict[str, Mutant] = {}

    def add(mistake: str, hint: str, mutated: ast.AST) -> None:
        text = ast.unparse(ast.fix_missing_locations(mutated))
        if keep(mistake) and text != ast.unparse(tree) and text not in found:
            found[text] = Mutant(mistake, hint, text)

    for name, (wrong, hint) in (declared or {}).items():
        add(declared_code(name), hint, ast.parse(wrong))
    for index, node in enumerate(_numbered(tree)):
        for mistake, hint, new in _swaps(node):
            add(mistake, hint, _Replace(index, new).visit(copy.deepcopy(tree)))
    for index, (mistake, hint, statement) in _answer_swaps(tree):
        mutated = copy.deepcopy(tree)
        mutated.body[index] = statement
        add(mistake, hint, mutated)
    for mistake, hint, mutated in _global_mutants(tree, like or {}):
        add(mistake, hint, mutated)
    for mistake, hint, mutated in _argument_mutants(tree, examples or {}):
        add(mistake, hint, mutated)
    return list(found.values())
