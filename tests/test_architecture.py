"""The package's layout as rules (docs/architecture.md), read from the imports.

kvlesson has four wings, each a subpackage, in layers: the model's `memory` and
`serving`, the `lesson` (what the notebooks show) and `grading` (the course's
machinery), with `arguments` (checks on what a caller passes in) under them all. A
module may import its own wing and the wings below it, never one above; the package
root and the commands' entry modules sit on top. No import circle, at any depth.
Imports are read as code (`ast`), at the top of a module and inside its functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support.paths import ROOT

PACKAGE = ROOT / "kvlesson"
# Each wing and what it may import besides itself: lower layers only.
LAYERS = ["kvlesson.arguments", "kvlesson.memory", "kvlesson.serving", "kvlesson.lesson",
          "kvlesson.grading"]
ROOT = "kvlesson"  # the package's __init__: `import kvlesson as kv`, the model's public names
ENTRIES = {"kvlesson.__main__", "kvlesson.grade", "kvlesson.course", "kvlesson.student",
           "kvlesson.box"}  # the commands' addresses: on top, imported by nothing


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The kvlesson modules a file imports, wherever the import statement stands:
    `from kvlesson.lesson import quote` imports the module kvlesson.lesson.quote."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == ROOT}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == ROOT:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
    return found


def import_map() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, set(known)) for name, path in known.items()}


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the wing `module` belongs to (None: the root or an entry)."""
    for index, wing in enumerate(LAYERS):
        if module == wing or module.startswith(wing + "."):
            return index
    return None


def broken_rules(imports: dict[str, set[str]]) -> list[str]:
    """Every import that goes up a layer, reaches an entry module, or reaches the package
    root from a wing below grading (the root imports the model: a circle)."""
    broken = []
    for module, targets in sorted(imports.items()):
        mine = layer_of(module)
        for target in sorted(targets):
            theirs = layer_of(target)
            if target in ENTRIES:
                broken.append(f"{module} imports the command entry {target}")
            elif mine is None:
                continue  # the root and the entries may use every wing
            elif theirs is None and mine < LAYERS.index("kvlesson.grading"):
                broken.append(f"{module} imports the package root {target}")
            elif theirs is not None and theirs > mine:
                broken.append(f"{module} ({LAYERS[mine]}) imports {target} ({LAYERS[theirs]})")
    return broken


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Import circles among the modules (a subpackage counts as the module of its
    __init__), found by a depth-first walk."""
    found, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(imports.get(module, ())):
            if state.get(target) == "open":
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(imports):
        if module not in state:
            visit(module, [module])
    return found


def test_every_module_belongs_to_a_wing_or_is_an_entry():
    stray = [name for name in modules() if layer_of(name) is None
             and name not in ENTRIES and name != ROOT]
    assert not stray, f"modules outside the wings (see docs/architecture.md): {stray}"


def test_each_wing_says_what_it_is_and_what_it_may_import():
    for wing in LAYERS[1:]:
        doc = ast.get_docstring(ast.parse(modules()[wing].read_text())) or ""
        assert "May import" in doc, f"{wing}/__init__.py must say what the wing may import"


def test_no_wing_imports_a_wing_above_it():
    assert broken_rules(import_map()) == []


def test_no_import_circle():
    assert circles(import_map()) == []


@pytest.mark.parametrize("imports, problem", [
    ({"kvlesson.memory.floor": {"kvlesson.lesson.quote"}}, "memory.floor (kvlesson.memory)"),
    ({"kvlesson.serving.server": {"kvlesson.grading.selfcheck"}}, "serving.server"),
    ({"kvlesson.lesson.charts": {"kvlesson.grading.probes"}}, "lesson.charts"),
    ({"kvlesson.memory.specs": {"kvlesson"}}, "the package root"),
    ({"kvlesson.grading.marking": {"kvlesson.grade"}}, "command entry"),
])
def test_the_rules_catch_a_wrong_import(imports, problem):
    assert any(problem in line for line in broken_rules(imports))


def test_the_circle_check_finds_a_circle():
    imports = {"kvlesson.serving.a": {"kvlesson.serving.b"},
               "kvlesson.serving.b": {"kvlesson.serving.c"},
               "kvlesson.serving.c": {"kvlesson.serving.a"}}
    assert circles(imports) == [["kvlesson.serving.a", "kvlesson.serving.b",
                                 "kvlesson.serving.c", "kvlesson.serving.a"]]


def test_the_reader_sees_imports_inside_functions(tmp_path):
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from kvlesson.lesson import quote\n    import kvlesson.grading\n")
    assert imports_of(source, {"kvlesson.lesson.quote"}) == {"kvlesson.lesson.quote",
                                                            "kvlesson.grading"}


def test_the_architecture_page_names_every_module():
    """docs/architecture.md draws the tree: a module it does not name is a drifted page."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    missing = [path.relative_to(PACKAGE).as_posix() for path in sorted(PACKAGE.rglob("*.py"))
               if path.name != "__init__.py" and path.parent.name != "box"
               and path.name not in page]
    assert not missing, f"docs/architecture.md does not name {missing}"
