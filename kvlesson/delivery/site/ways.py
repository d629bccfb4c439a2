"""The three ways to start, in words: on the front page, on About, atop every notebook's page.

Binder, a hub (nbgitpuller) or the student's own machine, each with its link when
`site/published.toml` gives the address (`published`), or a plain sentence saying that this
copy of the website was built without it. A notebook's page also offers the notebook itself
to download, when the build has the release's own copy (`release`).
"""

from __future__ import annotations

import html
from pathlib import PurePosixPath

from kvlesson.delivery.lab import FIRST
from kvlesson.delivery.site.published import Published

START = f"notebooks/{FIRST}"  # notebook 0, where a student starts
NO_REPOSITORY = (
    "this copy of the website was built without the address of the course's repository; "
    "your instructor can tell you where the course is"
)
NO_HUB = (
    "this copy of the website was built without the address of a hub; if your course has "
    "one, your instructor gives you its link"
)
BINDER_NOTE = (
    "needs the internet; it takes a minute or two to start, and a session ends when you leave "
    "it or after some minutes idle, so download your notebook before you go"
)
HUB_NOTE = (
    "the first click copies the course into your home folder; later clicks bring what changed "
    "without overwriting your work"
)


def start_list(published: Published) -> str:
    """The front page's three ways to start, as a Markdown list."""
    binder, hub = published.binder(START), published.on_hub(START)
    return "\n".join(
        [
            "- **On Binder**, with nothing to install: "
            + (
                f"[open notebook 0 on Binder]({binder}) ({BINDER_NOTE})."
                if binder
                else f"no link here: {NO_REPOSITORY}."
            ),
            "- **On your course's JupyterHub**: "
            + (
                f"[open notebook 0 on the hub]({hub}) ({HUB_NOTE})."
                if hub
                else f"no link here: {NO_HUB}."
            ),
            "- **On your own machine**, with Python 3.10 or newer: "
            "[get the course and open it](about.md#on-your-own-machine).",
        ]
    )


def about_binder(published: Published) -> str:
    """About's paragraph on Binder."""
    binder = published.binder(START)
    if not binder:
        return f"mybinder.org runs the course in your browser for free, but not from here: {NO_REPOSITORY}."
    return (
        f"[Open notebook 0 on Binder]({binder}). mybinder.org builds the course's environment "
        f"and opens JupyterLab in your browser, for free; it {BINDER_NOTE}."
    )


def about_hub(published: Published) -> str:
    """About's paragraph on a hub."""
    hub = published.on_hub(START)
    if not hub:
        return (
            f"A JupyterHub runs the course on your institution's servers. No link here: {NO_HUB}."
        )
    return (
        f"[Open notebook 0 on the hub]({hub}) (log in first if it asks). The link is "
        f"nbgitpuller's: {HUB_NOTE}. Your work stays in your home folder on the hub."
    )


def about_own(published: Published) -> str:
    """About's steps on the student's own machine: get the course, install it, open it."""
    if published.repository:
        get = (
            "With git and Python 3.10 or newer, in a terminal:\n\n```bash\n"
            f"git clone {published.repository}\ncd {published.folder}\n"
        )
    else:
        get = (
            f"Get the course's folder first ({NO_REPOSITORY}). Then, with Python 3.10 or newer, "
            "in a terminal in that folder:\n\n```bash\n"
        )
    return get + (
        "python3 -m venv .venv\n"
        ".venv/bin/pip install -r binder/requirements.txt\n"
        f".venv/bin/jupyter lab {START}\n```\n\n"
        "The install takes a minute or two, once; it puts the course's package and JupyterLab, "
        "at the versions the course is tested with, in the folder's own `.venv`. On Windows, "
        "write `py -m venv .venv`, then `.venv\\Scripts\\pip` and `.venv\\Scripts\\jupyter`. "
        "Your work stays in the notebooks of that folder."
    )


def notebook_ways(
    published: Published, path: PurePosixPath, download: str | None, why_not: str = ""
) -> str:
    """The box atop a notebook's page (raw HTML): download the notebook (`download`, its file
    name beside the page, or None and `why_not`), open it on Binder, open it on the hub."""
    about = "../" * (len(path.parts) - 1) + "about.html"
    items = []
    if download:
        items.append(
            f'<a href="{html.escape(download)}" download>Download {html.escape(download)}</a>, '
            "to open in JupyterLab with the course installed "
            f'(<a href="{about}#on-your-own-machine">how to set that up</a>)'
        )
    else:
        items.append(f"Download: no copy of the notebook here: {html.escape(why_not)}")
    binder, hub = published.binder(str(path)), published.on_hub(str(path))
    items.append(
        f'<a href="{html.escape(binder)}">Open it on Binder</a> ({BINDER_NOTE})'
        if binder
        else f"Binder: no link, {NO_REPOSITORY}"
    )
    items.append(
        f'<a href="{html.escape(hub)}">Open it on your course\'s hub</a> ({HUB_NOTE})'
        if hub
        else f"Hub: no link, {NO_HUB}"
    )
    listed = "".join(f"<li>{item}.</li>" for item in items)
    return (
        '<nav class="kvlesson-ways" aria-label="Work on this notebook">\n'
        f'<p class="kvlesson-ways-title">Work on this notebook</p><ul>{listed}</ul>\n</nav>\n'
    )
