"""Nothing a student writes runs in the instructor's browser (kvlesson.grading.grade.sanitize).

The formgrader and the feedback render a graded notebook's Markdown and HTML; nbgrader's
templates render Markdown without cleaning it, and a Markdown link has no tag to clean in
its source. These tests put every kind of live content a student can write (a `javascript:`
link in Markdown, in HTML, in a comment; `data:` scripts; SVG; JavaScript; MathJax's
`\\href`) through the grader's cleaning and through the HTML exporter as the course's
nbgrader_config.py sets it up for the feedback and the formgrader, and check that none
survives rendering, while the course's own figures (PNG images in the page, with their alt
text), tables and prose do.
"""

from __future__ import annotations

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from traitlets.config import Config

from kvlesson.grading.course import folders
from kvlesson.grading.grade.sanitize import markdown_text, sanitized
from support.live_html import live
from support.paths import ROOT
from support.payloads import PNG

FIGURE = f'<img alt="The pool takes 53.9 GB of the card" src="data:image/png;base64,{PNG}">'
LIVE_MARKDOWN = [
    "[notes](javascript:alert(1))",
    "[x](  JaVaScRiPt:alert(2))",
    "<javascript:alert(3)>",
    "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCg0KTwvc2NyaXB0Pg==)",
    "![i](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoNSk+)",
    "<a href='java&#x09;script:alert(6)'>t</a>",
    "<img src=x onerror=alert(7)>",
    "<script>alert(8)</script>",
    "<svg onload=alert(9)>",
    "<iframe src='javascript:alert(10)'></iframe>",
    "$\\href{javascript:alert(11)}{x}$",
    "<details open ontoggle=alert(12)>",
]


def notebook(markdown: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.cells = [
        nbformat.v4.new_markdown_cell(markdown),
        nbformat.v4.new_code_cell(
            "x",
            outputs=[
                nbformat.v4.new_output(
                    "display_data",
                    data={
                        "text/html": FIGURE
                        + "<table class='dataframe'><tr><td onclick='alert(13)'>1</td>"
                        "</tr></table><a href='javascript:alert(14)'>l</a>",
                        "application/javascript": "alert(15)",
                        "image/svg+xml": "<svg onload='alert(16)'/>",
                        "text/markdown": "[m](javascript:alert(17))",
                        "image/png": PNG,
                        "text/plain": "kept",
                    },
                )
            ],
        ),
    ]
    return nb


def rendered(nb: nbformat.NotebookNode, course_filters: bool = True) -> str:
    """The notebook as the feedback and the formgrader render it: nbconvert's HTML exporter
    with the course's nbgrader_config.py (its cleaner in place of nbconvert's)."""
    config = Config()
    if course_filters:
        config.HTMLExporter = folders.load(ROOT).HTMLExporter
    html, _ = HTMLExporter(config=config, template_name="classic").from_notebook_node(nb)
    return html


@pytest.mark.parametrize("markdown", LIVE_MARKDOWN)
def test_stored_markdown_renders_inert_in_any_renderer(markdown):
    """A cleaned Markdown cell renders with nbconvert's own, uncleaned Markdown filter (what
    nbgrader's templates use) to HTML that runs nothing, and the text stays readable."""
    clean = sanitized(notebook(markdown))
    html = markdown2html_mistune(clean.cells[0].source)
    assert not live(html), (live(html), html)
    assert markdown2html_mistune(html) == html  # one block, passed through as it is


@pytest.mark.parametrize("markdown", LIVE_MARKDOWN)
def test_feedback_and_formgrader_pages_run_nothing_even_from_an_uncleaned_notebook(markdown):
    """The exporter the course configures cleans as it renders: a notebook the grading
    command never cleaned (graded with the formgrader's own Autograde button) still shows
    nothing live; without the course's filters nbconvert would render the link live."""
    page = rendered(notebook(markdown))
    body = "<body" + page.split("<body", 1)[1]
    assert not live(body), live(body)
    if markdown.startswith("[notes]"):
        assert live(rendered(notebook(markdown), course_filters=False))


def test_the_course_figures_tables_and_text_stay():
    clean = sanitized(notebook("2<sup>30</sup> bytes, **bold**, [docs](https://docs.vllm.ai)"))
    data = clean.cells[1].outputs[0].data
    assert FIGURE in data["text/html"] and "<table" in data["text/html"]
    assert data["image/png"] == PNG and data["text/plain"] == "kept"
    assert set(data) == {"text/html", "image/png", "text/plain"}  # JS, SVG, Markdown gone
    assert "widgets" not in clean.metadata
    page = rendered(clean)
    assert FIGURE.removesuffix(">") in page, "the figure's image went blank in the feedback"
    for kept in ("<sup>30</sup>", "<strong>bold</strong>", 'href="https://docs.vllm.ai"'):
        assert kept in page, kept


def test_a_figure_with_another_kind_of_image_or_source_becomes_a_note_that_says_so():
    for html in (
        '<img alt="a" src="data:image/svg+xml;base64,PHN2Zz4=">',
        '<img alt="a" src="https://tracker.example/x.png">',
        '<img alt="a" src=x onerror="alert(1)">',
    ):
        shown = sanitized(notebook(html)).cells[0].source
        assert "svg" not in shown and "tracker" not in shown and "onerror" not in shown, shown
        # said, not a blank image with a made-up description (the walk's K2)
        assert "<em>[an image was removed here (its description: 'a')" in shown, shown
        assert "<img" not in shown and "No description" not in rendered(notebook(html))
    shown = sanitized(notebook('<img alt="a" src="data:image/png;base64,AAA=" onload="x()">'))
    assert shown.cells[0].source.count("<img") == 1 and "onload" not in shown.cells[0].source


def test_a_comment_with_a_students_text_renders_as_that_text():
    """Flags go into the gradebook's comments, which the feedback renders as Markdown."""
    text = "left out: [x](javascript:alert(1)) <img src=x onerror=alert(2)>: a file"
    html = markdown2html_mistune(markdown_text(text))
    assert not live(html) and "<a" not in html and "<img" not in html, html
    assert "[x](javascript:alert(1))" in html


def test_the_same_markdown_with_and_without_an_attachment_renders_each_its_own_way():
    """The cleaning remembers Markdown it has cleaned (a class's notebooks repeat the
    instructor's cells): a cell whose image is an attachment is never served what the same
    text without it gave."""
    source = "![the floor plan](attachment:plan.png)"
    bare = nbformat.v4.new_markdown_cell(source)
    held = nbformat.v4.new_markdown_cell(source, attachments={"plan.png": {"image/png": PNG}})
    first = sanitized(nbformat.v4.new_notebook(cells=[bare])).cells[0].source
    second = sanitized(nbformat.v4.new_notebook(cells=[held])).cells[0].source
    assert PNG not in first
    assert f"data:image/png;base64,{PNG}" in second
