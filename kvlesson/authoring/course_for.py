"""`kvlesson for`: the whole course, executed, for another card, model or setting.

    kvlesson for --gpu H100_80GB --out course-h100
    kvlesson for --gpu L40S_48GB --model-config ~/Qwen2.5-1.5B/config.json --name Qwen2.5-1.5B

Each instructor notebook runs with new parameters (papermill's injected cell), and nbgrader
releases student notebooks whose self-checks hold the answers for that hardware, with keys
for that hardware (`kvlesson.authoring.build` does both, several notebooks side by side).
A model of one's own comes from its Hugging Face config.json, copied beside each notebook and
named from the config (`--name`, its `_name_or_path`, or its architecture), never from the
folder it was found in. The output goes to a new folder (by default ~/kvlesson-for-GPU-MODEL),
never into a student release folder such as notebooks/ (it holds every answer), and appears
only when it is whole.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from kvlesson.authoring.build import Job, JobFailed, execute_all, jobs_argument
from kvlesson.authoring.command import (
    COURSE_FILES,
    RELEASE,
    ROOT,
    assignments,
    chosen,
    notebook_paths,
    release,
)

MODEL_CONFIG = "model_config.json"  # beside each notebook of a course for a model's config
DEFAULT_OUT = "~/kvlesson-for-GPU-MODEL"  # where `kvlesson for` writes without --out
DEFAULT_MODEL = "LLAMA_31_8B"  # the notebooks' own (their parameters cells)


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
    after the setting (the model by its name), outside any course."""
    parts = [gpu, re.sub(r"[^\w.+-]+", "-", model).strip("-") or "model"]
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
    release_folder = served_release(out)
    if release_folder is not None:
        raise ValueError(
            f"out {out} is inside {release_folder}, the student notebooks a student's "
            f"JupyterLab serves, and the course for a card holds every answer "
            f"(solutions/, keys/): give a folder outside it, such as "
            f"~/my-course, or leave --out out (it then goes to {DEFAULT_OUT})"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"out must be a new or empty folder, got {out} with files in it")
    return out


def named_model(body: dict, config: Path, name: str | None = None) -> str:
    """What the notebooks call a model of one's own: `name` if given; else the model its
    config names (`_name_or_path`: a Hub id such as "Qwen/Qwen2.5-1.5B" gives "Qwen2.5-1.5B";
    a folder of someone's disk names no model); else its first architecture
    ("LlamaForCausalLM"); never the folder the config was found in ("Downloads")."""
    if name is not None:
        if not name.strip():
            raise ValueError("name must name the model, got an empty name")
        return name.strip()
    given = body.get("_name_or_path")
    if isinstance(given, str) and given.strip() and not given.startswith(("/", "~", ".")):
        return given.strip().rstrip("/").rsplit("/", 1)[-1]
    architectures = body.get("architectures")
    if isinstance(architectures, list) and architectures and isinstance(architectures[0], str):
        return architectures[0]
    raise ValueError(
        f"model-config {config} names no model (no _name_or_path, no architectures): "
        f'give its name with --name, such as --name "Llama-3.2-3B-Instruct"'
    )


def model_parameter(
    model: str | None, config: Path | None, name: str | None = None
) -> tuple[str, dict | None]:
    """The MODEL parameter of the notebooks and, for a model's config.json, the config to put
    beside each notebook, its `_name_or_path` the model's name (`named_model`): a name of the
    package's, or MODEL_CONFIG."""
    if config is None:
        if name is not None:
            raise ValueError("name names a model of your own: give it with --model-config")
        return model or DEFAULT_MODEL, None
    config = Path(config).expanduser()
    try:
        body = json.loads(config.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(
            f"model-config {config} cannot be read as a config.json: {error}"
        ) from error
    if not isinstance(body, dict):
        raise ValueError(f"model-config {config} holds no JSON object: not a config.json")
    return MODEL_CONFIG, {**body, "_name_or_path": named_model(body, config, name)}


def _checked_model(parameter: str, config: dict | None, gpu: str, share, longest):
    """The model, once the setting is known to start: a clear error for a wrong name, a
    share out of range, or a setting where the server cannot start (the notebooks serve at
    it), before any work. ServerWontStart is a ValueError; the defaults are the notebooks'."""
    from kvlesson.memory.floor import check_starts, memory_parts
    from kvlesson.memory.specs import Model, gpu as find_gpu, model as find_model
    from kvlesson.serving.settings import LESSON_LONGEST, LESSON_SHARE

    chosen_model = Model.from_hf_config(config) if config else find_model(parameter)
    check_starts(
        memory_parts(LESSON_SHARE if share is None else share, find_gpu(gpu), chosen_model),
        LESSON_LONGEST if longest is None else longest,
    )
    return chosen_model


def _write(work: Path, root: Path, names: list[str], parameters: dict, config, jobs) -> None:
    """The course, executed with `parameters`, in the course root `work`."""
    for name in COURSE_FILES:
        shutil.copy(root / name, work / name)
    tasks = []
    for source in notebook_paths(root / "solutions"):
        if source.parent.name not in names:
            continue
        target = work / "solutions" / source.parent.name / source.name
        target.parent.mkdir(parents=True)
        if config:
            (target.parent / MODEL_CONFIG).write_text(json.dumps(config, indent=1))
        tasks.append(Job(source, work, parameters, target))
    print(f"executing {len(tasks)} notebooks with {parameters}", flush=True)
    execute_all(tasks, jobs)
    print("releasing with nbgrader", flush=True)
    release(work, assignments(work))


def course_for(
    out: Path | None,
    gpu: str,
    model: str | None = DEFAULT_MODEL,
    share: int | None = None,
    longest: int | None = None,
    cap: int | None = None,
    root: Path = ROOT,
    model_config: Path | None = None,
    names: list[str] | None = None,
    name: str | None = None,
    jobs: int | None = None,
) -> Path:
    """Write the course for other hardware into `out` (default: a new folder of the home
    folder named after the setting): executed instructor notebooks in out/solutions, and the
    student release in out/notebooks; the assignments `names` only, if given. The model is a
    name of the package's or, with `model_config`, a Hugging Face config.json (named `name`,
    or as `named_model` says), which each notebook then reads from beside it. Nothing is
    written into a student release folder, and `out` appears only when it is whole: a run
    that fails leaves nothing behind."""
    parameter, config = model_parameter(model, model_config, name)
    chosen_model = _checked_model(parameter, config, gpu, share, longest)
    wanted = chosen(names, root)
    model_name = config["_name_or_path"] if config else parameter
    out = check_out(default_out(gpu, model_name, share, longest, cap) if out is None else out)
    parameters = {"GPU": gpu, "MODEL": parameter}
    given = (("SHARE", share), ("LONGEST", longest), ("CAP", cap))
    parameters.update({k: v for k, v in given if v is not None})
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        _write(work, root, wanted, parameters, config, jobs)
        if out.exists():
            out.rmdir()  # empty (check_out)
        os.rename(work, out)
    except JobFailed as failed:
        stops = f"solutions/{failed.name} stops with {parameters}" if failed.cell else failed.name
        raise RuntimeError(f"{stops}: {failed.why}\nNothing was written to {out}.") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"the course for {gpu} and {chosen_model.name}: {out} (the student release in "
        f"{out / RELEASE}, the instructor notebooks and keys beside it); open its notebooks "
        f"with: cd {out} && {sys.executable} -m kvlesson open"
    )
    return out


def arguments(parser: argparse.ArgumentParser) -> None:
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
        help=f"the model (the list below; default {DEFAULT_MODEL})",
    )
    which.add_argument(
        "--model-config",
        type=Path,
        metavar="PATH",
        help="a model of your own: its Hugging Face config.json (Llama, Mistral, "
        "Qwen2 and Qwen3 decoders), which each notebook then reads",
    )
    parser.add_argument(
        "--name",
        help="what the notebooks call the model of --model-config (default: the config's "
        "_name_or_path, else its architecture)",
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
    jobs_argument(parser)


def run(args: argparse.Namespace) -> int:
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
        name=args.name,
        jobs=args.jobs,
    )
    return 0
