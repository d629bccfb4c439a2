"""The mistakes students make, as mutations of the instructor's solution.

Each mutation changes one spot of an answer cell's code the way a student
might get it wrong: off by one, rounding down where a partly filled block
counts whole, `/` for `//`, a factor 2 dropped (K and V), a term of the sum
dropped (the reserve), an input left out of a product (`weights / tp` read as
`weights`), GB for GiB and back, the percent not divided by 100, `>` for `>=`,
a float for an int; and, from `kvlesson.authoring.argument_mutants`, a function
reading the notebook's global instead of its argument or a value written in. The build runs them to give the self-checks hints for known
wrong answers; the tests run them to prove the self-checks reject what the
grade rejects.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable, Iterator

from kvlesson.authoring.argument_mutants import argument_mutants, global_mutants
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


def _named(node: ast.AST) -> bool:
    """Whether `node` is an input read by name (`tp`, `model.layers`, `len(x)`), not a
    constant: leaving it out of a product is ignoring that input."""
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))


def _is_two_to_30(node: ast.AST) -> bool:
    return _const(node, GIB) or (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and _const(node.left, 2)
        and _const(node.right, 30)
    )


def _left_out(kind: str, what: ast.AST, private: frozenset[str]) -> str:
    """The hint for `what` left out of a sum or a product: naming it, unless it reads a name
    the solution made for itself (a local variable: a student's answer may have none)."""
    if any(isinstance(n, ast.Name) and n.id in private for n in ast.walk(what)):
        return MISTAKES[kind]
    missing = "a term of the sum" if kind == "term" else "a factor"
    return f"{missing} is missing: `{ast.unparse(what)}`."


def _private(tree: ast.AST) -> frozenset[str]:
    """The names the solution's functions bind for themselves, their parameters aside."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))]
    bound = {
        n.id
        for f in functions
        for n in ast.walk(f)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    return frozenset(
        bound - {a.arg for f in functions for a in ast.walk(f.args) if isinstance(a, ast.arg)}
    )


def _binop_swaps(node: ast.BinOp, private: frozenset[str]) -> Iterator[Swap]:
    if isinstance(node.op, ast.FloorDiv):
        yield "true_div", MISTAKES["true_div"], ast.BinOp(node.left, ast.Div(), node.right)
    if isinstance(node.op, ast.Mult):
        for keep, drop in ((node.left, node.right), (node.right, node.left)):
            if _const(drop, 2):
                yield "factor2", MISTAKES["factor2"], keep
    if isinstance(node.op, (ast.Sub, ast.Add)):
        yield "term", _left_out("term", node.right, private), node.left
    if isinstance(node.op, (ast.Mult, ast.Div, ast.FloorDiv)):  # an input left out of a product
        for keep, drop in ((node.left, node.right), (node.right, node.left)):
            if _named(drop) and (drop is node.right or isinstance(node.op, ast.Mult)):
                yield "factor", _left_out("factor", drop, private), keep
    if isinstance(node.op, ast.Div) and _const(node.right, 100):
        yield "percent", MISTAKES["percent"], node.left
    if _is_two_to_30(node):
        yield "gb", MISTAKES["gb"], ast.Constant(GB)


def _math(name: str, arg: ast.AST) -> ast.Call:
    """math.NAME(arg), whether or not the answer imported math."""
    module = _call("__import__", ast.Constant("math"))
    return ast.Call(ast.Attribute(module, name, ast.Load()), [arg], [])


def _ceil_division(node: ast.AST) -> bool:
    """Whether `node` is -(-a // b), the whole-number way to round a / b up."""
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.BinOp)
        and isinstance(node.operand.op, ast.FloorDiv)
        and isinstance(node.operand.left, ast.UnaryOp)
    )


def _rounded(node: ast.AST) -> tuple[str, ast.AST] | None:
    """How `node` rounds, and what it rounds: ceil, floor (of a // b: a / b), round, int."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = ast.unparse(node.func).rsplit(".", 1)[-1]
        if name in ("ceil", "floor", "round", "int"):
            return name, node.args[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        return "floor", ast.BinOp(node.left, ast.Div(), node.right)
    if _ceil_division(node):
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


def _swaps(node: ast.AST, private: frozenset[str] = frozenset()) -> Iterator[Swap]:
    """The one-spot mistakes at `node` (`private`: the solution's own local names)."""
    yield from _rounding_swaps(node)
    if _const(node, *KILO) or (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and _const(node.left, 2)
        and _const(node.right, 10, 20)
    ):
        value = 2**node.right.value if isinstance(node, ast.BinOp) else node.value
        yield "kilo", MISTAKES["kilo"], ast.Constant(type(value)(KILO[int(value)]))
    if _ceil_division(node):
        floor = ast.BinOp(node.operand.left.operand, ast.FloorDiv(), node.operand.right)
        yield "ceil", MISTAKES["ceil"], floor
    if isinstance(node, ast.BinOp):
        yield from _binop_swaps(node, private)
    if _const(node, GB):
        yield "gib", MISTAKES["gib"], ast.BinOp(ast.Constant(2), ast.Pow(), ast.Constant(30))
    if isinstance(node, ast.Constant) and type(node.value) is int and not _is_two_to_30(node):
        for step in (1, -1):  # the hint names no number: the student's may be another one
            yield "constant", MISTAKES["constant"], ast.Constant(node.value + step)
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
    private = _private(tree)
    for index, node in enumerate(_numbered(tree)):
        for mistake, hint, new in _swaps(node, private):
            add(mistake, hint, _Replace(index, new).visit(copy.deepcopy(tree)))
    for index, (mistake, hint, statement) in _answer_swaps(tree):
        mutated = copy.deepcopy(tree)
        mutated.body[index] = statement
        add(mistake, hint, mutated)
    for mistake, hint, mutated in global_mutants(tree, like or {}):
        add(mistake, hint, mutated)
    for mistake, hint, mutated in argument_mutants(tree, examples or {}):
        add(mistake, hint, mutated)
    return list(found.values())
