"""A graded notebook that runs nothing a student wrote, as the instructor's browser shows it.

The formgrader and the feedback render a graded notebook as HTML in a page of the
instructor's (or, for feedback, the student's) server: an output's HTML with a `<script>`,
an `onerror=` or a `javascript:` link, a JavaScript output, or a Markdown cell whose link
points at `javascript:` would run there, with the rights of that page (it could enter
grades as the instructor). nbgrader's feedback and formgrader templates render Markdown
without cleaning the HTML they make, and a Markdown link has no HTML tag in the source to
clean; so every graded notebook is cleaned here, as rendered, before it is stored:

* a Markdown cell (and a raw one) is rendered as nbconvert's templates render it, the HTML
  cleaned, and stored as that one line of clean HTML, which any Markdown renderer passes
  through as it is;
* a Markdown cell's attachments (a pasted screenshot) are shown in it where they are PNG or
  JPEG images, written into the page (`data:`); any other attachment, or one the cell names
  but does not hold, becomes a note that an image was removed, never an error: an honest
  student's screenshot never costs the grade;
* an output keeps text, PNG and JPEG images, JSON and LaTeX as they are; its HTML and
  Markdown are cleaned (Markdown rendered first); everything else (JavaScript, SVG, widgets)
  is dropped, with a note when nothing of the output is left, and so are the notebook's
  widget state and the cells' attachments;
* clean HTML keeps inert tags only (tables, text, code, lists), links to http, https,
  mailto and anchors, and images whose source is a PNG or JPEG in the page itself
  (`<img alt="..." src="data:image/png;base64,...">`: the course's figures), nothing else;
  an image whose source was removed becomes a note saying so;
* what the pages read besides the cells' text (an image's width, a cell's metadata, ids,
  stream names) is cleaned too (`kvlesson.grading.grade.metadata`);
* in text MathJax reads (Markdown, LaTeX outputs), its macros that make links or HTML
  (`\\href`, `\\class`, ...) lose their backslash.

The same cleaning is the templates' own: nbgrader_config.py gives the feedback's and the
formgrader's HTML exporter `clean_html` and `markdown2html` from here, so what they render
is cleaned again as it is rendered, and the course's figures (PNG images in the page) stay.
"""

from __future__ import annotations

import copy
import functools
import html
import re

import nbformat
from bleach import ALLOWED_TAGS
from bleach.html5lib_shim import Filter
from bleach.sanitizer import Cleaner

from kvlesson.grading.grade import metadata

# What the course's outputs and prose use: pandas tables, text, code, sub- and superscripts,
# and the figures as images in the page.
TAGS = sorted(
    {
        *ALLOWED_TAGS,
        "p",
        "div",
        "span",
        "br",
        "pre",
        "sup",
        "sub",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "hr",
        "img",
        "figure",
        "figcaption",
        "del",
        "s",
    }
)
PLAIN_ATTRIBUTES = {
    "table": {"class", "border"},
    "th": {"colspan", "rowspan"},
    "td": {"colspan", "rowspan"},
    "div": {"class"},
    "span": {"class"},
    "abbr": {"title"},
    "acronym": {"title"},
    "code": {"class"},
}
IMAGE = re.compile(r"data:image/(?:png|jpeg);base64,[A-Za-z0-9+/=\s]*", re.ASCII)
LINK = re.compile(r"(?:https?://|mailto:|#)[^\s\x00-\x1f]*", re.ASCII | re.IGNORECASE)
PROTOCOLS = ("http", "https", "mailto", "data")  # data: for images only (see `allowed`)
# Outputs shown as they are: text, images as data, JSON; never SVG (it can hold scripts).
SAFE_OUTPUTS = {"text/plain", "text/latex", "application/json", "image/png", "image/jpeg"}
CLEANED_OUTPUTS = {"text/html", "text/markdown"}
# MathJax macros that make a link, an HTML attribute or load code.
MATHJAX_ACTIVE = re.compile(
    r"\\(href|url|class|cssId|style|require|unicode|data|toggle|"
    r"mathtip|texttip|html[A-Za-z]*)(?![A-Za-z])"
)
SANITIZED_CLASS = "kvlesson-sanitized"  # the div a cleaned Markdown cell is stored as


def allowed(tag: str, name: str, value: str) -> bool:
    """Whether a tag keeps an attribute: an image its alt text and a source that is a PNG
    or JPEG in the page, a link an http, https, mailto or anchor target and a title, other
    tags only the plain attributes of PLAIN_ATTRIBUTES."""
    if tag == "img":
        return name == "alt" or (name == "src" and IMAGE.fullmatch(value.strip()) is not None)
    if tag == "a":
        return name == "title" or (name == "href" and LINK.fullmatch(value.strip()) is not None)
    return name in PLAIN_ATTRIBUTES.get(tag, ())


REMOVED_IMAGE = (
    "[an image was removed here (its description: {alt!r}): the grader shows only PNG "
    "and JPEG images held in the notebook itself]"
)
REMOVED_OUTPUT = "[an output of type {kinds} was removed here: the grader shows no script or SVG]"


class ImageNotes(Filter):
    """After cleaning: an image left without a source (one from outside the notebook, of
    another type, or a handler's carrier such as `<img src=x onerror=...>`) becomes a note
    that says an image was removed, not a blank image."""

    def __iter__(self):
        for token in super().__iter__():
            if token.get("name") == "img" and (None, "src") not in token.get("data", {}):
                if token["type"] in ("StartTag", "EmptyTag"):
                    alt = token["data"].get((None, "alt"), "")
                    yield {"type": "StartTag", "name": "em", "data": {}}
                    yield {"type": "Characters", "data": REMOVED_IMAGE.format(alt=alt[:200])}
                    yield {"type": "EndTag", "name": "em", "data": {}}
                continue
            yield token


CLEANER = Cleaner(
    tags=TAGS,
    attributes=allowed,
    protocols=list(PROTOCOLS),
    strip=True,
    strip_comments=True,
    filters=[ImageNotes],
)


def inert_math(text: str) -> str:
    """`text` with MathJax's active macros written without their backslash."""
    return MATHJAX_ACTIVE.sub(r"\1", text)


@functools.lru_cache(maxsize=1024)
def clean_html(html: str) -> str:
    """HTML with only inert tags and attributes left (see the module's list). Remembered:
    a class's notebooks hold the same instructor's text and mostly the same outputs."""
    return inert_math(CLEANER.clean(html))


def render_markdown(source: str, attachments: object = None) -> str:
    """Markdown as nbconvert's templates (the formgrader's and the feedback's) render it,
    with the cell's PNG and JPEG `attachments` written into the page; any other image it
    names (another type, missing) renders without a source, which the cleaning turns into
    a note. Never raises: Markdown the renderer cannot read is shown as its text."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class Renderer(IPythonRenderer):
        def _embed_image_or_attachment(self, src: str) -> str:
            if not src.startswith("attachment:"):
                return src  # an address, never a file of the grader's read into the page
            held = self.attachments.get(src[len("attachment:") :])
            for mime in ("image/png", "image/jpeg"):
                if isinstance(held, dict) and isinstance(held.get(mime), str):
                    return f"data:{mime};base64,{held[mime]}"
            return ""

    kept = attachments if isinstance(attachments, dict) else {}
    try:
        return MarkdownWithMath(renderer=Renderer(escape=False, attachments=kept)).render(source)
    except Exception:  # the student's text, whatever it holds, never stops a grade
        return f"<pre>{html.escape(source)}</pre>"


def markdown2html(source: str) -> str:
    """The Markdown filter of the feedback's and the formgrader's templates
    (nbgrader_config.py puts it in place of nbconvert's): rendered, then cleaned, so a cell,
    a comment or an output rendered there runs nothing even where the stored notebook was
    never cleaned (the formgrader's own Autograde button)."""
    return clean_html(render_markdown(str(source)))


def markdown_text(text: str) -> str:
    """`text` as Markdown that renders as exactly that text: every ASCII punctuation
    character escaped (a student's file name in a flag never becomes a link or a tag)."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)


def as_one_block(html: str) -> str:
    """Clean HTML as Markdown that any renderer passes through as it is: one `<div>` on one
    line (a Markdown HTML block ends at a blank line; newlines inside `<pre>` kept as
    character references, other newlines are spaces in HTML anyway)."""
    html = re.sub(
        r"<pre\b.*?</pre>", lambda m: m.group(0).replace("\n", "&#10;"), html, flags=re.S | re.I
    )
    html = html.replace("\r", " ").replace("\n", " ")
    return f'<div class="{SANITIZED_CLASS}">{html}</div>'


def clean_markdown(source: str, attachments: object = None) -> str:
    """A Markdown cell's source, rendered with its attachments, cleaned and stored as one
    block of HTML."""
    if not attachments:
        return _clean_text(source)
    return as_one_block(clean_html(render_markdown(source, attachments)))


@functools.lru_cache(maxsize=1024)
def _clean_text(source: str) -> str:
    """`clean_markdown` of a cell with no attachments, remembered (the same instructor's
    cells in every notebook of a class)."""
    return as_one_block(clean_html(render_markdown(source)))


def clean_output(output: nbformat.NotebookNode) -> None:
    """One output, cleaned in place: text and images kept, HTML and Markdown cleaned (as
    HTML), LaTeX made inert, everything else dropped."""
    if output.get("output_type") not in ("display_data", "execute_result", "update_display_data"):
        return  # a stream or an error: text, which every template escapes
    data = output.setdefault("data", {})
    if "text/markdown" in data:
        rendered = render_markdown(_text(data.pop("text/markdown")))
        data.setdefault("text/html", rendered)
    removed = []
    for key in list(data):
        if key == "text/html":
            data[key] = clean_html(_text(data[key]))
        elif key == "text/latex":
            data[key] = inert_math(_text(data[key]))
        elif key not in SAFE_OUTPUTS:
            removed.append(key)
            del data[key]
    if removed and not data:
        data["text/plain"] = REMOVED_OUTPUT.format(kinds=", ".join(sorted(removed))[:200])


def _text(value) -> str:
    return value if isinstance(value, str) else "".join(value)


def sanitized(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of `nb` whose outputs, Markdown and metadata can run nothing in a browser and
    load nothing from outside the notebook."""
    clean = copy.deepcopy(nb)
    # widget state (templates load its code to show it), a title: only names are kept
    clean.metadata = nbformat.from_dict(metadata.notebook_metadata(clean.metadata))
    for index, cell in enumerate(clean.cells):
        if cell.cell_type in ("markdown", "raw"):
            cell.source = clean_markdown(_text(cell.source), cell.get("attachments"))
        for output in cell.get("outputs", []):
            clean_output(output)
        metadata.clean_cell(cell, index)
        cell.pop("attachments", None)  # shown in the cell's HTML above, where they are images
    return clean
