"""An exercise's rules, declared beside it: the inputs its question is defined on, who answers
it besides the instructor, and mistakes of its own with their hints.

A test cell's hidden part may declare them, before its `record` line::

    from kvlesson.grading.checks.rules import declare
    declare(
        domain=lambda tokens: tokens >= 1,            # the inputs the question is about
        authority=lambda tokens: kv.blocks_for(tokens),  # the package's own answer
        mistakes={"the typical chat": (                 # a wrong answer cell and its hint
            "def chat_blocks(tokens):\\n    return -(-2_000 // 16)",
            "chat_blocks should use its argument `tokens`, not a typical chat of 2,000")},
    )

* `domain`: a predicate with the answer function's parameters. The build's probe search
  (`kvlesson.authoring.probe_inputs`) plans inputs only where it is True, so no key is
  made on an input the question does not cover (a tensor-parallel size vLLM refuses, a
  `max_model_len` above the model's context).
* `authority`: what answers the question outside the instructor's solution: a function
  with the answer function's parameters, or, for an exercise whose answers are variables,
  a dict of each variable's name to a function of no argument. The build holds every probe
  of the cell against it and stops on a disagreement; tests/authoring/test_selfchecks.py does
  the same for the released keys and stamps.
* `mistakes`: per mistake, a name (the class report's) and (the answer cell as a student
  might write it wrongly, the hint's words). The build runs each as it runs the mutations
  of `kvlesson.authoring.mutants`: the self-check gives its hint, the key names it.

At grade time the call only stores its arguments: nothing is run, nothing is printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

Authority = Callable[..., object] | dict[str, Callable[[], object]]


@dataclass(frozen=True)
class Rules:
    """One exercise's declared rules (see the module's docstring)."""

    domain: Callable[..., bool] | None = None
    authority: Authority | None = None
    mistakes: dict[str, tuple[str, str]] = field(default_factory=dict)


CURRENT = Rules()  # the rules of the test cell that ran last (forget() before the next one)


def declare(
    domain: Callable[..., bool] | None = None,
    authority: Authority | None = None,
    mistakes: dict[str, tuple[str, str]] | None = None,
) -> None:
    """Declare the rules of the exercise whose test cell this is (see the module's
    docstring); a wrong form says what is wrong, in the instructor's terms."""
    global CURRENT
    if domain is not None and not callable(domain):
        raise TypeError(f"declare(domain=...) takes a predicate, got {domain!r}")
    if authority is not None and not (
        callable(authority)
        or (isinstance(authority, dict) and all(map(callable, authority.values())))
    ):
        raise TypeError(
            "declare(authority=...) takes a function, or a dict of each answer "
            f"variable's name to a function of no argument, got {authority!r}"
        )
    for name, pair in (mistakes or {}).items():
        if not (
            isinstance(name, str)
            and isinstance(pair, tuple)
            and len(pair) == 2
            and all(isinstance(part, str) for part in pair)
        ):
            raise TypeError(
                "declare(mistakes=...) takes {name: (wrong answer cell, hint)}, "
                f"all text; got {name!r}: {pair!r}"
            )
    CURRENT = Rules(domain, authority, dict(mistakes or {}))


def forget() -> None:
    """A new test cell begins: no rules until it declares its own."""
    global CURRENT
    CURRENT = Rules()
