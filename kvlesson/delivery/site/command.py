"""`kvlesson site`: lay out the website's sources and build them with Sphinx.

    kvlesson site                 # into site/_build/html
    kvlesson site --out DIR       # into DIR/html (sources in DIR/src)

Sphinx runs as its own process with warnings as errors (`-W`): a broken link or a page that
cannot be read stops the build. The explorers' frames are worked out first, in this process.
Needs the course and site extras: pip install -e ".[course,site]".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from kvlesson.delivery.site.layout import Sources, lay_out
from kvlesson.delivery.site.pages import Mismatch
from kvlesson.delivery.site.published import SETTING, published
from kvlesson.delivery.site.ways import START

ROOT = Path(__file__).resolve().parents[3]  # the course repository: kvlesson/delivery/site/


def build(out: Path, root: Path = ROOT, quiet: bool = True) -> tuple[Path, Sources]:
    """Build the website of the course at `root` into out/html; its folder, and its sources'
    account (pages, explorers' frames, what to say)."""
    sources = lay_out(root, out / "src")
    html = out / "html"
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-W",
        "--keep-going",
        "-j",
        "2",
        "-d",
        str(out / "doctrees"),
        str(sources.folder),
        str(html),
    ]
    done = subprocess.run([*command, "-q"] if quiet else command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"sphinx-build failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return html, sources


def arguments(parser: argparse.ArgumentParser) -> None:
    """`kvlesson site`'s arguments."""
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "site" / "_build",
        help="the folder to build in (default: site/_build); the pages go to OUT/html",
    )


def run(args: argparse.Namespace) -> int:
    """Build the website; say where it is, what it holds, or why it could not be built."""
    start = time.monotonic()
    for module, extra in (("sphinx", "site"), ("nbgrader", "course"), ("anywidget", "course")):
        try:
            __import__(module)  # only to say what is missing; Sphinx runs in its own process
        except ImportError as error:
            raise ValueError(
                f"the website needs the {extra} extra ({module} is missing): "
                'pip install -e ".[course,site]"'
            ) from error
    try:
        html, sources = build(args.out.resolve())
    except Mismatch as error:
        raise ValueError(str(error)) from error
    for note in [*sources.notes, where_published(ROOT)]:
        print(note)
    moved = [cost for costs in sources.moved.values() for cost in costs]
    print(
        f"explorers moving from their frames: {len(moved)}, with {sum(m.frames for m in moved)} frames "
        f"({sum(m.size for m in moved) / 1e6:.1f} MB of pictures)"
    )
    print(
        f"the course's website is in {html} ({time.monotonic() - start:.0f} s); serve it with "
        f"python -m http.server --directory {html} --bind 127.0.0.1"
    )
    return 0


def where_published(root: Path) -> str:
    """What the website says about where to open a notebook, and where that comes from."""
    where = published(root)
    if not where.repository:
        return (
            f"{SETTING} names no repository: the pages say they have no Binder or hub link "
            "(set it to give them those links)"
        )
    hub = f", a hub at {where.hub}" if where.hub else ", no hub"
    return (
        f"the pages open notebooks from {where.repository} ({where.branch}{hub}; {SETTING}); "
        f"the README's Binder badge: {where.badge(START)}"
    )
