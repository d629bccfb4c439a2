"""Build the course: execute the instructor notebooks, release the student ones.

    kvlesson build                  # after editing solutions/
    kvlesson build 02_ceiling       # only the assignments named
    kvlesson generate               # a new clone: every assignment in the gradebook
    kvlesson for --gpu H100_80GB --out course-h100
    kvlesson for --gpu L40S_48GB --model-config ~/Qwen2.5-1.5B/config.json

`build` runs every notebook in solutions/ in place (so its stored outputs are
what the code produces now), stamps the salted hashes of the expected answers
into its test cells (kvlesson.authoring.stamping), writes the grader's keys to keys/,
cleans the notebooks, and regenerates notebooks/ with nbgrader. `for` writes
the whole course, executed, for another card or model: each instructor
notebook runs with new parameters (papermill's injected cell), and nbgrader
releases student notebooks whose self-checks hold the answers for that
hardware, with keys for that hardware. Its output goes to a new folder (by default
~/kvlesson-for-GPU-MODEL), never into a student release folder such as notebooks/ (it holds
every answer), and appears only when it is whole.

Needs the course extra (nbclient, nbgrader, papermill).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

from kvlesson.authoring import stamping
from kvlesson.authoring.tables import tables_for
from kvlesson.grading.course import folders, gradebook
from kvlesson.grading.course.folders import Course
from kvlesson.grading.course.key import key_path, write_key
from kvlesson.grading.course.notebooks import answer_code, grade_id_of, meta

ROOT = Path(__file__).resolve().parents[2]  # the course repository: kvlesson/authoring/ is two down
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
RELEASE = "notebooks"  # a course root's student release (nbgrader_config.py's release folder)
MODEL_CONFIG = "model_config.json"  # beside each notebook of a course for a model's config
DEFAULT_OUT = "~/kvlesson-for-GPU-MODEL"  # where `kvlesson for` writes without --out


def assignments(root: Path = ROOT) -> list[str]:
    """The course's assignments, in order: the folders of solutions/."""
    if not (root / "solutions").is_dir():
        raise ValueError(
            f"no solutions/ folder in {root}: run this from a checkout of the "
            "course repository (pip install -e .)"
        )
    return sorted(
        p.name for p in (root / "solutions").iterdir() if p.is_dir() and not p.name.startswith(".")
    )


def notebook_paths(folder: Path) -> list[Path]:
    """Every notebook under `folder`, one per assignment, in course order."""
    return sorted(p for p in folder.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def has_exercises(name: str, root: Path = ROOT) -> bool:
    """Whether an assignment grades anything: False for a reading page (the closing page),
    whose release has no answer cell and no test to fail."""
    return any(
        meta(cell).get("grade")
        for path in notebook_paths(root / "solutions")
        if path.parent.name == name
        for cell in nbformat.read(path, as_version=4).cells
    )


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
        shutil.copytree(
            root / "solutions" / name,
            dest / "solutions" / name,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints"),
        )
        key = key_path(root, name)
        if key.is_file():
            key_path(dest, name).parent.mkdir(exist_ok=True)
            shutil.copy(key, key_path(dest, name))
    return dest


def answered(
    release: nbformat.NotebookNode, solution: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """The student notebook with every answer cell filled in as the instructor's version
    answers it (matched by nbgrader grade id, solution markers removed): a student who
    gets everything right."""
    answers = {
        grade_id_of(cell): answer_code(cell.source)
        for cell in solution.cells
        if meta(cell).get("solution")
    }
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


def execute(
    path: Path, root: Path, parameters: dict | None = None, target: Path | None = None
) -> None:
    """Run one instructor notebook top to bottom in its own folder (with `parameters`
    injected as papermill does, if any), stamp its self-checks, store it cleaned at
    `target` (default: in place), and write its key into the course root `root`."""
    nb = nbformat.read(path, as_version=4)
    if parameters:
        from papermill.iorw import load_notebook_node
        from papermill.parameterize import parameterize_notebook

        nb = parameterize_notebook(
            load_notebook_node(str(path)), parameters, kernel_name="python3", language="python"
        )
    assignment = path.parent.name
    # the probes are searched for the course's own setting, in the build; a course for
    # other hardware keeps them (its self-checks hold that setting's answers)
    # in the folder the notebook is stored in: a course for a model's config.json finds it there
    key = stamping.execute_and_stamp(nb, (target or path).parent, assignment, search=not parameters)
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        cell.execution_count = count  # the stamping runs extra code between cells
        for output in cell.outputs:
            if "execution_count" in output:
                output["execution_count"] = count
    nbformat.write(clean(nb), target or path)
    key.update(
        tables_for(
            [c.source for c in nb.cells if c.cell_type == "code"],
            key_path(path.parents[2], assignment) if parameters else None,
        )
    )
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
        raise ValueError(
            f"no assignment {', '.join(unknown)} in solutions/; "
            f"the assignments are {', '.join(known)}"
        )
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
        raise ValueError(
            f"no assignment {', '.join(unknown)} in {root / 'solutions'}; "
            f"the assignments are {', '.join(known)}"
        )
    course_ = Course(root, config)
    made = gradebook.record_assignments(course_, names or known)
    kept = [name for name in names or known if name not in made]
    lines = [f"recorded in {course_.database()}: {', '.join(made)}"] if made else []
    lines += [f"already recorded, left as they are: {', '.join(kept)}"] if kept else []
    return "\n".join(lines)


def served_release(path: Path) -> Path | None:
    """The student release folder that holds `path` (a course root's notebooks/, which a
    student's JupyterLab serves), or None."""
    path = Path(path).resolve()
    for folder in (path, *path.parents):
        if folder.name == RELEASE and (folder.parent / "nbgrader_config.py").is_file():
            return folder
    return None


def default_out(
    gpu: str, model: str, share: int | None, longest: int | None, cap: int | None
) -> Path:
    """Where `kvlesson for` writes when no --out is given: a folder of the home folder named
    after the setting, outside any course."""
    if model.endswith(".json"):  # a config.json: named after its folder
        model = Path(model).expanduser().resolve().parent.name or "model"
    parts = [gpu, model]
    parts += [
        f"{name}{value}"
        for name, value in (("share", share), ("longest", longest), ("cap", cap))
        if value is not None
    ]
    return Path.home() / ("kvlesson-for-" + "-".join(parts))


def check_out(out: Path) -> Path:
    """`out` made absolute, or a clear refusal: a folder with files in it, or one inside a
    student release folder (the course for a card holds solutions/ and keys/, every answer)."""
    out = Path(out).expanduser().resolve()
    release = served_release(out)
    if release is not None:
        raise ValueError(
            f"out {out} is inside {release}, the student notebooks a student's "
            f"JupyterLab serves, and the course for a card holds every answer "
            f"(solutions/, keys/): give a folder outside it, such as "
            f"~/my-course, or leave --out out (it then goes to {DEFAULT_OUT})"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"out must be a new or empty folder, got {out} with files in it")
    return out


def programs_first() -> None:
    """This Python's programs first on PATH: nbgrader runs `alembic` by name, and a notebook's
    `!` line in a JupyterLab whose PATH lacks them would not find it."""
    programs = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != programs:
        os.environ["PATH"] = os.pathsep.join([programs, path])


def model_parameter(model: str | None, config: Path | None) -> tuple[str, dict | None]:
    """The MODEL parameter of the notebooks and, for a model's config.json, the config to put
    beside each notebook (named after its folder when it names no model): a name of the
    package's, or MODEL_CONFIG."""
    if config is None:
        return model or "LLAMA_31_8B", None
    config = Path(config).expanduser()
    try:
        body = json.loads(config.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(
            f"model-config {config} cannot be read as a config.json: {error}"
        ) from error
    if not isinstance(body, dict):
        raise ValueError(f"model-config {config} holds no JSON object: not a config.json")
    body.setdefault("_name_or_path", config.resolve().parent.name)
    return MODEL_CONFIG, body


def course_for(
    out: Path | None,
    gpu: str,
    model: str = "LLAMA_31_8B",
    share: int | None = None,
    longest: int | None = None,
    cap: int | None = None,
    root: Path = ROOT,
    model_config: Path | None = None,
    names: list[str] | None = None,
) -> Path:
    """Write the course for other hardware into `out` (default: a new folder of the home
    folder named after the setting): executed instructor notebooks in out/solutions, and the
    student release in out/notebooks; the assignments `names` only, if given. The model is a
    name of the package's or, with `model_config`, a Hugging Face config.json, which each
    notebook then reads from beside it. Nothing is written into a student release folder,
    and `out` appears only when it is whole: a run that fails leaves nothing behind."""
    from nbclient.exceptions import CellExecutionError

    from kvlesson.memory.floor import check_starts, memory_parts
    from kvlesson.memory.specs import Model, gpu as find_gpu, model as find_model
    from kvlesson.serving.settings import LESSON_LONGEST, LESSON_SHARE

    parameter, config = model_parameter(model, model_config)
    chosen = Model.from_hf_config(config) if config else find_model(parameter)
    # A clear error for a wrong name, a share out of range, or a setting where the server
    # cannot start (the notebooks serve at it), before any work. ServerWontStart is a
    # ValueError; the defaults are the notebooks' (their parameters cells).
    check_starts(
        memory_parts(LESSON_SHARE if share is None else share, find_gpu(gpu), chosen),
        LESSON_LONGEST if longest is None else longest,
    )
    known = assignments(root)
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        raise ValueError(
            f"no assignment {', '.join(unknown)} in {root / 'solutions'}; "
            f"the assignments are {', '.join(known)}"
        )
    out = check_out(
        default_out(gpu, str(model_config or parameter), share, longest, cap)
        if out is None
        else out
    )
    programs_first()
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        for name in COURSE_FILES:
            shutil.copy(root / name, work / name)
        parameters = {"GPU": gpu, "MODEL": parameter}
        parameters.update(
            {
                k: v
                for k, v in (("SHARE", share), ("LONGEST", longest), ("CAP", cap))
                if v is not None
            }
        )
        for source in notebook_paths(root / "solutions"):
            if names and source.parent.name not in names:
                continue
            target = work / "solutions" / source.parent.name / source.name
            target.parent.mkdir(parents=True)
            if config:
                (target.parent / MODEL_CONFIG).write_text(json.dumps(config, indent=1))
            print(f"executing {target.relative_to(work)} with {parameters}", flush=True)
            try:
                execute(source, work, parameters, target)
            except CellExecutionError as error:
                raise RuntimeError(
                    f"{source.relative_to(root)} stops with {parameters}: "
                    f"{error}\nNothing was written to {out}."
                ) from error
        print("releasing with nbgrader", flush=True)
        release(work, assignments(work))
        if out.exists():
            out.rmdir()  # empty (check_out)
        os.rename(work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"the course for {gpu} and {chosen.name}: {out} (the student release in "
        f"{out / RELEASE}, the instructor notebooks and keys beside it); open its notebooks "
        f"with: cd {out} && {sys.executable} -m kvlesson open"
    )
    return out


def build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="*",
        metavar="ASSIGNMENT",
        help="only these assignments (folders of solutions/); default: all",
    )


def build_run(args: argparse.Namespace) -> int:
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    build(names=args.names)
    return 0


def generate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "record the assignments in the gradebook, as nbgrader's "
        "generate_assignment does (nothing executed): in a new clone, before "
        "the first release; an assignment already recorded is left as it is"
    )
    parser.add_argument(
        "names", nargs="*", metavar="ASSIGNMENT", help="only these assignments; default: all"
    )
    parser.add_argument(
        "--course",
        type=Path,
        metavar="ROOT",
        help="the course root (default: found as nbgrader finds it)",
    )


def generate_run(args: argparse.Namespace) -> int:
    print(record(Path.cwd(), args.names, args.course))
    return 0


def for_arguments(parser: argparse.ArgumentParser) -> None:
    from kvlesson.memory.specs import GPUS, MODELS

    parser.add_argument(
        "names",
        nargs="*",
        metavar="ASSIGNMENT",
        help="only these assignments (a quick try); default: all",
    )
    parser.add_argument(
        "--gpu", required=True, choices=list(GPUS), metavar="GPU", help="the card (the list below)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--model",
        choices=list(MODELS),
        metavar="MODEL",
        help="the model (the list below; default LLAMA_31_8B)",
    )
    which.add_argument(
        "--model-config",
        type=Path,
        metavar="PATH",
        help="a model of your own: its Hugging Face config.json (Llama, Mistral, "
        "Qwen2 and Qwen3 decoders), which each notebook then reads",
    )
    parser.add_argument("--share", type=int, help="memory share, percent")
    parser.add_argument("--longest", type=int, help="longest chat, tokens")
    parser.add_argument("--cap", type=int, help="most chats at once")
    parser.add_argument(
        "--out",
        type=Path,
        help=f"a new folder for the course, outside any student release "
        f"folder (default: {DEFAULT_OUT})",
    )


def for_run(args: argparse.Namespace) -> int:
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    course_for(
        args.out,
        args.gpu,
        args.model,
        args.share,
        args.longest,
        args.cap,
        model_config=args.model_config,
        names=args.names,
    )
    return 0
