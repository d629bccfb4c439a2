"""Build the course: execute the instructor notebooks, release the student ones.

    kvlesson build                  # after editing solutions/
    kvlesson build 02_ceiling       # only the assignments named
    kvlesson generate               # a new clone: every assignment in the gradebook
    kvlesson for --gpu H100_80GB --out course-h100

`build` runs every notebook in solutions/ in place (so its stored outputs are
what the code produces now), stamps the salted hashes of the expected answers
into its test cells (kvlesson.grading.build.stamping), writes the grader's keys to keys/,
cleans the notebooks, and regenerates notebooks/ with nbgrader. `for` writes
the whole course, executed, for another card or model: each instructor
notebook runs with new parameters (papermill's injected cell), and nbgrader
releases student notebooks whose self-checks hold the answers for that
hardware, with keys for that hardware.

Needs the course extra (nbclient, nbgrader, papermill).
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
from pathlib import Path

import nbformat

from kvlesson.grading.build import stamping
from kvlesson.grading.build.tables import tables_for
from kvlesson.grading.course import folders, gradebook
from kvlesson.grading.course.folders import Course
from kvlesson.grading.course.key import key_path, write_key
from kvlesson.grading.course.notebooks import answer_code, grade_id_of, meta

ROOT = Path(__file__).resolve().parents[3]  # the course repository: this file is three down
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def assignments(root: Path = ROOT) -> list[str]:
    """The course's assignments, in order: the folders of solutions/."""
    if not (root / "solutions").is_dir():
        raise ValueError(f"no solutions/ folder in {root}: run this from a checkout of the "
                         "course repository (pip install -e .)")
    return sorted(p.name for p in (root / "solutions").iterdir() if p.is_dir()
                  and not p.name.startswith("."))


def notebook_paths(folder: Path) -> list[Path]:
    """Every notebook under `folder`, one per assignment, in course order."""
    return sorted(p for p in folder.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def has_exercises(name: str, root: Path = ROOT) -> bool:
    """Whether an assignment grades anything: False for a reading page (the closing page),
    whose release has no answer cell and no test to fail."""
    return any(meta(cell).get("grade")
               for path in notebook_paths(root / "solutions") if path.parent.name == name
               for cell in nbformat.read(path, as_version=4).cells)


COURSE_FILES = ("nbgrader_config.py",)  # what nbgrader reads in a course root


def copy_course(dest: Path, names: list[str] | None = None, root: Path = ROOT) -> Path:
    """A new nbgrader course root at `dest`: the configuration, the instructor notebooks
    of the assignments `names` (default: all) and their grading keys, for nbgrader to
    release or grade elsewhere than in this repository."""
    dest = Path(dest)
    (dest / "solutions").mkdir(parents=True, exist_ok=True)
    for name in COURSE_FILES:
        shutil.copy(root / name, dest / name)
    for name in names or assignments(root):
        shutil.copytree(root / "solutions" / name, dest / "solutions" / name,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        key = key_path(root, name)
        if key.is_file():
            key_path(dest, name).parent.mkdir(exist_ok=True)
            shutil.copy(key, key_path(dest, name))
    return dest


def answered(release: nbformat.NotebookNode,
             solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student notebook with every answer cell filled in as the instructor's version
    answers it (matched by nbgrader grade id, solution markers removed): a student who
    gets everything right."""
    answers = {grade_id_of(cell): answer_code(cell.source)
               for cell in solution.cells if meta(cell).get("solution")}
    filled = copy.deepcopy(release)
    for cell in filled.cells:
        if meta(cell).get("solution"):
            cell.source = answers[grade_id_of(cell)]
    return filled


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop what must not be stored: widget views (their model ids are random and no
    widget state is saved) and per-run metadata. Plain-text outputs stay."""
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        for key in ("execution", "papermill"):
            cell.metadata.pop(key, None)
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    return nb


def execute(path: Path, root: Path, parameters: dict | None = None,
            target: Path | None = None) -> None:
    """Run one instructor notebook top to bottom in its own folder (with `parameters`
    injected as papermill does, if any), stamp its self-checks, store it cleaned at
    `target` (default: in place), and write its key into the course root `root`."""
    nb = nbformat.read(path, as_version=4)
    if parameters:
        from papermill.iorw import load_notebook_node
        from papermill.parameterize import parameterize_notebook
        nb = parameterize_notebook(load_notebook_node(str(path)), parameters,
                                   kernel_name="python3", language="python")
    assignment = path.parent.name
    # the probes are searched for the course's own setting, in the build; a course for
    # other hardware keeps them (its self-checks hold that setting's answers)
    key = stamping.execute_and_stamp(nb, path.parent, assignment, search=not parameters)
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        cell.execution_count = count  # the stamping runs extra code between cells
        for output in cell.outputs:
            if "execution_count" in output:
                output["execution_count"] = count
    nbformat.write(clean(nb), target or path)
    key.update(tables_for([c.source for c in nb.cells if c.cell_type == "code"],
                          key_path(path.parents[2], assignment) if parameters else None))
    write_key(key_path(root, assignment), key)


def release(root: Path, names: list[str] | None = None) -> None:
    """Regenerate the student notebooks from the instructor ones with nbgrader (--force,
    or nbgrader silently keeps a stale release), recording each in the gradebook."""
    gradebook.generate(root, names or assignments(root))


def build(root: Path = ROOT, names: list[str] | None = None) -> None:
    """Execute the instructor notebooks of `names` (default: every assignment) in place,
    then regenerate their release."""
    known = assignments(root)
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        raise ValueError(f"no assignment {', '.join(unknown)} in solutions/; "
                         f"the assignments are {', '.join(known)}")
    for path in notebook_paths(root / "solutions"):
        if names and path.parent.name not in names:
            continue
        print(f"executing {path.relative_to(root)}")
        execute(path, root)
    print("releasing with nbgrader")
    release(root, names)


def record(start: Path, names: list[str], course: Path | None = None) -> str:
    """Record `names` (default: every assignment) in the gradebook of the course root found
    from `start` (or `course`), the way `nbgrader generate_assignment` records them, so that
    the formgrader's Release never hands out an assignment nbgrader cannot grade. Safe to
    run again: an assignment already recorded is left alone. What was done, in words."""
    root, config = folders.course_root(start, course)
    known = assignments(root)
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"no assignment {', '.join(unknown)} in {root / 'solutions'}; "
                         f"the assignments are {', '.join(known)}")
    course_ = Course(root, config)
    made = gradebook.record_assignments(course_, names or known)
    kept = [name for name in names or known if name not in made]
    lines = [f"recorded in {course_.database()}: {', '.join(made)}"] if made else []
    lines += [f"already recorded, left as they are: {', '.join(kept)}"] if kept else []
    return "\n".join(lines)


def course_for(out: Path, gpu: str, model: str, share: int | None = None,
               longest: int | None = None, cap: int | None = None, root: Path = ROOT) -> Path:
    """Write the course for other hardware into `out`: executed instructor notebooks in
    out/solutions, and the student release in out/notebooks."""
    from nbclient.exceptions import CellExecutionError

    from kvlesson.memory.floor import check_starts, memory_parts
    from kvlesson.memory.specs import gpu as find_gpu, model as find_model
    from kvlesson.serving.server import LESSON_LONGEST, LESSON_SHARE
    # A clear error for a wrong name, a share out of range, or a setting where the server
    # cannot start (the notebooks serve at it), before any work. ServerWontStart is a
    # ValueError; the defaults are the notebooks' (their parameters cells).
    check_starts(memory_parts(LESSON_SHARE if share is None else share, find_gpu(gpu),
                              find_model(model)), LESSON_LONGEST if longest is None else longest)
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"out must be a new or empty folder, got {out} with files in it")
    out.mkdir(parents=True, exist_ok=True)
    for name in COURSE_FILES:
        shutil.copy(root / name, out / name)
    parameters = {"GPU": gpu, "MODEL": model}
    parameters.update({k: v for k, v in (("SHARE", share), ("LONGEST", longest), ("CAP", cap))
                       if v is not None})
    for source in notebook_paths(root / "solutions"):
        target = out / "solutions" / source.parent.name / source.name
        target.parent.mkdir(parents=True)
        print(f"executing {target.relative_to(out)} with {parameters}")
        try:
            execute(source, out, parameters, target)
        except CellExecutionError as error:
            raise RuntimeError(f"{source.relative_to(root)} stops with {parameters}: {error}\n"
                               f"Remove {out} before running again.") from error
    print("releasing with nbgrader")
    release(out, assignments(out))
    return out


def build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="ASSIGNMENT",
                        help="only these assignments (folders of solutions/); default: all")


def build_run(args: argparse.Namespace) -> int:
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    build(names=args.names)
    return 0


def generate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("record the assignments in the gradebook, as nbgrader's "
                          "generate_assignment does (nothing executed): in a new clone, before "
                          "the first release; an assignment already recorded is left as it is")
    parser.add_argument("names", nargs="*", metavar="ASSIGNMENT",
                        help="only these assignments; default: all")
    parser.add_argument("--course", type=Path, metavar="ROOT",
                        help="the course root (default: found as nbgrader finds it)")


def generate_run(args: argparse.Namespace) -> int:
    print(record(Path.cwd(), args.names, args.course))
    return 0


def for_arguments(parser: argparse.ArgumentParser) -> None:
    from kvlesson.memory.specs import GPUS, MODELS

    parser.add_argument("--gpu", required=True, choices=list(GPUS), metavar="GPU",
                        help="the card (the list below)")
    parser.add_argument("--model", default="LLAMA_31_8B", choices=list(MODELS), metavar="MODEL",
                        help="the model (the list below; default LLAMA_31_8B)")
    parser.add_argument("--share", type=int, help="memory share, percent")
    parser.add_argument("--longest", type=int, help="longest chat, tokens")
    parser.add_argument("--cap", type=int, help="most chats at once")
    parser.add_argument("--out", required=True, type=Path, help="a new folder for the course")


def for_run(args: argparse.Namespace) -> int:
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    course_for(args.out, args.gpu, args.model, args.share, args.longest, args.cap)
    return 0
