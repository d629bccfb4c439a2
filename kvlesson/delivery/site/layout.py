"""The website's Sphinx sources: a configuration, a front page, the README, the notebooks' pages
and the guides, laid out as in the repository so that their links between them still work.

Nothing on a page is fetched from elsewhere: the theme's fonts and scripts are its own files,
myst-nb adds no widget manager from a CDN (`nb_ipywidgets_js` is empty: no page carries widget
state; each explorer is a still with its alt text), no math is rendered (so no MathJax), and the
README's Binder badge, an image from mybinder.org, becomes a text link.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import nbformat

from kvlesson.delivery.site.pages import PageStats, merged, relinked, shell_fences

BADGE = re.compile(r"\[!\[([^\]]*)\]\([^)]*\)\]\(([^)]*)\)")  # [![alt](image)](link)
CONF = """# Written by kvlesson site: the course as an offline static website.
project = "kvlesson: what do an LLM server's settings change?"
author = "the kvlesson course"
extensions = ["myst_nb"]
language = "en"
html_theme = "sphinx_book_theme"
html_title = "kvlesson"
html_copy_source = False  # the pages are the text; no .ipynb copies beside them
html_show_sourcelink = False
html_theme_options = {"use_download_button": False, "use_fullscreen_button": False,
                      "show_toc_level": 2, "navigation_with_keys": False}
html_static_path = ["_static"]
html_css_files = ["course.css"]
nb_execution_mode = "off"  # the outputs are the instructor notebooks' own, already executed
nb_output_stderr = "remove"
nb_ipywidgets_js = {}  # no widget manager from a CDN: explorers are stills
myst_heading_anchors = 4  # the guides link to sections down to ####
myst_enable_extensions = []
suppress_warnings = ["mystnb.unknown_mime_type"]
exclude_patterns = ["_build"]
"""
CSS = """/* the course's stills and tables on the site */
.kvlesson-still { border-left: 4px solid #0072B2; padding-left: 0.75em; }
.kvlesson-still img, .cell_output img { max-width: 100%; height: auto; }
table.kvlesson-table caption { caption-side: top; text-align: left; font-weight: 600; }
/* Reflow at 320 px (WCAG 1.4.10): the page never scrolls sideways; a long code line, a wide
   table or a wide output scrolls inside its own box (the theme makes such boxes focusable). */
.bd-container, .bd-container__inner, .bd-main, .bd-content, .bd-article-container, .bd-article {
  min-width: 0; max-width: 100%; }
.bd-article pre, .bd-article div.highlight, .bd-article .cell_output, .bd-article .output,
.bd-article .pst-scrollable-table-container { max-width: 100%; overflow-x: auto; }
.bd-article pre { white-space: pre; }
.bd-article code.literal, .bd-article code.literal span.pre { white-space: normal;
  overflow-wrap: anywhere; }
.bd-article h1, .bd-article h2, .bd-article h3, .bd-article h4 { overflow-wrap: anywhere; }
"""
INDEX = """# kvlesson: what do an LLM server's settings change?

A GPU's memory is one fixed budget. This course shows, with numbers, charts and exercises,
what an LLM server's memory settings (vLLM's `gpu_memory_utilization`, `max_model_len` and
`max_num_seqs`) move between the model's weights, a working reserve, the KV-cache pool and an
unused part.

This website is for reading: each notebook's text with the figures and tables it draws. The
exercises, their self-checks and the explorers' sliders need Python running: open the course
in JupyterLab (see *About the course*) to work them.

```{{toctree}}
:caption: About the course
:maxdepth: 1

README
```

```{{toctree}}
:caption: The course
:maxdepth: 1

{notebooks}
```

```{{toctree}}
:caption: For instructors
:maxdepth: 1

{guides}
```
"""


@dataclass(frozen=True)
class Sources:
    """The laid-out sources: their folder, and each notebook page's numbers."""

    folder: Path
    pages: dict[str, PageStats]


def lay_out(root: Path, folder: Path) -> Sources:
    """Write the website's sources for the course repository `root` into `folder` (emptied)."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "_static").mkdir(parents=True)
    notebooks = sorted((root / "notebooks").glob("*/*.ipynb"))
    guides = sorted((root / "docs").glob("*.md"))
    pages = {PurePosixPath("README.md")}
    pages |= {PurePosixPath(p.relative_to(root).as_posix()) for p in [*notebooks, *guides]}
    (folder / "conf.py").write_text(CONF)
    (folder / "_static" / "course.css").write_text(CSS)
    (folder / "index.md").write_text(
        INDEX.format(
            notebooks="\n".join(p.relative_to(root).with_suffix("").as_posix() for p in notebooks),
            guides="\n".join(p.relative_to(root).with_suffix("").as_posix() for p in guides),
        )
    )
    readme = BADGE.sub(
        lambda m: f"[Open the course on {m.group(1)} (needs the internet)]({m.group(2)})",
        (root / "README.md").read_text(),
    )
    (folder / "README.md").write_text(relinked(readme, PurePosixPath("README.md"), pages))
    for guide in guides:
        here = PurePosixPath(guide.relative_to(root).as_posix())
        (folder / here).parent.mkdir(parents=True, exist_ok=True)
        (folder / here).write_text(relinked(guide.read_text(), here, pages))
    if (root / "docs" / "images").is_dir():
        shutil.copytree(root / "docs" / "images", folder / "docs" / "images")
    stats = {}
    for release in notebooks:
        here = PurePosixPath(release.relative_to(root).as_posix())
        solution = root / "solutions" / release.relative_to(root / "notebooks")
        page, stats[here.parent.name] = merged(
            nbformat.read(release, as_version=4), nbformat.read(solution, as_version=4), str(here)
        )
        for cell in page.cells:
            if cell.cell_type == "markdown":
                cell.source = shell_fences(relinked(cell.source, here, pages))
        (folder / here).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(page, folder / here)
    return Sources(folder, stats)
