"""The course for other hardware: `kvlesson for ...` end to end.

The one-line command papermills every instructor notebook with new
parameters and releases the student notebooks with nbgrader. This module
runs it in subprocesses, two at once:

* `kvlesson for --gpu H100_80GB --share 50 --out ...`, the
  whole course, as a user would type it: another card and another share;
* `course_for(out, "A100_40GB", "QWEN25_7B", root=...)`, the same function on
  a copy of the repository holding the first three assignments only (the
  last two take most of the time): a smaller card and another model.

Then, in every executed notebook, the sentences and tables the notebook shows
must be exactly what kvlesson computes for those settings (the same
kvlesson.lesson.sentences and kvlesson.lesson.tables calls, made here), and none of them may be
among the default run's stored outputs in solutions/ (so nothing is typed in).
The student release must exist, hold no solutions and no outputs, and its
hashed self-checks must hold the answers for the new settings: the answers
from the new solutions pass them, and fail them under the default settings.

Takes about 45 seconds, nearly all of it the two runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbgrader.validator import Validator

import kvlesson as kv
from kvlesson.authoring import command
from kvlesson.lesson import real_server_launches, sentences, sweep_sentences, tables
from kvlesson.memory.startup import PROFILED_BYTES, startup
from support.paths import DATA, ROOT
from support.patience import HANG

SOLUTIONS = sorted(
    p for p in (ROOT / "solutions").glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts
)
NAMES = [path.parent.name for path in SOLUTIONS]
COURSE_FOR = (
    "import sys; from pathlib import Path; "
    "from kvlesson.authoring.course_for import course_for; "
    "course_for(Path(sys.argv[1]), sys.argv[2], sys.argv[3], root=Path(sys.argv[4]))"
)


@dataclass(frozen=True)
class Run:
    """One run: the parameters it sets, and either the command-line options of
    `kvlesson for` (the whole course) or the assignments to copy and pass
    to `course_for` with their GPU and MODEL."""

    name: str
    parameters: dict = field(hash=False)
    options: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        """The assignments this run writes."""
        return list(self.assignments) or NAMES


RUNS = [
    Run(
        "h100-share50",
        {"GPU": "H100_80GB", "SHARE": 50},
        options=("--gpu", "H100_80GB", "--share", "50"),
    ),
    Run(
        "qwen-a100-40gb",
        {"GPU": "A100_40GB", "MODEL": "QWEN25_7B"},
        assignments=("00_start_here", "01_floor_plan", "02_ceiling"),
    ),
]
RUN_NOTEBOOKS = [(run, name) for run in RUNS for name in run.names]


# --- running the command ---------------------------------------------------------------


def partial_root(base: Path, assignments: tuple[str, ...]) -> Path:
    """A copy of the repository's course files with only some assignments in solutions/."""
    return command.copy_course(base / "root", list(assignments))


def command_for(run: Run, base: Path) -> list[str]:
    """The command line of a run, writing into base/<run name>."""
    out = str(base / run.name)
    if run.options:
        return [sys.executable, "-m", "kvlesson", "for", *run.options, "--out", out]
    root = partial_root(base / f"{run.name}-source", run.assignments)
    return [
        sys.executable,
        "-c",
        COURSE_FOR,
        out,
        run.parameters["GPU"],
        run.parameters["MODEL"],
        str(root),
    ]


@pytest.fixture(scope="module")
def courses(tmp_path_factory) -> dict[str, Path]:
    """Every run's output folder, the runs made side by side (each is one kernel at a time)."""
    base = tmp_path_factory.mktemp("course_for")
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    started = {}
    try:
        for run in RUNS:
            log, command = open(base / f"{run.name}.log", "w"), command_for(run, base)
            started[run.name] = (
                subprocess.Popen(command, cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT),
                log,
                command,
            )
        for name, (process, log, command) in started.items():
            code = process.wait(timeout=HANG)
            log.close()
            assert code == 0, (
                f"{' '.join(command)} exited {code}:\n{(base / f'{name}.log').read_text()[-4000:]}"
            )
    finally:
        for process, log, _ in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()
    return {run.name: base / run.name for run in RUNS}


# --- what kvlesson says for a setting --------------------------------------------------


def default_parameters(name: str) -> dict:
    """The parameters cell of a notebook in solutions/, evaluated: its defaults."""
    nb = nbformat.read(ROOT / "solutions" / name / solution_path(name).name, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    values: dict = {}
    exec(cell.source, {}, values)
    return values


def solution_path(name: str) -> Path:
    """The instructor notebook of an assignment, in the repository."""
    return next(path for path in SOLUTIONS if path.parent.name == name)


def plain(df: pd.DataFrame) -> str:
    """A DataFrame's text/plain form as a Jupyter kernel shows it (pandas' defaults for a
    notebook: 20 columns at most, 80 characters wide)."""
    with pd.option_context("display.max_columns", 20, "display.width", 80, "display.max_rows", 60):
        return repr(df)


def expected_outputs(name: str, parameters: dict) -> dict[str, str]:
    """What a notebook must show for `parameters`, computed here, by what it shows."""
    p = {**default_parameters(name), **parameters}
    gpu, model = kv.gpu(p["GPU"]), kv.model(p["MODEL"])
    share, longest, cap = p["SHARE"], p["LONGEST"], p["CAP"]
    want = {"setting": sentences.setting(gpu, model, share, longest, cap)}
    if name == "01_floor_plan":
        want["pool"] = sentences.floor_view(share, gpu, model).caption
        want["GiB reading"] = sentences.gib_reading(share, gpu, model)
        want["share table"] = plain(tables.share_table(sorted({30, 50, share, 98}), gpu, model))
    elif name == "02_ceiling":
        want["chats that fit"] = sentences.ceiling_view(share, longest, gpu, model).caption
        want["start-up log"] = sentences.startup_log(share, longest, gpu, model)
        want["ceiling table"] = plain(
            tables.ceiling_table(
                share, sorted({4_000, 8_000, 32_000, 128_000, longest}), gpu, model
            )
        )
    elif name == "03_cap_sweep":
        chats = kv.lesson_chats()
        sweep = kv.cap_sweep(chats, share=share, longest=longest, gpu=gpu, model=model)
        want["sweep"] = plain(tables.sweep_table(sweep))
        want["knee"] = sweep_sentences.knee_story(sweep)
        want["prefill floor"] = sweep_sentences.prefill_story(chats, gpu, model)
    elif name == "04_preemption":
        hand = [kv.Chat(prompt=30, reply=10), kv.Chat(prompt=30, reply=10)]
        steps = kv.trace(hand, cap=10, blocks=4, gpu=gpu, model=model)
        want["hand case"] = sentences.trace_story(steps)
        result = kv.serve(
            kv.lesson_chats(), cap=256, share=share, longest=longest, gpu=gpu, model=model
        )
        want["pauses"] = sentences.pause_count(result, share)
    elif name == "05_real_server":  # the card as vLLM measures it, 3 GB assumed for profiling
        want["setting"] = sentences.setting(
            gpu, model, share, longest, cap, PROFILED_BYTES, measured=True
        )
        want["start-up walk"] = real_server_launches.walk(startup(gpu, model, share, longest))
    return {label: str(text) for label, text in want.items()}


# --- reading notebooks -----------------------------------------------------------------


def shown_texts(nb: nbformat.NotebookNode) -> list[str]:
    """Every text/plain output and printed text of a notebook, one entry per output."""
    texts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                texts.append(output.text)
            elif "text/plain" in output.get("data", {}):
                texts.append(output.data["text/plain"])
    return texts


def executed(courses: dict[str, Path], run: Run, name: str) -> nbformat.NotebookNode:
    """One executed instructor notebook of a run."""
    return nbformat.read(
        courses[run.name] / "solutions" / name / solution_path(name).name, as_version=4
    )


def released(courses: dict[str, Path], run: Run, name: str) -> Path:
    """The path of one released student notebook of a run."""
    return courses[run.name] / "notebooks" / name / solution_path(name).name


def with_answers(
    release: Path, solution: nbformat.NotebookNode, target: Path, parameters: str | None = None
) -> Path:
    """A copy of a released notebook with every answer cell taken from `solution` (and, if
    given, its injected-parameters cell replaced by `parameters`), written to `target`."""
    nb = command.answered(nbformat.read(release, as_version=4), solution)
    for cell in nb.cells:
        if parameters is not None and "injected-parameters" in cell.metadata.get("tags", []):
            cell.source = parameters
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


# --- the tests -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("run", "name"), RUN_NOTEBOOKS, ids=lambda value: getattr(value, "name", value)
)
def test_outputs_follow_the_parameters(courses, run, name):
    """Each sentence and table is what kvlesson computes for the run's setting, and none is
    what the default run stored."""
    nb = executed(courses, run, name)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1, "papermill should inject one parameters cell"
    shown = shown_texts(nb)
    stored = shown_texts(nbformat.read(solution_path(name), as_version=4))
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, [f"{o.ename}: {o.evalue}" for o in errors]
    for label, text in expected_outputs(name, run.parameters).items():
        assert text in shown, f"{name} ({run.name}) does not show the {label} it should:\n{text}"
        assert text not in stored, (
            f"{name}: the {label} for {run.name} equals the default "
            f"run's stored output, so it does not test anything:\n{text}"
        )


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.name)
def test_release_has_every_notebook_and_no_solution(courses, run):
    """The student notebooks exist, one per assignment, without outputs, solutions or
    hidden tests; every answer cell is a stub."""
    released_names = sorted(p.name for p in (courses[run.name] / "notebooks").iterdir())
    assert released_names == run.names
    for name in run.names:
        path = released(courses, run, name)
        assert path.exists(), f"no student notebook {path}"
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(cell.source for cell in nb.cells)
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS"):
            assert marker not in text, f"{path} holds {marker}"
        assert not any(cell.get("outputs") for cell in nb.cells), f"{path} has outputs"
        answer_cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        assert answer_cells or not command.has_exercises(name), f"{path} has no answer cells"
        for cell in answer_cells:
            assert (
                "raise NotImplementedError()" in cell.source
                or cell.source.strip() == "YOUR ANSWER HERE"
            ), f"not a stub:\n{cell.source}"
        for line in solution_lines(executed(courses, run, name)):
            assert line not in text, f"{path} gives away the solution line {line!r}"


def solution_lines(nb: nbformat.NotebookNode) -> list[str]:
    """The lines between the solution markers of an instructor notebook, stripped."""
    lines = []
    for cell in nb.cells:
        inside = re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.S)
        lines += [
            line.strip()
            for block in inside
            for line in block.splitlines()
            if len(line.strip()) > 12
        ]
    return lines


@pytest.mark.parametrize(
    ("run", "name"),
    [(RUNS[0], "01_floor_plan"), (RUNS[0], "03_cap_sweep"), (RUNS[1], "00_start_here")],
    ids=lambda value: getattr(value, "name", value),
)
def test_release_self_checks_hold_the_new_answers(courses, run, name, tmp_path):
    """The release's hashed self-checks (and nbgrader's validation) pass with the answers
    from the new solutions; a student never sees a check made for the default card."""
    release = released(courses, run, name)
    filled = with_answers(release, executed(courses, run, name), tmp_path / name / release.name)
    assert Validator().validate(str(filled)) == {}


def test_release_self_checks_fail_under_the_default_setting(courses, tmp_path):
    """The same answers, run under the default parameters, fail the release's self-checks:
    the hashes are the new setting's, not copies of the default release's."""
    run, name = RUNS[0], "01_floor_plan"
    release = released(courses, run, name)
    defaults = default_parameters(name)
    filled = with_answers(
        release,
        executed(courses, run, name),
        tmp_path / name / release.name,
        parameters=f'GPU = "{defaults["GPU"]}"\nSHARE = {defaults["SHARE"]}\n',
    )
    result = Validator().validate(str(filled))
    assert result.get("failed"), f"the default setting passed the new release's checks: {result}"


def test_from_a_students_notebook_folder_with_a_models_config(tmp_path):
    """Notebook 7's cell, `!{sys.executable} -m kvlesson for ...`, as a student's JupyterLab
    runs it: in notebooks/07_wrap_up, with a PATH that lacks this environment's programs (the
    walk's "No such file or directory: 'alembic'"), for a model of one's own from its
    config.json. A relative --out there is refused before anything is written; without --out
    the course goes to the home folder, whole, with the config beside each notebook, and no
    kernel warns that it runs over TCP."""
    home = tmp_path / "home"
    config = home / "Qwen2.5-1.5B" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(QWEN25_15B))
    folder = ROOT / "notebooks" / "07_wrap_up"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    line = [
        sys.executable,
        "-m",
        "kvlesson",
        "for",
        "--gpu",
        "A100_80GB",
        "--model-config",
        str(config),
        "--name",
        "Qwen2.5-1.5B",  # the config names its architecture only: Qwen2ForCausalLM
        "00_start_here",
    ]
    try:
        refused = subprocess.run(
            [*line, "--out", "my-course"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG,
        )
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "the student notebooks a student's JupyterLab serves" in refused.stderr
        assert not (folder / "my-course").exists()
    finally:
        shutil.rmtree(folder / "my-course", ignore_errors=True)
    done = subprocess.run(line, cwd=folder, env=env, capture_output=True, text=True, timeout=HANG)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "without encryption" not in said, said
    out = home / "kvlesson-for-A100_80GB-Qwen2.5-1.5B"
    assert f"cd {out} && {sys.executable} -m kvlesson open" in done.stdout
    assert not [p for p in home.iterdir() if p.name.startswith(".kvlesson-for")]  # no half
    release = out / "notebooks" / "00_start_here"
    assert json.loads((release / "model_config.json").read_text())["hidden_size"] == 1536
    model = kv.Model.from_hf_config({**QWEN25_15B, "_name_or_path": "Qwen2.5-1.5B"})
    setting = sentences.setting(kv.gpu("A100_80GB"), model, 90, 8000, 64)
    executed = nbformat.read(out / "solutions" / "00_start_here" / "start_here.ipynb", 4)
    assert any(str(setting) in text for text in shown_texts(executed)), str(setting)
    student = with_answers(
        release / "start_here.ipynb", executed, tmp_path / "answered" / "start_here.ipynb"
    )
    shutil.copy(release / "model_config.json", student.parent)
    assert Validator().validate(str(student)) == {}


# Qwen2.5 1.5B's config.json, the fields the course reads (Hugging Face, Qwen/Qwen2.5-1.5B):
# 1,543,714,304 parameters with its tied embeddings and q/k/v biases.
QWEN25_15B = json.loads((DATA / "model_configs" / "qwen2.5-1.5b.json").read_text())
