"""kvlesson's surface, `kv.NAME`, loaded on first use.

`import kvlesson` binds no name of the model until one is used: a process that needs one
wing (the grading box's launcher, twice per submission; every nbgrader command, which reads
the course's configuration) does not import the others. What a student, a notebook or the
grader relies on must not change with it: every name of `__all__` is there, `dir()` and
`from kvlesson import *` list them, a wrong name gets Python's usual error, the grader's
reading of a cell follows a name nobody has used yet, and the box's kernel has every name
loaded before its first cell.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import kvlesson as kv
from support.patience import HANG


def fresh(code: str) -> str:
    """What `code` prints in a new Python process (isolated, as the box's launcher runs)."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=HANG
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_every_name_of_the_surface_is_there_and_listed():
    namespace: dict = {}
    exec("from kvlesson import *", namespace)
    for name in kv.__all__:
        assert getattr(kv, name) is namespace[name], name
        assert name in dir(kv), name
    assert kv.memory.specs.LLAMA_31_8B is kv.LLAMA_31_8B  # a wing, as an attribute


def test_a_wrong_name_gets_pythons_attribute_error():
    with pytest.raises(AttributeError, match="module 'kvlesson' has no attribute 'memory_part'"):
        kv.memory_part  # noqa: B018


@pytest.mark.process
def test_the_boxs_launcher_and_the_course_config_load_no_model():
    loaded = fresh(
        "import sys, kvlesson.grading.box.launch, kvlesson.grading.box.execute; "
        "print(sorted(m for m in ('pandas', 'kvlesson.memory.floor', 'kvlesson.serving.server') "
        "if m in sys.modules))"
    )
    assert loaded == "[]"


@pytest.mark.process
def test_the_graders_reading_follows_a_name_nobody_has_used_yet():
    """`kv.startup` calls memory_parts: read in a process where nothing loaded startup."""
    found = fresh(
        "import kvlesson as kv; from kvlesson.grading.checks import forbidden; "
        "assert 'startup' not in vars(kv); "
        "print(forbidden.used_in('p = kv.startup(gpu, model, 90, 8000, 0).parts', {'kv': kv}, "
        "forbidden.resolve(['memory_parts'])))"
    )
    assert "memory_parts" in found


@pytest.mark.process
def test_the_boxs_kernel_has_every_name_loaded_before_any_cell():
    loaded = fresh(
        "import kvlesson as kv; from kvlesson.grading.box import watch; "
        "watch.preload_package(); print(sorted(set(kv.__all__) - set(vars(kv))))"
    )
    assert loaded == "[]"
