"""`kvlesson for`'s output folder and model: never inside a student release folder (the course
for a card holds every answer), a default in the home folder named after the setting, a run
that fails leaves nothing behind (the walk of December 2026 found solutions/ and keys/ left in
a student's notebooks/ folder), and a model of one's own named from its config, never from
the folder it was downloaded to (the walk of 2026-12-07: "The model: Downloads")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from kvlesson.authoring import command, course_for
from support.paths import DATA, ROOT


def a_course(root: Path) -> Path:
    """A course root as nbgrader knows one: its configuration and a release folder."""
    (root / command.RELEASE / "07_wrap_up").mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", root)
    return root


def test_out_inside_a_student_release_folder_is_refused(tmp_path):
    root = a_course(tmp_path / "kvlesson")
    for inside in (root / "notebooks", root / "notebooks" / "07_wrap_up" / "my-course"):
        with pytest.raises(ValueError, match="the student notebooks a student's JupyterLab serves"):
            course_for.check_out(inside)
        assert not (root / "notebooks" / "07_wrap_up" / "my-course").exists()
    assert course_for.check_out(root / "course-h100") == (root / "course-h100").resolve()
    (root / "full").mkdir()
    (root / "full" / "x").touch()
    with pytest.raises(ValueError, match="new or empty folder"):
        course_for.check_out(root / "full")


def test_the_default_out_is_in_the_home_folder_named_after_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert (
        course_for.default_out("H100_80GB", "QWEN25_7B", 90, None, None)
        == tmp_path / "kvlesson-for-H100_80GB-QWEN25_7B-share90"
    )
    assert (
        course_for.default_out("L40S_48GB", "Qwen2.5-1.5B", None, 4000, 32)
        == tmp_path / "kvlesson-for-L40S_48GB-Qwen2.5-1.5B-longest4000-cap32"
    )
    assert course_for.default_out("L40S_48GB", "My model / v2", None, None, None) == (
        tmp_path / "kvlesson-for-L40S_48GB-My-model-v2"
    )


@pytest.mark.process
def test_a_run_that_fails_leaves_nothing(tmp_path):
    root = a_course(tmp_path / "source")
    (root / "solutions" / "00_start_here").mkdir(parents=True)
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                'GPU = "A100_80GB"\nMODEL = "LLAMA_31_8B"', metadata={"tags": ["parameters"]}
            ),
            nbformat.v4.new_code_cell("raise RuntimeError('this setting stops the notebook')"),
        ]
    )
    nbformat.write(nb, root / "solutions" / "00_start_here" / "start_here.ipynb")
    out = tmp_path / "courses" / "h100"
    with pytest.raises(RuntimeError, match="this setting stops the notebook") as stopped:
        course_for.course_for(out, "H100_80GB", root=root)
    assert "solutions/00_start_here stops with" in str(stopped.value)
    assert f"Nothing was written to {out}" in str(stopped.value)
    assert list((tmp_path / "courses").iterdir()) == []  # no out, no half-made folder


def a_config(tmp_path: Path, folder: str, **fields) -> Path:
    config = tmp_path / folder / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({**QWEN25_15B, **fields}))
    return config


def test_a_models_config_json_is_a_notebooks_model(tmp_path, monkeypatch):
    """What `kvlesson for --model-config` hands each notebook: MODEL names the config.json
    beside it, whose `_name_or_path` is the model's name."""
    config = a_config(tmp_path, "Downloads")
    parameter, body = course_for.model_parameter(None, config, "Qwen2.5-1.5B")
    assert parameter == course_for.MODEL_CONFIG and body["_name_or_path"] == "Qwen2.5-1.5B"
    monkeypatch.chdir(tmp_path)
    (tmp_path / course_for.MODEL_CONFIG).write_text(json.dumps(body))
    import kvlesson as kv

    model = kv.model(parameter)  # as the notebook's set-up cell reads it
    assert (model.name, model.params) == ("Qwen2.5-1.5B", 1_543_714_304)
    with pytest.raises(ValueError, match="cannot be read as a config.json"):
        course_for.model_parameter(None, tmp_path / "missing.json")


@pytest.mark.parametrize(
    "fields, name, named",
    [
        ({}, None, "Qwen2ForCausalLM"),  # Hugging Face's config.json names its architecture
        ({"_name_or_path": "Qwen/Qwen2.5-1.5B"}, None, "Qwen2.5-1.5B"),  # a Hub id
        ({"_name_or_path": "Qwen2.5-1.5B"}, None, "Qwen2.5-1.5B"),
        ({"_name_or_path": "/home/ada/Downloads"}, None, "Qwen2ForCausalLM"),  # a folder
        ({"_name_or_path": "~/models/x"}, None, "Qwen2ForCausalLM"),
        ({"_name_or_path": "./x"}, None, "Qwen2ForCausalLM"),
        ({"_name_or_path": "Qwen/Qwen2.5-1.5B"}, "My Qwen", "My Qwen"),  # --name first
        ({"_name_or_path": "", "architectures": ["LlamaForCausalLM"]}, None, "LlamaForCausalLM"),
    ],
)
def test_the_model_is_named_from_its_config_never_its_folder(tmp_path, fields, name, named):
    config = a_config(tmp_path, "Downloads", **fields)
    parameter, body = course_for.model_parameter(None, config, name)
    assert body["_name_or_path"] == named
    assert "Downloads" not in json.dumps(body)


@pytest.mark.parametrize(
    "fields, name, said",
    [
        ({"architectures": []}, None, "names no model .*give its name with --name"),
        ({"architectures": None, "_name_or_path": "/tmp/x"}, None, "names no model"),
        ({}, "  ", "name must name the model"),
    ],
)
def test_a_config_that_names_no_model_asks_for_a_name(tmp_path, fields, name, said):
    body = {k: v for k, v in {**QWEN25_15B, **fields}.items() if v is not None}
    config = tmp_path / "Downloads" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(body))
    with pytest.raises(ValueError, match=said):
        course_for.model_parameter(None, config, name)


def test_a_name_without_a_config_is_refused():
    with pytest.raises(ValueError, match="name names a model of your own: give it with"):
        course_for.model_parameter("QWEN25_7B", None, "Qwen")
    assert course_for.model_parameter(None, None) == ("LLAMA_31_8B", None)


def test_nothing_is_run_for_a_setting_that_cannot_start(tmp_path):
    """A share where the server cannot start is refused before any work or any folder."""
    out = tmp_path / "course"
    with pytest.raises(ValueError, match="share"):
        course_for.course_for(out, "A100_80GB", "LLAMA_33_70B", share=10)
    with pytest.raises(ValueError, match="jobs must be 1 or more"):
        course_for.course_for(out, "A100_80GB", jobs=0, names=["00_start_here"])
    assert not out.exists()


# Qwen2.5 1.5B's config.json, the fields the course reads (Hugging Face, Qwen/Qwen2.5-1.5B):
# 1,543,714,304 parameters with its tied embeddings and q/k/v biases.
QWEN25_15B = json.loads((DATA / "model_configs" / "qwen2.5-1.5b.json").read_text())


def test_no_parameters_cell_lists_the_cards_or_models_by_hand():
    """A card or a model added to the package must not leave a list in eight notebooks out of
    date (the walk found RTX_3090 missing): each parameters cell names its own default and
    points at `kvlesson --help`, which lists them from the package."""
    from kvlesson.memory.specs import GPUS, MODELS

    for path in command.notebook_paths(ROOT / "solutions"):
        nb = nbformat.read(path, as_version=4)
        [cell] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        named = [key for key in [*GPUS, *MODELS] if key in cell.source]
        assert len(named) == 2 and "`kvlesson --help`" in cell.source, (path.name, named)
