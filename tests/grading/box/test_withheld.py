"""A kvlesson without an exercise's forbidden functions (kvlesson.grading.box.withheld).

The second run of a submission imports a copy of the package in which each forbidden
function keeps its name and raises when called, so nothing in the student's process can
compute it; everything else works as in the package, and a function that needs a withheld
one (kv.room calls memory_parts) fails too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kvlesson.grading.box import withheld
from support.patience import HANG

CODE = '''
class Parts:
    def room(self, x):
        return x + 1

def memory_parts(share):
    """The parts."""
    return share * 2

def other(share):
    return memory_parts(share) + 1
'''


def test_a_withheld_function_keeps_its_name_and_raises():
    changed = withheld.withhold(CODE, frozenset({"memory_parts", "room"}))
    space: dict = {}
    exec(changed, space)
    for call in (
        lambda: space["memory_parts"](1),
        lambda: space["other"](1),
        lambda: space["Parts"]().room(1),
    ):
        try:
            call()
        except RuntimeError as error:
            assert withheld.WITHHELD in str(error)
        else:
            raise AssertionError("a withheld function ran")
    assert withheld.withhold(CODE, frozenset({"nothing_here"})) is None


def run_with(copy: Path, tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    """Run `code` in an isolated Python whose only kvlesson is `copy`, as a boxed kernel's."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "kvlesson").symlink_to(copy, target_is_directory=True)
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-B",
            "-c",
            f"import sys; sys.path.insert(0, sys.argv[1])\n{code}",
            str(site),
        ],
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.mark.process
def test_the_copy_lacks_what_it_withholds_and_keeps_the_rest(tmp_path):
    copy = withheld.package_without({"memory_parts"}, tmp_path / "cache")
    assert withheld.package_without({"memory_parts"}, tmp_path / "cache") == copy  # made once
    done = run_with(
        copy,
        tmp_path,
        "import kvlesson as kv\n"
        "print(kv.blocks_for(33))\n"
        "for call in (lambda: kv.memory_parts(90, kv.A100_80GB, kv.LLAMA_31_8B),\n"
        "             lambda: kv.room(90, 8000)):\n"
        "    try:\n        call()\n    except RuntimeError as error:\n"
        "        print(str(error).split(':')[0])\n",
    )
    assert done.stdout.split("\n")[:3] == [
        "3",
        f"memory_parts is {withheld.WITHHELD} in this run",
        f"memory_parts is {withheld.WITHHELD} in this run",
    ], done.stdout
    assert list(copy.rglob("__pycache__/*.pyc")), "the copy is compiled once, not per kernel"


@pytest.mark.process
def test_without_every_forbidden_function_of_the_course_every_module_imports(tmp_path):
    """The package computes some constants with functions an exercise forbids (each model
    from its config.json, by Model.from_hf_config): the copy carries them in as data, so
    every module still imports and the constants are what they were."""
    import json

    from support.paths import ROOT

    names = {
        name
        for path in (ROOT / "keys").glob("*.json")
        for exercise in json.loads(path.read_text())["exercises"].values()
        for name in exercise["forbidden"]
    }
    copy = withheld.package_without(names, tmp_path / "cache")
    done = run_with(
        copy,
        tmp_path,
        "import pkgutil, importlib, kvlesson\n"
        "for info in pkgutil.walk_packages(kvlesson.__path__, 'kvlesson.'):\n"
        "    if not info.name.endswith('__main__'):\n"
        "        importlib.import_module(info.name)\n"
        "print(repr(kvlesson.LLAMA_31_8B), repr(kvlesson.QWEN25_7B))",
    )
    import kvlesson

    assert done.stdout.strip() == f"{kvlesson.LLAMA_31_8B!r} {kvlesson.QWEN25_7B!r}"


@pytest.mark.process
def test_workers_asking_at_once_wait_for_one_copy_instead_of_making_their_own(tmp_path):
    """A grading run's workers all need the copy at their first submission: while one makes
    it (it holds the lock), another waits, then takes that one, and makes none of its own."""
    import fcntl

    cache = tmp_path / "cache"
    cache.mkdir()
    target = cache / f"kvlesson-{withheld.digest({'memory_parts'})}"
    asking = (
        "import sys; from pathlib import Path; from kvlesson.grading.box import withheld; "
        "print(withheld.package_without({'memory_parts'}, Path(sys.argv[1])))"
    )
    with open(cache / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the worker making it
        other = subprocess.Popen(
            [sys.executable, "-c", asking, str(cache)], stdout=subprocess.PIPE, text=True
        )
        try:
            other.wait(timeout=3)
            raise AssertionError("the second worker did not wait for the first")
        except subprocess.TimeoutExpired:
            pass
        assert [p.name for p in cache.iterdir()] == [lock.name.rsplit("/", 1)[-1]]  # nothing made
        target.mkdir()  # the first worker's copy, whole
        (target / "made-by-the-first").write_text("")
    out, _ = other.communicate(timeout=HANG)
    assert out.strip() == str(target)
    assert [p.name for p in target.iterdir()] == ["made-by-the-first"]
    assert sorted(p.name for p in cache.iterdir()) == sorted([target.name, f".{target.name}.lock"])
