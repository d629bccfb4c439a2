"""Marking an autograded notebook outside the student's kernel.

Student code runs in the same kernel as the tests, so a verdict reached in that
kernel can be faked. Here, in the grader's own process, each hidden test cell's
record line (`KVLESSON-MARK {...}`, printed by `kvlesson.grading.selfcheck.record`) is
compared with the key written when the release was made (`keys/<assignment>.json`,
expected values with their exact types), and the student's answer cells are read
as code, never run, for signs of tampering. Each exercise gets a `Mark`: its
score, and flags in words an instructor can read.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

import nbformat

from kvlesson.grading import probes, selfcheck

KEYS = "keys"  # the keys' folder in a course root: never released, never in solutions/
TAMPER_MODULES = {"builtins", "sys", "hashlib", "importlib", "ctypes", "subprocess", "os",
                  "signal", "IPython", "gc", "inspect", "types", "threading", "multiprocessing"}
TAMPER_NAMES = {"get_ipython", "input_transformers", "input_transformers_post", "__builtins__",
                "setattr", "getattr", "delattr", "vars", "globals", "locals", "eval", "exec",
                "compile", "__import__", "open", "breakpoint"}


@dataclass(frozen=True)
class Mark:
    """One hidden test's result: the points it is worth, the score, and the flags."""

    grade_id: str
    points: float
    score: float
    flags: tuple[str, ...]


def key_path(root: Path, assignment: str) -> Path:
    """Where the key of `assignment` lives in the course root `root`."""
    return Path(root) / KEYS / f"{assignment}.json"


def read_key(path: Path) -> dict:
    """A key written by `python -m kvlesson.course build` (or `for`)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no key at {path}: run python -m kvlesson.course build (or for) first")
    key = json.loads(path.read_text())
    if not isinstance(key, dict) or not isinstance(key.get("exercises"), dict):
        raise ValueError(f"{path} is not a kvlesson key (no exercises)")
    return key


def write_key(path: Path, key: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(key, indent=1, sort_keys=True) + "\n")


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def records_of(cell) -> list[dict]:
    """The record lines a cell printed (stdout only), parsed; a broken one as {}."""
    found = []
    for output in cell.get("outputs", []):
        if output.get("output_type") != "stream" or output.get("name") != "stdout":
            continue
        for line in output.get("text", "").splitlines():
            if line.startswith(selfcheck.RECORD_PREFIX):
                try:
                    found.append(json.loads(line[len(selfcheck.RECORD_PREFIX):]))
                except json.JSONDecodeError:
                    found.append({})
    return found


def _probe_right(probe: dict, value: dict) -> bool:
    """A recorded value against the key's probe: same kind, same normal form."""
    spec = probes.Probe(probe["label"], lambda: None, probe["kind"], probe["unit"],
                           probe["places"], probe["scale"])
    if not isinstance(value, dict) or value.get("t") in ("error", "other", None):
        return False
    try:
        return probes.normal(spec, probes.decode(value)) == probe["normal"]
    except (probes.WrongKind, probes.NotYet):
        return False


def _last_name(call: str) -> str:
    return call.rsplit(".", 1)[-1]


def mark_cell(cell, exercise: dict, setting: dict | None) -> Mark:
    """The mark of one hidden test cell against its exercise in the key."""
    grade_id, points = _meta(cell)["grade_id"], float(exercise["points"])
    records = records_of(cell)
    if len(records) != 1:
        what = "no record line" if not records else f"{len(records)} record lines"
        return Mark(grade_id, points, 0.0, (f"{what} in the test cell's output: the cell did not "
                                            f"run, or the output was tampered with",))
    record, flags = records[0], []
    values = record.get("values")
    if record.get("id") != grade_id or not isinstance(values, list) \
            or len(values) != len(exercise["probes"]):
        return Mark(grade_id, points, 0.0, (f"the record does not belong to {grade_id}",))
    right = all(_probe_right(p, v) for p, v in zip(exercise["probes"], values))
    failed = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
    if right and failed:
        flags.append("the values are right but the cell failed in the kernel (changed setting, "
                     "a forbidden call, or tampering): check by hand")
    if not right and not failed:
        flags.append("the cell passed in the kernel but the values are wrong: tampering?")
    used = [c for c in record.get("calls", []) if _last_name(c) in exercise["forbidden"]]
    if used:
        flags.append(f"scored 0: calls {', '.join(used)}, which this exercise forbids")
        right = False
    if setting and record.get("setting") != setting:
        flags.append(f"the notebook's setting {record.get('setting')} is not the key's {setting}")
    return Mark(grade_id, points, points if right else 0.0, tuple(flags))


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [(node.module or "").split(".")[0]]
    return []


def _names_one(text: str, forbidden: set[str]) -> bool:
    """Whether a string could name a forbidden function for getattr or an import: a name or
    a dotted path ("memory_parts", "kv.memory_parts") with one of them as a part. Prose, such
    as a docstring that says "the p-th percentile", names nothing."""
    words = text.strip().split(".")
    return all(word.isidentifier() for word in words) and not forbidden.isdisjoint(words)


def scan(source: str, forbidden: set[str], modules: set[str]) -> list[str]:
    """Signs of tampering in an answer cell's code, read and never run: imports of the
    kernel's machinery, dunder attributes, reflection, writes to the attributes of
    `modules` (names the locked cells import), rebinding them, and any mention of a
    `forbidden` function (as a name, an attribute or a string)."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError as error:
        return [f"the cell does not parse ({error.msg}, line {error.lineno})"]
    own = {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
           if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    found = []
    for node in ast.walk(tree):
        found += [f"imports {name}" for name in _imported(node) if name in TAMPER_MODULES]
        word = (node.id if isinstance(node, ast.Name) else node.attr
                if isinstance(node, ast.Attribute) else node.value
                if isinstance(node, ast.Constant) and isinstance(node.value, str) else None)
        if word is None:
            continue
        if word in TAMPER_NAMES or (word.startswith("__") and word.endswith("__")
                                    and not isinstance(node, ast.Constant)):
            found.append(f"uses {word}")
        if isinstance(node, ast.Constant) and _names_one(word, forbidden):
            found.append(f"has the string {word[:40]!r}, which names a function not to use here")
        if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            root = _root_name(node.value) if isinstance(node, ast.Attribute) else None
            if root in modules | own | {"kvlesson"}:
                found.append(f"assigns to an attribute of {root}")
            if isinstance(node, ast.Name) and node.id in modules:
                found.append(f"rebinds {node.id}, which the course's cells use")
    found += [f"mentions {name}, which this exercise forbids"
              for name in probes.mentioned(source, forbidden)]
    return sorted(set(found))


def _root_name(node: ast.AST) -> str | None:
    """`a` for `a.b.c`: the name an attribute chain starts from."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def locked_names(nb: nbformat.NotebookNode) -> set[str]:
    """Names bound by imports in the cells a student does not answer (kv, selfcheck, pd...)."""
    names = {"kv", "selfcheck", "answers", "pd", "np"}
    for cell in nb.cells:
        if cell.cell_type != "code" or _meta(cell).get("solution"):
            continue
        try:
            tree = ast.parse("\n".join(l for l in cell.source.splitlines()
                                       if not l.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def mark_notebook(nb: nbformat.NotebookNode, key: dict) -> list[Mark]:
    """Every exercise of the key, marked from the autograded notebook `nb`: the record
    of its hidden test against the key, forbidden calls, and the static scan of the
    answer cells (an answer cell that mentions its own exercise's forbidden function
    scores 0 for it; other signs of tampering are flagged)."""
    modules = locked_names(nb)
    answers, marks, answer = {}, {}, None
    for cell in nb.cells:
        meta = _meta(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            answer = cell
        elif cell.cell_type == "code" and meta.get("grade_id") in key["exercises"]:
            answers[meta["grade_id"]] = answer
            marks[meta["grade_id"]] = mark_cell(cell, key["exercises"][meta["grade_id"]],
                                                key.get("setting"))
    result = []
    for grade_id, exercise in key["exercises"].items():
        mark = marks.get(grade_id) or Mark(grade_id, float(exercise["points"]), 0.0,
                                           ("the test cell is missing from the notebook",))
        cell = answers.get(grade_id)
        found = scan(cell.source, set(exercise["forbidden"]), modules) if cell is not None else []
        flags = mark.flags + tuple(f"answer cell {_meta(cell)['grade_id']}: {f}" for f in found)
        score = 0.0 if any("forbids" in f for f in found) else mark.score
        result.append(Mark(grade_id, mark.points, score, flags))
    return result
