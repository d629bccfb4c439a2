"""Probes that tell every known mistake from the right answer, found by search in the build.

A test cell checks a function exercise by calling the student's function on a few inputs:
its self-check (`verify`, which the student sees) and its hidden test (`record`, which the
grade reads). An input on which a wrong solution gives the right answer anyway says nothing
about it: `steps_to_read(300, 256, 0)` cannot tell a solution that ignores `writing` from
the right one. So the build holds every known mistake of the answer
(`kvlesson.grading.build.mutants`) against inputs around the cell's own (each number one up and
one down, doubled and halved, 16 either side, and the exact places where the instructor's
answer changes; each name swapped for another the cell uses in that place), and where a
mistake that is wrong somewhere gives the right answer on every visible or on every hidden
probe, it adds to that side the input that catches the most such mistakes, until each is
caught on both. Existing probes stay where they are, so a build that finds nothing to add
changes nothing; a visible input is never added to the hidden side, nor a hidden one to the
visible side.

Two halves: `kvlesson.grading.build.probe_inputs` runs in the notebook's kernel (it plans the
inputs and calls the live functions); this module reads the cell's probes (`Probes.of`),
chooses what to add (`choose`) and writes it in (`rewrite`), in the build.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from kvlesson.grading.build import mutants
from kvlesson.grading.build.shown_numbers import gives_away
from kvlesson.grading.build.stamp_places import line_offsets
from kvlesson.grading.checks.probes import KINDS  # selfcheck's probe makers

SIDES = ("verify", "record")  # the self-check, the hidden test
MOST_ADDED = 6  # probes added to one side of one cell at most


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
            found += _listed(call.func.attr, listed, source) + _looped(call.func.attr, listed,
                                                                        source)
        return cls(source, found)

    def side(self, side: str) -> list[WrittenProbe]:
        return [p for p in self.found if p.side == side]


def _side_calls(source: str) -> list[ast.Call]:
    calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr in SIDES
             and len(node.args) >= (2 if node.func.attr == "record" else 1)]
    return sorted(calls, key=lambda node: (node.lineno, node.col_offset))


def _probe_list(call: ast.Call) -> ast.AST:
    """The list of probes a `record(grade_id, [...])` or `verify([...])` call is given."""
    return call.args[1] if call.func.attr == "record" else call.args[0]


def _maker(node: ast.AST) -> ast.Call | None:
    """`selfcheck.count("label", lambda: f(...), ...)`: the call, if `node` is one."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in KINDS and len(node.args) >= 2
            and isinstance(node.args[1], ast.Lambda)
            and isinstance(node.args[1].body, ast.Call)
            and isinstance(node.args[1].body.func, ast.Name)):
        return node
    return None


def _template(maker: ast.Call) -> str:
    rest = [ast.unparse(a) for a in maker.args[2:]] + [ast.unparse(k) for k in maker.keywords]
    return (f"{ast.unparse(maker.func)}({{label}}, lambda: {{call}}"
            + "".join(f", {r}" for r in rest).replace("{", "{{").replace("}", "}}") + ")")


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
            found.append(WrittenProbe(side, body.func.id,
                               tuple(_text(source, a) for a in body.args), _template(maker)))
    return found


def _looped(side: str, node: ast.AST, source: str) -> list[WrittenProbe]:
    """`[selfcheck.count(f"f({x})", lambda x=x: f(x), ...) for x in (1, 2, 3)]`."""
    if not (isinstance(node, ast.ListComp) and len(node.generators) == 1
            and isinstance(node.generators[0].target, ast.Name)
            and isinstance(node.generators[0].iter, ast.Tuple)):
        return []
    maker, var = _maker(node.elt), node.generators[0].target.id
    if maker is None or [ast.unparse(a) for a in maker.args[1].body.args] != [var]:
        return []
    function = maker.args[1].body.func.id
    plain = ast.Call(maker.func, [ast.Constant("L"), ast.Lambda(
        ast.arguments([], [], None, [], [], None, []), ast.Name("C"))] + maker.args[2:],
        maker.keywords)
    template = ast.unparse(plain).replace("{", "{{").replace("}", "}}").replace(
        "'L'", "{label}").replace("lambda: C", "lambda: {call}")
    return [WrittenProbe(side, function, (_text(source, value),), template, var)
            for value in node.generators[0].iter.elts]


# ---------------------------------------------------------------------------------------
# In the build: which inputs to add, and the cell with them


def examples(answer: str, cell: Probes) -> dict[str, list[str]]:
    """What the self-check's calls pass each parameter of the answer's functions: the
    values a student could copy into the function instead of using the argument."""
    functions = {n.name: [a.arg for a in n.args.args] for n in ast.walk(ast.parse(answer))
                 if isinstance(n, ast.FunctionDef)}
    found: dict[str, list[str]] = {}
    for probe in cell.side("verify"):
        for name, text in zip(functions.get(probe.function, []), probe.args):
            found.setdefault(name, []).append(text)
    return found


@dataclass(frozen=True)
class Choice:
    """What the search adds to each side, and the mistakes no input it tried catches on
    that side (by their place in the list of mistakes)."""

    added: dict[str, list]
    missed: dict[str, set[int]]


def choose(cell: Probes, inputs: list[dict], wrong: list[list[str | None]],
           words: list[str] | None = None, shown: set[float] = frozenset()) -> Choice:
    """The inputs to add to each side so that every mistake that is wrong on some input is
    wrong on a visible and on a hidden probe, greedily, the input that catches most first
    (the first in plan order on a tie); then, on the visible side, inputs that tell apart
    mistakes with other `words` which give the same answers on every visible probe (a
    hint is shown only for answers one mistake gives). No visible input is added whose
    answer is one of the numbers `shown` above the exercise."""
    caught = [{m for m, answers in enumerate(wrong) if answers[i] != row["right"]}
              for i, row in enumerate(inputs)]
    wrong_somewhere = set().union(*caught) if caught else set()
    index = {(row["side"], row["text"]): i for i, row in enumerate(inputs)}
    added: dict[str, list] = {}
    left: dict[str, set[int]] = {}
    used = {(p.function, p.args) for p in cell.found}  # inputs on either side already
    for side in reversed(SIDES):  # the hidden test first: the grade rests on it
        own = [index[side, p.element(p.args)] for p in cell.side(side)
               if (side, p.element(p.args)) in index]
        added[side], left[side] = [], set()
        if not own:  # this side's probes are not calls on written inputs: nothing to add
            continue
        missed = wrong_somewhere - set().union(*(caught[i] for i in own))
        pool = [i for i, row in enumerate(inputs)
                if (row["function"], tuple(row["args"])) not in used
                and row["side"] == side and _same_function(row, cell.side(side))
                and not (side == "verify" and gives_away(row["right"], shown))]

        def take(best: int) -> None:
            added[side].append(inputs[best])
            used.add((inputs[best]["function"], tuple(inputs[best]["args"])))
            own.append(best)
            pool[:] = [i for i in pool if inputs[i]["args"] != inputs[best]["args"]]

        while missed and len(added[side]) < MOST_ADDED:
            best = max(pool, key=lambda i: (len(caught[i] & missed), -i), default=None)
            if best is None or not caught[best] & missed:
                break
            take(best)
            missed -= caught[best]
        left[side] = missed
        hinted = not any(".yes_no(" in p.template for p in cell.side(side))  # yes/no: no hints
        while side == "verify" and words and hinted and len(added[side]) < MOST_ADDED:
            now = _alike(own, wrong, words, wrong_somewhere)
            best = min(pool, key=lambda i: (_alike(own + [i], wrong, words, wrong_somewhere),
                                            i), default=None)
            if best is None or _alike(own + [best], wrong, words, wrong_somewhere) >= now:
                break
            take(best)
    return Choice(added, left)


def _alike(probes: list[int], wrong: list[list[str | None]], words: list[str],
           wrong_somewhere: set[int]) -> int:
    """Pairs of mistakes with other words that give the same answers on `probes`."""
    groups: dict[tuple, set[str]] = {}
    counts: dict[tuple, int] = {}
    for m in wrong_somewhere:
        answers = tuple(wrong[m][i] for i in probes)
        groups.setdefault(answers, set()).add(words[m])
        counts[answers] = counts.get(answers, 0) + 1
    return sum(counts[a] * (counts[a] - 1) // 2 for a, w in groups.items() if len(w) > 1)


def _same_function(row: dict, side_probes: list[WrittenProbe]) -> bool:
    return any(p.function == row["function"] and p.template == row["template"]
               for p in side_probes)


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


def searched(kernel, source: str, right: str, scratch: Path, where: str,
             shown: set[float] = frozenset()) -> tuple[str, dict[str, str]]:
    """In the build, with the notebook's `kernel` (`kvlesson.grading.build.stamping`): the test
    cell `source` with the inputs this search adds so that
    every known mistake of the answer `right` fails a visible and a hidden probe (the same
    `source` when its probes already do), and per mistake's code a fingerprint of what it
    gives on every input tried: two mistakes with one fingerprint are one wrong function.
    Run with the right answer defined; `shown`: the numbers the cells above show."""
    cell = Probes.of(source)
    if not cell.found:
        return source, {}
    plan, answers = scratch / "plan.json", scratch / "answers.json"
    kernel.must(f"{source}\nfrom kvlesson.grading.build import probe_inputs as _kvlesson_search\n"
                f"_kvlesson_search.plan({source!r}, {str(plan)!r})")
    inputs = json.loads(plan.read_text())["inputs"]
    wrong, names, words, same = [], [], [], {}
    for mutant in mutants.mutants(right, examples=examples(right, cell)):
        if kernel.quietly(mutant.source):
            kernel.must(f"_kvlesson_search.values({str(plan)!r}, {str(answers)!r})")
            wrong.append(json.loads(answers.read_text()))
            names.append(mutant.mistake)
            words.append(mutant.hint)
            same[mutant.source] = hashlib.sha256(answers.read_bytes()).hexdigest()[:16]
        kernel.must(right)
    choice = choose(cell, inputs, wrong, words, shown)
    for side, missed in choice.missed.items():
        for number in sorted(missed):
            print(f"{where}: no input tried catches the mistake {names[number]} on the "
                  f"{side} side")
    return rewrite(cell, choice.added), same
