"""What the authoring verbs share: the course's assignments and notebooks, a copy of the course,
a notebook answered right, and the release nbgrader makes.

`kvlesson build` (`kvlesson.authoring.build`), `kvlesson generate`
(`kvlesson.authoring.generate`) and `kvlesson for` (`kvlesson.authoring.course_for`) work on a
course root: the folder that holds nbgrader_config.py, the instructor notebooks in
solutions/<assignment>/, their student release in notebooks/ and the grader's keys in keys/.
This one is the repository the package is installed from (an editable install), `ROOT`.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import nbformat

from kvlesson.grading.course import gradebook
from kvlesson.grading.course.key import key_path
from kvlesson.grading.course.notebooks import answer_code, grade_id_of, meta

ROOT = Path(__file__).resolve().parents[2]  # the course repository: kvlesson/authoring/ is two down
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
RELEASE = "notebooks"  # a course root's student release (nbgrader_config.py's release folder)
COURSE_FILES = ("nbgrader_config.py",)  # what nbgrader reads in a course root


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


def chosen(names: list[str] | None, root: Path = ROOT) -> list[str]:
    """The assignments `names` (default: all), or a clear refusal naming the ones the course
    does not have and the ones it has."""
    known = assignments(root)
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        raise ValueError(
            f"no assignment {', '.join(unknown)} in {root / 'solutions'}; "
            f"the assignments are {', '.join(known)}"
        )
    return [name for name in known if not names or name in names]


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
    widget state is saved) and per-run metadata. Plain-text outputs stay, each stream whole
    (`whole_streams`)."""
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        for key in ("execution", "papermill"):
            cell.metadata.pop(key, None)
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
        if "outputs" in cell:
            cell.outputs = whole_streams(cell.outputs)
    return nb


def whole_streams(outputs: list) -> list:
    """A cell's outputs with each line of a stream whole: the kernel sends a print's text in
    as many pieces as its timer cuts it into (a busy machine cuts "Self-check passed." from
    its newline), and a stored notebook must not change with the machine's load. A piece
    that ends a line stays an output of its own, as the kernel sent it."""
    joined: list = []
    for output in outputs:
        before = joined[-1] if joined else None
        if (
            output.get("output_type") == "stream"
            and before is not None
            and before.get("output_type") == "stream"
            and before.get("name") == output.get("name")
            and not before["text"].endswith("\n")
        ):
            before["text"] += output["text"]
        else:
            joined.append(output)
    return joined


def release(root: Path, names: list[str] | None = None) -> None:
    """Regenerate the student notebooks from the instructor ones with nbgrader (--force,
    or nbgrader silently keeps a stale release), recording each in the gradebook."""
    gradebook.generate(root, names or assignments(root))
