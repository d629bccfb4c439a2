"""The course's website, built once for the tests that read it (tests/system/test_site*.py).

A plugin of the tests (tests/conftest.py names it, as it names support.browser), so its
fixtures reach every test file without an import; it loads the site's code only when a test
asks for the site. `built` builds it (once a run, support.shared) from a copy of the course, committed to git, whose
`site/published.toml` names a students' repository and a hub (PUBLISHED), so that every
page's Binder and hub links can be followed to what they must be, and in which a student has
worked in notebook 0 (WORKED), as the walk of 2026-12-07 did before building the site;
everything else on a page is what the course itself builds. `served` serves it on 127.0.0.1 as a visitor's browser gets it. `read` parses a page
as a reader gets it: its text (no script or style), its images' alt texts, what it loads,
its links and its tables.
"""

from __future__ import annotations

import functools
import http.server
import pickle
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlparse

import nbformat
import pytest

from kvlesson.delivery.site.published import SETTING, Published
from support.paths import ROOT
from support.shared import once

PUBLISHED = Published(
    "https://github.com/kvlesson-course/kvlesson-students", "main", "https://hub.uni.edu"
)
COPIED = ("solutions", "notebooks", "docs", "site")  # what the site is built from
WORKED = "notebooks/00_start_here/start_here.ipynb"  # a student has worked in it (see worked_in)


@dataclass(frozen=True)
class Built:
    """The website: its pages' folder, its sources' account, the course it was built from."""

    html: Path
    sources: Any  # kvlesson.delivery.site.layout.Sources
    course: Path


class PageText(HTMLParser):
    """A page as read: its text (no script or style), its images' alt texts, the addresses it
    loads (src, href of anything but a link), its links, its tables' captions."""

    def __init__(self):
        super().__init__()
        self.text, self.alts, self.loads, self.links, self.captions = [], [], [], [], 0
        self.tables, self.skipping = 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "style"):
            self.skipping += 1
        if tag == "img":
            self.alts.append(attrs.get("alt"))
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        elif tag != "a":
            self.loads += [attrs[k] for k in ("src", "href", "poster", "data") if attrs.get(k)]
        self.tables += tag == "table"
        self.captions += tag == "caption"

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.text.append(data)


def read(page: Path) -> PageText:
    parser = PageText()
    parser.feed(page.read_text())
    return parser


def external(address: str) -> bool:
    return address.startswith("//") or urlparse(address).scheme in ("http", "https")


def pages(html: Path) -> list[Path]:
    """Every page a visitor opens (not the theme's template fragments in _static/)."""
    return [p for p in sorted(html.rglob("*.html")) if "_static" not in p.relative_to(html).parts]


def notebook_pages(html: Path) -> dict[str, Path]:
    return {page.parent.name: page for page in sorted((html / "notebooks").glob("*/*.html"))}


def build_the_site(base: Path) -> None:
    """Copy the course (committed to git, published at PUBLISHED, notebook 0 worked in) into
    `base`/course and build its website into `base`/site."""
    from kvlesson.delivery.site.command import build  # Sphinx's driver: only when a test asks

    course = base / "course"
    for folder in COPIED:
        shutil.copytree(ROOT / folder, course / folder)
    (course / SETTING).write_text(
        f'[published]\nrepository = "{PUBLISHED.repository}"\n'
        f'branch = "{PUBLISHED.branch}"\nhub = "{PUBLISHED.hub}"\n'
    )
    git = ["git", "-C", str(course), "-c", "user.name=t", "-c", "user.email=t@t"]
    for step in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "the course"]):
        subprocess.run([*git, *step], check=True)
    worked_in(course / WORKED)
    start = time.monotonic()
    _, sources = build(base / "site", root=course)
    print(f"site built in {time.monotonic() - start:.1f} s")
    (base / "sources.pickle").write_bytes(pickle.dumps(sources))


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Built:
    """The website of a copy of the course, published at PUBLISHED: built once a run, by the
    first xdist worker that asks (support.shared), for the three test files that read it."""
    base = once(tmp_path_factory, "site", build_the_site)
    sources = pickle.loads((base / "sources.pickle").read_bytes())
    return Built(base / "site" / "html", sources, base / "course")


def worked_in(path: Path) -> None:
    """A notebook as a student leaves it (the walk of 2026-12-07): an answer written and the
    empty cell JupyterLab adds after the last one."""
    notebook = nbformat.read(path, as_version=4)
    answer = next(c for c in notebook.cells if "raise NotImplementedError()" in c.source)
    answer.source = answer.source.replace("raise NotImplementedError()", "return 0")
    notebook.cells.append(nbformat.v4.new_code_cell(""))
    nbformat.write(notebook, path)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def served(built) -> Iterator[dict[str, Path]]:
    """The site served on 127.0.0.1 as a visitor's browser gets it: {address: page}."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(built.html))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    yield {f"{base}/{path.relative_to(built.html).as_posix()}": path for path in pages(built.html)}
    server.shutdown()
