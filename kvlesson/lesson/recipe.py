"""How an explorer was made, as JSON: enough to make it again where no kernel runs.

An explorer's stored output is a still. The course's website moves it without a kernel from
frames worked out ahead (`frames`), and to work them out it makes the explorer again, in
the site's build, from the arguments the notebook gave it. Those arguments are the course's
own values: numbers, words, a card or a model (`memory/specs.py`), chats
(`serving/chats.py`). `recipe` writes them as JSON, which a notebook's output can hold
beside the still; `made_again` reads it back and calls the explorer. A value of another
kind (a function, an open file) has no recipe: `Unwritable` says which.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
from typing import Any

import numpy as np

PACKAGE = "kvlesson."  # only the course's own classes are made again from a recipe


class Unwritable(ValueError):
    """An argument that JSON cannot carry (the explorer keeps its still only)."""


def where(cls: type) -> str:
    """A class's address: 'kvlesson.lesson.explorers:FloorExplorer'; only a class of the
    course's package, defined at a module's top, can be found again from it."""
    if not cls.__module__.startswith(PACKAGE) or "<locals>" in cls.__qualname__:
        raise Unwritable(f"{cls.__module__}.{cls.__qualname__} is not one of the course's classes")
    return f"{cls.__module__}:{cls.__qualname__}"


def found(address: str) -> type:
    """The class at `address` (see `where`), from the course's own package only."""
    module, _, name = address.partition(":")
    if not module.startswith(PACKAGE):
        raise ValueError(f"a recipe names {address!r}, which is not one of the course's classes")
    return getattr(importlib.import_module(module), name)


def written(value: Any) -> Any:
    """`value` as JSON: plain values as they are, sequences as lists, a course dataclass as
    its fields, a run of the same dataclass (chats) as rows of fields."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"of": where(type(value)), "fields": [written(v) for v in fields_of(value)]}
    if isinstance(value, (list, tuple)):
        kinds = {type(v) for v in value}
        if len(value) > 1 and len(kinds) == 1 and dataclasses.is_dataclass(next(iter(kinds))):
            rows = [[written(v) for v in fields_of(item)] for item in value]
            # one line of text in the notebook, not a line a number (600 chats: 2,400 lines)
            return {
                "rows_of": where(next(iter(kinds))),
                "rows": json.dumps(rows, separators=(",", ":")),
            }
        return [written(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: written(v) for k, v in value.items()}}
    raise Unwritable(f"{type(value).__name__} cannot be written as JSON: {value!r:.80}")


def fields_of(value: Any) -> list[Any]:
    """A dataclass's values, in the order its constructor takes them."""
    return [getattr(value, f.name) for f in dataclasses.fields(value) if f.init]


def read(value: Any) -> Any:
    """What `written` wrote, made again (sequences as tuples)."""
    if isinstance(value, list):
        return tuple(read(v) for v in value)
    if isinstance(value, dict):
        if "of" in value:
            return found(value["of"])(*read(value["fields"]))
        if "rows_of" in value:
            cls = found(value["rows_of"])
            return tuple(cls(*read(row)) for row in json.loads(value["rows"]))
        return {k: read(v) for k, v in value["dict"].items()}
    return value


def recipe(cls: type, init, args: tuple, kwargs: dict) -> dict:
    """How `cls(*args, **kwargs)` was made, as JSON (`init` is the __init__ called)."""
    bound = inspect.signature(init).bind(None, *args, **kwargs)
    return {
        "explorer": where(cls),
        "args": [written(v) for v in bound.args[1:]],
        "kwargs": {k: written(v) for k, v in bound.kwargs.items()},
    }


def made_again(made: dict) -> Any:
    """The explorer a recipe describes, made again."""
    cls = found(made["explorer"])
    kwargs = {k: read(v) for k, v in made["kwargs"].items()}
    return cls(*read(made["args"]), **kwargs)
