"""What an exercise's authority answers on each probe of its test cell (in the kernel).

An exercise may declare who answers its question besides the instructor's solution
(`kvlesson.grading.checks.rules`: `Model.tp_refusal` and `startup` for "does vLLM start",
`latency.percentile` for a percentile, ...). This module runs in the notebook's kernel, where
the answer's functions and variables live: it evaluates every probe of a test cell, on both
sides, with the answer swapped for the authority, and writes each probe's normal form. The
build (`kvlesson.authoring.stamping`) holds them against the instructor's answers and
stops on a disagreement; tests/authoring/test_selfchecks.py holds the released stamps and
keys against them.
"""

from __future__ import annotations

import ast
import json

from kvlesson.grading.checks import rules
from kvlesson.grading.checks.probes import normal

SIDES = ("record", "verify")  # the hidden test, the self-check


def _probe_lists(source: str) -> list[tuple[str, str]]:
    """(side, the source of its list of probes) for each record and verify call, in order."""
    calls = sorted(
        (
            node
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SIDES
        ),
        key=lambda node: (node.lineno, node.col_offset),
    )
    found = []
    for call in calls:
        listed = call.args[1] if call.func.attr == "record" else call.args[0]
        found.append((call.func.attr, ast.unparse(listed)))
    return found


def _answer(probe) -> str:
    try:
        return normal(probe, probe.get())
    except Exception as error:
        return f"error:{type(error).__name__}: {error}"


def answers(
    source: str, functions: list[str], out_path: str, namespace: dict | None = None
) -> None:
    """In the kernel, after the test cell `source` ran (it declared its rules): write to
    `out_path` {"authority": whether one is declared, "sides": [[side, [[label, normal of
    the authority's answer, or None for a variable it does not answer], ...]], ...]};
    `functions`: the answer cell's functions, one of which a function authority stands in
    for (the one the probes call)."""
    namespace = namespace if namespace is not None else get_ipython().user_ns  # noqa: F821
    authority = rules.CURRENT.authority
    result: dict = {"authority": authority is not None, "sides": []}
    if authority is not None:
        swaps = (
            dict(authority)
            if isinstance(authority, dict)
            else {name: authority for name in functions}
        )
        for side, listed in _probe_lists(source):
            made = eval(listed, namespace)
            kept = {name: namespace[name] for name in swaps if name in namespace}
            try:
                for name, standin in swaps.items():
                    namespace[name] = standin() if isinstance(authority, dict) else standin
                result["sides"].append(
                    [
                        side,
                        [
                            [
                                p.label,
                                _answer(p)
                                if not isinstance(authority, dict) or p.label in swaps
                                else None,
                            ]
                            for p in made
                        ],
                    ]
                )
            finally:
                for name in swaps:
                    namespace.pop(name, None)
                namespace.update(kept)
    with open(out_path, "w") as out:
        json.dump(result, out)
