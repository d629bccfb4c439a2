"""The class report's page is built for assistive technology as well as for the eye: all it
says sits inside one `<main>` landmark (axe's landmark-one-main and region rules; a screen
reader's "skip to main content" lands on the title), in the named and the anonymous page, for
one assignment and for the whole course."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from kvlesson.grading.report import counts, page

REPORT = counts.AssignmentReport(
    "07_wrap_up", ("ann", "bo"), (), (("ann", 0.0), ("bo", 0.0)), 0.0, (), ()
)


class Landmarks(HTMLParser):
    """Reads a page: how many `<main>` it opens, and every tag or text in `<body>` outside
    `<main>`."""

    def __init__(self, html: str):
        super().__init__()
        self.depth, self.in_body, self.mains, self.outside = 0, False, 0, []
        self.headings_inside: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.in_body = True
        elif tag == "main":
            self.mains += 1
            self.depth += 1
        elif self.in_body and not self.depth:
            self.outside.append(f"<{tag}>")
        elif tag == "h1":
            self.headings_inside.append(tag)

    def handle_endtag(self, tag):
        if tag == "main":
            self.depth -= 1
        elif tag == "body":
            self.in_body = False

    def handle_data(self, data):
        if self.in_body and not self.depth and data.strip():
            self.outside.append(data.strip())


@pytest.mark.parametrize("names", [False, True], ids=["anonymous", "named"])
@pytest.mark.parametrize("kind", ["assignment", "course"])
def test_everything_on_the_page_is_inside_one_main_landmark(kind, names):
    html = (
        page.assignment_page(REPORT, names)
        if kind == "assignment"
        else page.course_page([REPORT], [], names)
    )
    read = Landmarks(html)
    assert read.mains == 1
    assert read.outside == [], f"outside <main>: {read.outside}"
    assert read.headings_inside == ["h1"], "the page's title is not the first thing in <main>"
