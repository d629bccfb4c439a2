"""What in an HTML page could run or fetch something: for the tests that check that no page
an instructor or a student opens (feedback, the formgrader's views, the class report) runs a
script a student wrote."""

from __future__ import annotations

import re
from html.parser import HTMLParser

LIVE_TAGS = {
    "script",
    "svg",
    "iframe",
    "object",
    "embed",
    "math",
    "style",
    "link",
    "meta",
    "base",
    "form",
    "details",
}
SAFE_TARGET = re.compile(r"(https?://|mailto:|#|data:image/(png|jpeg);base64,)")


class Live(HTMLParser):
    """Collects what could run: a tag that can, an event handler, a link or a source that is
    not http(s), mailto, an anchor or a PNG/JPEG image in the page, and MathJax's \\href."""

    def __init__(self, allowed_tags: set[str] = frozenset()) -> None:
        super().__init__()
        self.allowed_tags = allowed_tags
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in LIVE_TAGS - self.allowed_tags:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = re.sub(r"[\s\x00-\x20]", "", value or "").lower()
            if name.startswith("on"):
                self.found.append(f"{tag} {name}")
            elif name in (
                "href",
                "src",
                "action",
                "formaction",
                "xlink:href",
            ) and not SAFE_TARGET.match(value):
                self.found.append(f"{tag} {name}={value[:40]}")

    def handle_data(self, data):
        if "\\href" in data:
            self.found.append("\\href")


def live(html: str, allowed_tags: set[str] = frozenset()) -> list[str]:
    """Everything live in `html` (tags in `allowed_tags`, the page's own, are let be)."""
    parser = Live(allowed_tags)
    parser.feed(html)
    return parser.found
