"""The website's Sphinx sources: a configuration, the front page and About, each notebook's
page with its explorers moving, and the guides, laid out as in the repository so that the
links between them still work.

The front page and About are the course's own pages for students (`site/index.md`,
`site/about.md`), filled in with the ways to start (`ways`) from where the course is
published (`published`); the README stays the repository's. Each notebook's page is made from
`solutions/` (`pages`), with the ways to work on it at its top and its release beside it to
download (`release`). Nothing on a page is fetched from elsewhere: the theme's fonts and
scripts are its own files, no widget manager comes from a CDN (`nb_ipywidgets_js` is empty;
the explorers move from frames, `moving`), and no math is rendered (so no MathJax).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import nbformat

from kvlesson.delivery.site import ways
from kvlesson.delivery.site.moving import Moved, all_done, jobs_of, restyler
from kvlesson.delivery.site.pages import PageStats, Restyle, page_of, relinked, shell_fences
from kvlesson.delivery.site.published import Published, published
from kvlesson.delivery.site.release import offered
from kvlesson.delivery.site.theme import CSS, ICON, SCRIPT

CONF = """# Written by kvlesson site (kvlesson/delivery/site/layout.py): the course as an offline website.
project = "kvlesson: what do an LLM server's settings change?"
author = "the kvlesson course"
extensions = ["myst_nb"]
language = "en"
html_theme = "sphinx_book_theme"
html_title = "What do an LLM server's settings change?"
html_copy_source = False  # the pages are the text; the release is offered beside each page
html_show_sourcelink = False
html_use_index = False  # the course has no index of terms: no empty Index page
html_favicon = "_static/kvlesson.svg"
html_context = {"default_mode": "auto"}  # light or dark as the reader's system says
html_theme_options = {"use_download_button": False, "use_fullscreen_button": False,
                      "show_toc_level": 2, "navigation_with_keys": False}
html_static_path = ["_static"]
html_extra_path = ["_extra"]  # each notebook's release and its explorers' frames
html_css_files = ["course.css"]
html_js_files = ["course.js"]
smartquotes = False  # "--ctx-size" stays two hyphens: flags and code read as typed
nb_execution_mode = "off"  # the outputs are the instructor notebooks' own, already executed
nb_output_stderr = "remove"
nb_ipywidgets_js = {}  # no widget manager from a CDN: the explorers move from their frames
myst_heading_anchors = 4  # the guides link to sections down to ####
myst_enable_extensions = []
suppress_warnings = ["mystnb.unknown_mime_type"]
exclude_patterns = ["_build", "_extra"]
"""
FILLED = re.compile(r"\{\{ *(\w+) *\}\}")  # a name the build fills in, in site/*.md


@dataclass
class Sources:
    """The laid-out sources: their folder, each notebook page's numbers, what its explorers
    cost, and what the build should say (a notebook offered from git, or not at all)."""

    folder: Path
    pages: dict[str, PageStats] = field(default_factory=dict)
    moved: dict[str, list[Moved]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def filled(text: str, values: dict[str, str], name: str) -> str:
    """`text` with each {{ name }} replaced by its value; an unknown name is an error."""

    def fill(match: re.Match) -> str:
        if match.group(1) not in values:
            raise ValueError(
                f"{name} asks for {{{{ {match.group(1)} }}}}, which the build "
                f"does not fill (it fills {', '.join(sorted(values))})"
            )
        return values[match.group(1)]

    return FILLED.sub(fill, text)


def lay_out(root: Path, folder: Path) -> Sources:
    """Write the website's sources for the course repository `root` into `folder` (emptied)."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "_static").mkdir(parents=True)
    (folder / "_extra").mkdir()
    (folder / "conf.py").write_text(CONF)
    (folder / "_static" / "course.css").write_text(CSS)
    (folder / "_static" / "course.js").write_text(SCRIPT)
    (folder / "_static" / "kvlesson.svg").write_text(ICON)
    where = published(root)
    solutions = sorted((root / "solutions").glob("*/*.ipynb"))
    notebooks = [
        PurePosixPath("notebooks", *s.relative_to(root / "solutions").parts) for s in solutions
    ]
    guides = [
        PurePosixPath(p.relative_to(root).as_posix()) for p in sorted((root / "docs").glob("*.md"))
    ]
    pages = {PurePosixPath("index.md"), PurePosixPath("about.md"), *notebooks, *guides}
    front_pages(root, folder, where, notebooks, guides, pages)
    for here in guides:
        (folder / here).parent.mkdir(parents=True, exist_ok=True)
        (folder / here).write_text(relinked((root / here).read_text(), here, pages))
    if (root / "docs" / "images").is_dir():
        shutil.copytree(root / "docs" / "images", folder / "docs" / "images")
    return course_pages(root, folder, where, solutions, notebooks, pages)


def front_pages(
    root: Path,
    folder: Path,
    where: Published,
    notebooks: list[PurePosixPath],
    guides: list[PurePosixPath],
    pages: set[PurePosixPath],
) -> None:
    """The front page and About (site/index.md, site/about.md) with the ways to start and
    the lists of pages filled in."""
    values = {
        "start": ways.start_list(where),
        "binder": ways.about_binder(where),
        "hub": ways.about_hub(where),
        "own": ways.about_own(where),
        "notebooks": "\n".join(str(p.with_suffix("")) for p in notebooks),
        "guides": "\n".join(str(p.with_suffix("")) for p in guides),
    }
    for page in ("index.md", "about.md"):
        text = filled((root / "site" / page).read_text(), values, f"site/{page}")
        (folder / page).write_text(relinked(text, PurePosixPath(page), pages))


def course_pages(
    root: Path,
    folder: Path,
    where: Published,
    solutions: list[Path],
    notebooks: list[PurePosixPath],
    pages: set[PurePosixPath],
) -> Sources:
    """Every notebook's page, its explorers' frames worked out first (all of them together,
    in WORKERS processes), and what the build cost and should say."""
    sources = Sources(folder)
    read = [nbformat.read(solution, as_version=4) for solution in solutions]
    jobs = [
        jobs_of(nb, s.parent, folder / "_extra" / here.parent, here.stem)
        for here, s, nb in zip(notebooks, solutions, read)
    ]
    finished = iter(all_done([job for page in jobs for job in page]))
    for here, solution, page_jobs in zip(notebooks, read, jobs):
        ends = [next(finished) for _ in page_jobs]
        sources.moved[here.parent.name] = [end.cost for end in ends if end.cost is not None]
        sources.notes += [end.said for end in ends if end.said]
        notebook_page(root, folder, here, solution, where, pages, restyler(ends), sources)
    return sources


def notebook_page(
    root: Path,
    folder: Path,
    here: PurePosixPath,
    solution: nbformat.NotebookNode,
    where: Published,
    pages: set[PurePosixPath],
    restyle: Restyle,
    sources: Sources,
) -> None:
    """Write the page of the notebook at `here` (from its instructor notebook `solution`, its
    explorers moving by `restyle`) and its release to download; note what to say."""
    page, sources.pages[here.parent.name] = page_of(solution, str(here), restyle)
    release = offered(root, here, solution)
    extra = folder / "_extra" / here.parent
    extra.mkdir(parents=True, exist_ok=True)
    if release.text is not None:
        (extra / here.name).write_text(release.text)
    if release.note:
        sources.notes.append(release.note)
    why_not = "this copy of the website was built from a copy of the course where it differs from the release"
    box = ways.notebook_ways(where, here, here.name if release.text else None, why_not)
    page.cells.insert(1, nbformat.v4.new_markdown_cell(box))
    for cell in page.cells:
        if cell.cell_type == "markdown":
            cell.source = shell_fences(relinked(cell.source, here, pages))
    (folder / here).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(page, folder / here)
