"""The package's layout as rules (docs/architecture.md), read from the imports.

kvlesson has six wings, each a subpackage with a one-line rule of what it may import
(WINGS): the model's `memory` and `serving`, the `lesson` (what the notebooks show),
`grading` (what grades a class), `authoring` (what makes a release: `kvlesson build`, `for`)
and `delivery` (what reaches a student: the website, the student's JupyterLab), with
`arguments` (checks on what a caller passes in) under them all. The package root, the one
command (`kvlesson.cli`) and `__main__` sit on top. Inside `grading`, sub-wings by role and
by where the code runs stand on floors of their own (GRADING): each may import itself and
the sub-wings its row names, nothing else of the wing. No import circle, at any depth.
Imports are read as code (`ast`), at the top of a module and inside its functions. No
folder of the package or the tests has a name that a tool skips (pytest's `norecursedirs`:
`build`, `dist`, `venv`, a leading dot, ...).
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

from support.paths import ROOT

PACKAGE = ROOT / "kvlesson"
TESTS = ROOT / "tests"
ROOT = "kvlesson"  # the package's __init__: `import kvlesson as kv`, the model's public names
MODEL = {"arguments", "memory", "serving", "lesson"}
# Each wing, and what it may import besides itself: a wing, one sub-wing of grading
# ("grading.checks"), or the package root ("kvlesson", whose names load the model on first use).
WINGS: dict[str, set[str]] = {
    "arguments": set(),
    "memory": {"arguments"},
    "serving": {"arguments", "memory"},
    "lesson": {"arguments", "memory", "serving"},
    "grading": MODEL | {ROOT},
    "authoring": MODEL | {ROOT, "grading.checks", "grading.course"},
    "delivery": MODEL | {ROOT, "grading.course", "authoring"},
}
COMMAND = "kvlesson.cli"  # the one command, `kvlesson VERB`: imported by the entry only
ENTRIES = {"kvlesson.__main__"}  # `python -m kvlesson VERB`: on top, imported by nothing
# The grading wing's sub-wings and what each may import of the wing besides itself, lowest
# first (docs/architecture.md's table): what runs in the student's kernel, the course on disk
# (the ground floor), the box, the marking (pure), the exchange, the class report, the grade
# command.
GRADING = {
    "checks": set(),
    "course": set(),
    "box": {"checks", "course"},
    "marking": {"checks", "course"},
    "exchange": {"course"},
    "report": {"course", "marking"},
    "grade": {"course", "box", "marking", "report"},
}
# Folder names that pytest (its default `norecursedirs`), packagers and editors' watchers skip.
SKIPPED_BY_TOOLS = [
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
]


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
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == ROOT
        ):
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
    return found


def import_map() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, set(known)) for name, path in known.items()}


def wing_of(module: str) -> str | None:
    """The wing `module` belongs to (None: the root, the command or an entry)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else None


def sub_wing(module: str) -> str | None:
    """The grading sub-wing `module` belongs to (None: not in the grading wing's sub-wings)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["kvlesson", "grading"] else None


def allowed(module: str, target: str) -> bool:
    """Whether `module`'s wing may import `target` (WINGS; GRADING inside the grading wing)."""
    mine, theirs = wing_of(module), wing_of(target)
    rule = WINGS[mine]
    if theirs is None:
        return target == ROOT and ROOT in rule
    if theirs == mine:
        inside = sub_wing(module), sub_wing(target)
        return None in inside or inside[1] in GRADING[inside[0]] | {inside[0]}
    return theirs in rule or (theirs == "grading" and f"grading.{sub_wing(target)}" in rule)


def broken_rules(imports: dict[str, set[str]]) -> list[str]:
    """Every import against the rules: one that reaches the entry, or the one command from
    anything but the entry, or crosses from a wing to what its rule (WINGS) does not name, or
    between grading's sub-wings against GRADING."""
    broken = []
    for module, targets in sorted(imports.items()):
        for target in sorted(targets):
            if target in ENTRIES:
                broken.append(f"{module} imports the command entry {target}")
            elif target == COMMAND and module not in ENTRIES:
                broken.append(f"{module} imports the one command {COMMAND}")
            elif wing_of(module) is None or allowed(module, target):
                continue  # the root, the command and the entry may use every wing
            elif wing_of(module) == wing_of(target) == "grading":
                broken.append(
                    f"{module} (grading/{sub_wing(module)}) imports {target} "
                    f"(grading/{sub_wing(target)})"
                )
            else:
                broken.append(
                    f"{module} ({wing_of(module)}) imports {target} "
                    f"({wing_of(target) or 'the package root'})"
                )
    return broken


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Import circles among the modules (a subpackage counts as the module of its
    __init__), found by a depth-first walk."""
    found, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(imports.get(module, ())):
            if state.get(target) == "open":
                found.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(imports):
        if module not in state:
            visit(module, [module])
    return found


def test_every_module_belongs_to_a_wing_or_is_an_entry():
    stray = [
        name
        for name in modules()
        if wing_of(name) is None and name not in ENTRIES | {COMMAND, ROOT}
    ]
    assert not stray, f"modules outside the wings (see docs/architecture.md): {stray}"


def test_every_grading_module_belongs_to_a_sub_wing():
    stray = [
        name
        for name in modules()
        if name.startswith("kvlesson.grading.") and sub_wing(name) not in GRADING
    ]
    assert not stray, f"grading modules outside its sub-wings (docs/architecture.md): {stray}"


def test_each_wing_says_what_it_is_and_what_it_may_import():
    wings = [f"kvlesson.{wing}" for wing in WINGS if wing != "arguments"] + [
        f"kvlesson.grading.{name}"
        for name in GRADING
        if f"kvlesson.grading.{name}" in modules()
        and modules()[f"kvlesson.grading.{name}"].name == "__init__.py"
    ]
    for wing in wings:
        doc = ast.get_docstring(ast.parse(modules()[wing].read_text())) or ""
        assert "May import" in doc, f"{wing}/__init__.py must say what the wing may import"


def test_the_grading_floors_are_a_few_and_none_goes_up():
    """The sub-wings' rules put them on floors: none imports one on its own floor or above."""
    floor: dict[str, int] = {}
    while len(floor) < len(GRADING):
        for name, below in GRADING.items():
            if name not in floor and below <= set(floor):
                floor[name] = 1 + max((floor[b] for b in below), default=-1)
    assert max(floor.values()) <= 4, floor  # five floors at most: 0 to 4


def test_no_wing_imports_a_wing_above_it():
    assert broken_rules(import_map()) == []


def test_no_import_circle():
    assert circles(import_map()) == []


@pytest.mark.parametrize(
    "imports, problem",
    [
        ({"kvlesson.memory.floor": {"kvlesson.lesson.quote"}}, "memory.floor (memory)"),
        ({"kvlesson.serving.server": {"kvlesson.grading.checks.selfcheck"}}, "serving.server"),
        ({"kvlesson.lesson.charts": {"kvlesson.grading.checks.probes"}}, "lesson.charts"),
        ({"kvlesson.memory.specs": {"kvlesson"}}, "the package root"),
        ({"kvlesson.grading.marking.marks": {"kvlesson.__main__"}}, "command entry"),
        ({"kvlesson.grading.grade.command": {"kvlesson.cli"}}, "the one command"),
        ({"kvlesson.grading.report.page": {"kvlesson.grading.grade.store"}}, "(grading/grade)"),
        ({"kvlesson.grading.marking.marks": {"kvlesson.authoring.mutants"}}, "(authoring)"),
        ({"kvlesson.authoring.command": {"kvlesson.grading.box.walls"}}, "(grading)"),
        ({"kvlesson.authoring.command": {"kvlesson.delivery.site.pages"}}, "(delivery)"),
        ({"kvlesson.grading.grade.command": {"kvlesson.delivery.lab"}}, "(delivery)"),
        ({"kvlesson.delivery.site.pages": {"kvlesson.grading.marking.marks"}}, "(grading)"),
        (
            {"kvlesson.grading.course.folders": {"kvlesson.grading.checks.probes"}},
            "(grading/checks)",
        ),
        (
            {"kvlesson.grading.checks.selfcheck": {"kvlesson.grading.course.key"}},
            "(grading/course)",
        ),
    ],
)
def test_the_rules_catch_a_wrong_import(imports, problem):
    assert any(problem in line for line in broken_rules(imports))


def test_the_circle_check_finds_a_circle():
    imports = {
        "kvlesson.serving.a": {"kvlesson.serving.b"},
        "kvlesson.serving.b": {"kvlesson.serving.c"},
        "kvlesson.serving.c": {"kvlesson.serving.a"},
    }
    assert circles(imports) == [
        ["kvlesson.serving.a", "kvlesson.serving.b", "kvlesson.serving.c", "kvlesson.serving.a"]
    ]


def test_the_reader_sees_imports_inside_functions(tmp_path):
    source = tmp_path / "late.py"
    source.write_text(
        "def f():\n    from kvlesson.lesson import quote\n    import kvlesson.grading\n"
    )
    assert imports_of(source, {"kvlesson.lesson.quote"}) == {
        "kvlesson.lesson.quote",
        "kvlesson.grading",
    }


def tree_paths(page: str) -> set[str]:
    """The files the architecture page's tree draws, as paths below kvlesson/: each name in
    the tree's first column, under the folders above it (two spaces a level)."""
    block = page.split("```text\n", 1)[1].split("```", 1)[0]
    folders: list[str] = []
    found = set()
    for line in block.splitlines()[1:]:  # the first line is kvlesson/ itself
        indent = (len(line) - len(line.lstrip())) // 2 - 1
        words = line.strip().split("  ")[0]
        if not words or indent < 0:
            continue
        del folders[indent:]
        if words.endswith("/"):
            folders.append(words.rstrip("/"))
        else:
            found |= {
                "/".join([*folders, name.strip()])
                for name in words.split(",")
                if name.strip().endswith(".py")
            }
    return found


def test_the_architecture_page_draws_every_module_where_it_is():
    """docs/architecture.md draws the tree: a module it does not draw in its folder, or a file
    it draws that is not there, is a drifted page."""
    drawn = tree_paths((PACKAGE.parent / "docs" / "architecture.md").read_text())
    there = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py") or path.parent == PACKAGE
    }
    there.discard("__init__.py")
    assert there - drawn == set(), f"docs/architecture.md does not draw {sorted(there - drawn)}"
    gone = {path for path in drawn if not (PACKAGE / path).is_file()}
    assert gone == set(), f"docs/architecture.md draws files that are not there: {sorted(gone)}"


def test_the_tree_reader_follows_the_folders():
    page = (
        "```text\nkvlesson/\n  a.py    x\n  w/\n    b.py  y\n    s/\n      c.py\n  d.py, e.py\n```"
    )
    assert tree_paths(page) == {"a.py", "w/b.py", "w/s/c.py", "d.py", "e.py"}


def test_the_rules_let_each_wing_import_what_its_rule_names():
    fine = {
        "kvlesson.authoring.stamping": {"kvlesson.grading.checks.probes", "kvlesson.serving.sweep"},
        "kvlesson.delivery.site.pages": {"kvlesson.authoring.stamp_places", "kvlesson"},
        "kvlesson.grading.grade.worker": {"kvlesson.grading.box.launch", "kvlesson.lesson.charts"},
        "kvlesson.cli": {"kvlesson.delivery.lab", "kvlesson.grading.grade.command"},
    }
    assert broken_rules(fine) == []


def skipped_folders(top: Path) -> list[str]:
    """Folders under `top` whose names a tool skips (SKIPPED_BY_TOOLS, pytest's own setting)."""
    return [
        folder.relative_to(top.parent).as_posix()
        for folder in top.rglob("*")
        if folder.is_dir()
        and folder.name != "__pycache__"
        and any(fnmatch.fnmatch(folder.name, pattern) for pattern in SKIPPED_BY_TOOLS)
    ]


def test_no_folder_of_the_package_or_the_tests_is_one_a_tool_skips(pytestconfig):
    assert set(pytestconfig.getini("norecursedirs")) <= set(SKIPPED_BY_TOOLS)
    assert skipped_folders(PACKAGE) + skipped_folders(TESTS) == []


def test_the_skipped_folder_check_finds_one(tmp_path):
    (tmp_path / "pkg" / "grading" / "build").mkdir(parents=True)
    (tmp_path / "pkg" / "node_modules").mkdir()
    (tmp_path / "pkg" / "release").mkdir()
    assert sorted(skipped_folders(tmp_path / "pkg")) == ["pkg/grading/build", "pkg/node_modules"]
