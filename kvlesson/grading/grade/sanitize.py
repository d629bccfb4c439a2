"""A graded notebook without live student code, before the instructor's browser shows it.

The formgrader and the feedback render a graded notebook as HTML in a page of the
instructor's (or, for feedback, the student's) server. An output whose HTML holds a
`<script>`, an `onerror=` or a `javascript:` link, a JavaScript output, or a Markdown cell
with raw HTML would run there, with the rights of that page: it could enter grades as the
instructor. Every graded notebook is cleaned before it is stored: JavaScript and other
active outputs are dropped, HTML and Markdown keep only inert tags (nbconvert's
`SanitizeHTML`, with the tags a pandas table and the course's prose use).
"""

from __future__ import annotations

import copy

import nbformat
from bleach import ALLOWED_ATTRIBUTES, ALLOWED_TAGS
from nbconvert.preprocessors.sanitize import SanitizeHTML

# What the course's own outputs and prose use: pandas tables, sub- and superscripts.
TAGS = [*ALLOWED_TAGS, "p", "div", "span", "br", "pre", "sup", "sub", "h1", "h2", "h3", "h4",
        "table", "thead", "tbody", "tr", "th", "td", "hr"]
ATTRIBUTES = {**ALLOWED_ATTRIBUTES, "table": ["class", "border"], "th": ["colspan", "rowspan"],
              "td": ["colspan", "rowspan"], "div": ["class"], "span": ["class"]}
# Outputs shown as they are: text, images as data, JSON; never SVG (it can hold scripts).
SAFE_OUTPUTS = {"metadata", "text/plain", "text/latex", "application/json", "image/png",
                "image/jpeg"}


def sanitized(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of `nb` whose outputs and Markdown can run nothing in a browser."""
    clean = copy.deepcopy(nb)
    cleaner = SanitizeHTML(tags=TAGS, attributes=ATTRIBUTES, strip=True,
                           safe_output_keys=SAFE_OUTPUTS)
    for index, cell in enumerate(clean.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") in ("display_data", "execute_result", "update_display_data"):
                output.setdefault("data", {})
        cleaner.preprocess_cell(cell, {}, index)
        for key in [k for k in cell.get("attachments", {})]:
            cell.attachments.pop(key)  # an attachment is shown as the browser reads its type
    return clean
