"""Whatever field of a notebook a student hides a script in, no page runs it
(kvlesson.grading.grade.metadata, .sanitize, .escaped_names).

The walk of December 2026 found the formgrader and the feedback reading more than the
outputs' data: an image's `width: "1 onload=..."` became a live attribute (nbconvert writes
width and height unquoted), `transient.remove_source` hid a flagged cell's code from the
grader, an image's `filenames` pointed anywhere, and a student id was markup in the
formgrader's header. These tests put a payload into every field a template reads (and then
into every string of every metadata mapping, whatever it is named), clean the notebook as
the grading command stores it, and render it as nbconvert's classic template and nbgrader's
own feedback and formgrader templates do, with the course's configuration: nothing runs,
nothing loads from outside the notebook, no code is hidden, and the course's figures and an
honest student's pasted screenshot stay.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import nbgrader
import pytest
from nbconvert import HTMLExporter
from traitlets.config import Config

from kvlesson.grading.course import folders
from kvlesson.grading.grade import metadata
from kvlesson.grading.grade.sanitize import sanitized
from support.live_html import live
from support.paths import ROOT
from support.payloads import PAYLOAD, PNG, SVG

NBGRADER_TEMPLATES = (
    Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
)
BOOTSTRAP_CSS = NBGRADER_TEMPLATES.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"
HIDDEN_CODE = "print('the code of a flagged cell')"  # highlighted: its words are one token


def attacked() -> nbformat.NotebookNode:
    """A notebook with a payload in every field nbconvert's and nbgrader's templates read
    besides the cells' text, and the fields that hide a cell's code."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "title": PAYLOAD,
        "kernelspec": {"name": PAYLOAD, "display_name": PAYLOAD, "language": "python"},
        "language_info": {"name": PAYLOAD, "pygments_lexer": PAYLOAD},
        "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {PAYLOAD: {}}}},
    }
    image = nbformat.v4.new_output(
        "display_data",
        data={"image/png": PNG, "text/plain": "a figure"},
        metadata={
            "image/png": {"width": PAYLOAD, "height": "2 onerror=alert(5)", "alt": PAYLOAD},
            "filenames": {"image/png": "https://tracker.example/pixel.png"},
            "text/html": {"isolated": True},
        },
    )
    sized = nbformat.v4.new_output(
        "display_data", data={"image/png": PNG}, metadata={"image/png": {"width": 320}}
    )
    stream = nbformat.v4.new_output("stream", name=PAYLOAD, text="printed")
    error = nbformat.v4.new_output("error", ename=PAYLOAD, evalue=PAYLOAD, traceback=[PAYLOAD])
    code = nbformat.v4.new_code_cell(HIDDEN_CODE, outputs=[image, sized, stream, error])
    code.outputs[3].traceback.append(7)  # not text: what a kernel message sent by hand holds
    code.metadata = {
        "transient": {"remove_source": True},
        "jupyter": {"source_hidden": True, "outputs_hidden": True},
        "tags": [PAYLOAD, "kept-tag"],
        "nbgrader": {"grade_id": PAYLOAD, "grade": True, "points": PAYLOAD, "locked": True},
        "alt": PAYLOAD,
    }
    code.execution_count = PAYLOAD
    code.id = PAYLOAD
    markdown = nbformat.v4.new_markdown_cell(
        "My screenshot: ![the pool](attachment:screenshot.png) and "
        "![bad](attachment:evil.svg) and ![gone](attachment:missing.png)"
    )
    markdown.attachments = {
        "screenshot.png": {"image/png": PNG},
        "evil.svg": {"image/svg+xml": SVG},
    }
    markdown.metadata = {
        "nbgrader": {
            "grade_id": "q2_answer",
            "solution": True,
            "grade": True,
            "points": 2,
            "schema_version": 3,
        }
    }
    raw = nbformat.v4.new_raw_cell("<script>alert(6)</script>")
    raw.metadata = {"raw_mimetype": "text/html", "format": "text/html"}
    nb.cells = [markdown, code, raw]
    return nb


def rendered(nb: nbformat.NotebookNode, template: str, resources: dict | None = None) -> str:
    """The page's body as nbconvert renders `nb` with the course's configuration and
    `template` (nbconvert's classic, nbgrader's feedback or formgrade); for the feedback,
    each graded cell has its score and comment, as nbgrader's GetGrades gives it."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata.nbgrader.update(score=0, comment="a grader's comment")
    config = Config()
    config.HTMLExporter = copy.deepcopy(folders.load(ROOT).HTMLExporter)
    config.HTMLExporter.template_name = template
    config.HTMLExporter.extra_template_basedirs = [str(NBGRADER_TEMPLATES)]
    config.HTMLExporter.extra_template_paths = [str(BOOTSTRAP_CSS)]  # as generate_feedback
    html, _ = HTMLExporter(config=config).from_notebook_node(nb, resources=resources)
    return "<body" + html.split("<body", 1)[1]


FEEDBACK = {"nbgrader": {"notebook": "ceiling", "score": 1, "max_score": 2, "late_penalty": 0}}
FORMGRADE = {
    "assignment_id": "02_ceiling",
    "notebook_id": "ceiling",
    "submission_id": "1",
    "index": 0,
    "total": 1,
    "base_url": "",
    "student": PAYLOAD,
    "first_name": PAYLOAD,
    "last_name": PAYLOAD,
    "notebook_path": f"autograded/{PAYLOAD}/02_ceiling/ceiling.ipynb",
}
PAGES = {"classic": None, "feedback": FEEDBACK, "formgrade": FORMGRADE}


def running(page: str, template: str) -> set[str]:
    """What in the page's body runs or loads, beyond what the template's own page holds
    (the formgrader's header has handlers and scripts of its own)."""
    plain = {
        k: v.replace(PAYLOAD, "ana") if isinstance(v, str) else v
        for k, v in (PAGES[template] or {}).items()
    }
    own = set(live(rendered(nbformat.v4.new_notebook(), template, copy.deepcopy(plain))))
    return set(live(page, {"script", "style", "link", "meta"})) - own


@pytest.mark.parametrize("template", sorted(PAGES))
def test_no_field_of_the_notebook_runs_or_loads_anything_in_any_page(template):
    clean = sanitized(attacked())
    nbformat.validate(clean)  # a notebook every later step (feedback, formgrader) can read
    page = rendered(clean, template, copy.deepcopy(PAGES[template]))
    assert not running(page, template), running(page, template)
    for text in ("<script>alert", "<img src=x", "tracker.example", "svg+xml"):
        assert text not in page, (template, text)  # the payload only ever as escaped text
    assert "the code of a flagged cell" in page, "the flagged cell's code was hidden"


def test_without_the_cleaning_the_same_fields_are_live():
    """The attack is real: nbconvert's own template makes the width an attribute that runs,
    and the formgrader's header makes the student id markup."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=[attacked().cells[1].outputs[0]])]
    classic = rendered(nb, "classic")
    assert 'onload="alert(1)"' in classic and 'onerror="alert(5)"' in classic
    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [str(NBGRADER_TEMPLATES)]
    html, _ = HTMLExporter(config=config).from_notebook_node(
        nbformat.v4.new_notebook(), resources=copy.deepcopy(FORMGRADE)
    )
    assert "img onerror" in live(html), live(html)


def test_an_honest_pasted_screenshot_stays_and_what_cannot_be_shown_is_said():
    clean = sanitized(attacked())
    shown = clean.cells[0].source
    assert f'src="data:image/png;base64,{PNG}"' in shown and 'alt="the pool"' in shown
    assert shown.count("[an image was removed here") == 2, shown  # the SVG and the missing one
    assert "attachments" not in clean.cells[0]
    assert clean.cells[0].metadata["nbgrader"]["grade_id"] == "q2_answer"  # still graded


def test_what_the_pages_read_is_kept_only_with_its_own_type():
    clean = sanitized(attacked())
    code = clean.cells[1]
    assert code.metadata == {"tags": ["kept-tag"]}  # no nbgrader metadata with a markup id
    assert code.execution_count is None and code.id == "cell-1"
    image, sized, stream, error = code.outputs
    assert image.metadata == {"image/png": {"alt": PAYLOAD}}  # quoted and escaped by templates
    assert sized.metadata == {"image/png": {"width": 320}}
    assert stream.name == "stdout" and error.traceback == [PAYLOAD, "7"]
    assert clean.metadata == {
        "kernelspec": {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        },
        "language_info": {"name": "python"},
    }
    assert metadata.whole("640") == 640 and metadata.whole("1 onload=x") is None
    assert metadata.whole(True) is None and metadata.whole(10**9) is None


def test_a_payload_in_any_metadata_field_whatever_its_name_is_dropped():
    """Every string of every metadata mapping of the notebook, a cell and an output,
    whatever it is named, replaced by the payload: none of it reaches a page."""
    nb = attacked()

    def fill(node):
        if isinstance(node, dict):
            return {key: fill(value) for key, value in node.items()}
        if isinstance(node, list):
            return [fill(value) for value in node]
        return PAYLOAD if isinstance(node, str) else node

    nb.metadata = nbformat.from_dict({**fill(nb.metadata), "anything": {"deep": [PAYLOAD]}})
    for cell in nb.cells:
        cell.metadata = nbformat.from_dict({**fill(cell.metadata), "whatever": PAYLOAD})
        for output in cell.get("outputs", []):
            if "metadata" in output:
                output.metadata = nbformat.from_dict({**fill(output.metadata), "x": PAYLOAD})
    for template, resources in PAGES.items():
        page = rendered(sanitized(nb), template, copy.deepcopy(resources))
        assert not running(page, template), (template, running(page, template))
        assert "<script>alert" not in page and "<img src=x" not in page, template
