"""A test cell's probes as it writes them: read, and written into.

The build's probe search (`kvlesson.authoring.probe_search`) works on the probes a test
cell writes as calls of one function on written inputs (`steps_to_read(5_000, 1_024, 24)`, or
a list comprehension over a tuple of them): this module reads them with their side (the
self-check's `verify`, the hidden `record`) and each argument's text (`Probes.of`), the values
the self-check passes each parameter (`examples`), the mistakes the cell declares
(`declared_mistakes`), and writes added probes at the end of their side's list (`rewrite`).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass

from kvlesson.authoring.stamp_places import line_offsets
from kvlesson.grading.checks.probes import KINDS  # selfcheck's probe makers

SIDES = ("verify", "record")  # the self-check, the hidden test


@dataclass(frozen=True)
class WrittenProbe:
    """One probe as a test cell writes it, calling a function on written inputs (the probe it
    makes in the kernel is a `kvlesson.grading.checks.probes.Probe`): its side, the function,
    and each argument's source text. `loop` names the loop variable of a probe list written
    as a comprehension over a tuple."""

    side: str
    function: str
    args: tuple[str, ...]
    template: str  # the probe maker's call, with {label} and {call} to fill in
    loop: str = ""

    def element(self, args: tuple[str, ...]) -> str:
        """This probe's maker called on other arguments: the text of a new probe."""
        call = f"{self.function}({', '.join(args)})"
        return self.template.format(label=json.dumps(call), call=call)


@dataclass
class Probes:
    """A test cell's source and the probes of it that call a function on written inputs."""

    source: str
    found: list[WrittenProbe]

    @classmethod
    def of(cls, source: str) -> "Probes":
        """The probes of a test cell that call one function on literal inputs or names."""
        found: list[WrittenProbe] = []
        for call in _side_calls(source):
            listed = _probe_list(call)
            found += _listed(call.func.attr, listed, source) + _looped(
                call.func.attr, listed, source
            )
        return cls(source, found)

    def side(self, side: str) -> list[WrittenProbe]:
        return [p for p in self.found if p.side == side]


def _side_calls(source: str) -> list[ast.Call]:
    calls = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SIDES
        and len(node.args) >= (2 if node.func.attr == "record" else 1)
    ]
    return sorted(calls, key=lambda node: (node.lineno, node.col_offset))


def _probe_list(call: ast.Call) -> ast.AST:
    """The list of probes a `record(grade_id, [...])` or `verify([...])` call is given."""
    return call.args[1] if call.func.attr == "record" else call.args[0]


def _maker(node: ast.AST) -> ast.Call | None:
    """`selfcheck.count("label", lambda: f(...), ...)`: the call, if `node` is one."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in KINDS
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Lambda)
        and isinstance(node.args[1].body, ast.Call)
        and isinstance(node.args[1].body.func, ast.Name)
    ):
        return node
    return None


def _template(maker: ast.Call) -> str:
    rest = [ast.unparse(a) for a in maker.args[2:]] + [ast.unparse(k) for k in maker.keywords]
    return (
        f"{ast.unparse(maker.func)}({{label}}, lambda: {{call}}"
        + "".join(f", {r}" for r in rest).replace("{", "{{").replace("}", "}}")
        + ")"
    )


def _text(source: str, node: ast.AST) -> str:
    """An argument as the cell writes it (12_000 stays 12_000)."""
    return ast.get_source_segment(source, node) or ast.unparse(node)


def _listed(side: str, node: ast.AST, source: str) -> list[WrittenProbe]:
    if not isinstance(node, ast.List):
        return []
    found = []
    for element in node.elts:
        maker = _maker(element)
        if maker is not None and not maker.args[1].args.args:
            body = maker.args[1].body
            found.append(
                WrittenProbe(
                    side, body.func.id, tuple(_text(source, a) for a in body.args), _template(maker)
                )
            )
    return found


class UnreadProbes(ValueError):
    """A test cell's probes written in a form the build's probe search cannot read."""


def _looped(side: str, node: ast.AST, source: str) -> list[WrittenProbe]:
    """`[selfcheck.count(f"f({x})", lambda x=x: f(x), ...) for x in (1, 2, 3)]`. A loop over
    pairs of written inputs (`for share, tokens in ((55, 1_000), ...)`) is refused with what
    to write instead: the search would add no input for it, and say nothing."""
    if not (
        isinstance(node, ast.ListComp)
        and len(node.generators) == 1
        and isinstance(node.generators[0].iter, ast.Tuple)
    ):
        return []
    if isinstance(node.generators[0].target, ast.Tuple):
        loop = ", ".join(ast.unparse(e) for e in node.generators[0].target.elts)
        raise UnreadProbes(
            f"the probes of `{side}(...)` loop over several inputs at once (`for {loop} in "
            "(...)`), which the build's probe search does not read: it would add no input to "
            "them. Loop over one input (`for x in (1, 2, 3)`), or write each call out as its "
            f'own probe (`selfcheck.count("f(55, 1_000)", lambda: f(55, 1_000), ...)`)'
        )
    if not isinstance(node.generators[0].target, ast.Name):
        return []
    maker, var = _maker(node.elt), node.generators[0].target.id
    if maker is None or [ast.unparse(a) for a in maker.args[1].body.args] != [var]:
        return []
    function = maker.args[1].body.func.id
    plain = ast.Call(
        maker.func,
        [
            ast.Constant("L"),
            ast.Lambda(ast.arguments([], [], None, [], [], None, []), ast.Name("C")),
        ]
        + maker.args[2:],
        maker.keywords,
    )
    template = (
        ast.unparse(plain)
        .replace("{", "{{")
        .replace("}", "}}")
        .replace("'L'", "{label}")
        .replace("lambda: C", "lambda: {call}")
    )
    return [
        WrittenProbe(side, function, (_text(source, value),), template, var)
        for value in node.generators[0].iter.elts
    ]


def examples(answer: str, cell: Probes) -> dict[str, list[str]]:
    """What the self-check's calls pass each parameter of the answer's functions: the
    values a student could copy into the function instead of using the argument."""
    functions = {
        n.name: [a.arg for a in n.args.args]
        for n in ast.walk(ast.parse(answer))
        if isinstance(n, ast.FunctionDef)
    }
    found: dict[str, list[str]] = {}
    for probe in cell.side("verify"):
        for name, text in zip(functions.get(probe.function, []), probe.args):
            found.setdefault(name, []).append(text)
    return found


def rewrite(cell: Probes, added: dict[str, list]) -> str:
    """The test cell with the added inputs at the end of their side's list of probes."""
    source = cell.source
    edits: list[tuple[int, str]] = []
    offsets = line_offsets(source)
    for call in _side_calls(source):
        side, listed = call.func.attr, _probe_list(call)
        rows = [row for row in added.get(side, []) if _fits(row, listed)]
        if not rows:
            continue
        if isinstance(listed, ast.ListComp):
            target = listed.generators[0].iter
            end = offsets[target.end_lineno - 1] + target.end_col_offset - 1  # before ")"
            edits.append((end, "".join(f", {row['args'][0]}" for row in rows)))
        else:
            last = listed.elts[-1]
            end = offsets[last.end_lineno - 1] + last.end_col_offset
            indent = " " * last.col_offset
            edits.append((end, "".join(f",\n{indent}{row['text']}" for row in rows)))
    data = source.encode()
    for at, text in sorted(edits, reverse=True):
        data = data[:at] + text.encode() + data[at:]
    return data.decode()


def _fits(row: dict, listed: ast.AST) -> bool:
    if isinstance(listed, ast.ListComp):
        return bool(row["loop"]) and row["loop"] == listed.generators[0].target.id
    return not row["loop"] and isinstance(listed, ast.List)


def declared_mistakes(source: str) -> dict[str, tuple[str, str]]:
    """The mistakes a test cell declares (`declare(mistakes={...})`, written as a literal
    dict in its hidden part: `kvlesson.grading.checks.rules`), read without running it."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] == "declare":
            for keyword in node.keywords:
                if keyword.arg == "mistakes":
                    try:
                        return dict(ast.literal_eval(keyword.value))
                    except ValueError as error:
                        raise ValueError(
                            "declare(mistakes=...) must be written out as a dict "
                            "of text, {name: (wrong answer cell, hint)}"
                        ) from error
    return {}
