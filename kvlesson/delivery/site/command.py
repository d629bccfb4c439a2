"""`kvlesson site`: lay out the website's sources and build them with Sphinx.

    kvlesson site                 # into site/_build/html
    kvlesson site --out DIR       # into DIR/html (sources in DIR/src)

Sphinx runs as its own process with warnings as errors (`-W`): a broken link or a page that
cannot be read stops the build. Needs the site extra: pip install -e ".[site]".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from kvlesson.delivery.site.layout import lay_out
from kvlesson.delivery.site.pages import Mismatch

ROOT = Path(__file__).resolve().parents[3]  # the course repository: kvlesson/delivery/site/


def build(out: Path, root: Path = ROOT, quiet: bool = True) -> Path:
    """Build the website of the course at `root` into out/html; its folder."""
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
    return html


def arguments(parser: argparse.ArgumentParser) -> None:
    """`kvlesson site`'s arguments."""
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "site" / "_build",
        help="the folder to build in (default: site/_build); the pages go to OUT/html",
    )


def run(args: argparse.Namespace) -> int:
    """Build the website; say where it is, or why it could not be built."""
    start = time.monotonic()
    try:
        import sphinx  # noqa: F401  (only to say what is missing; Sphinx runs in its own process)
    except ImportError as error:
        raise ValueError('the website needs the site extra: pip install -e ".[site]"') from error
    try:
        html = build(args.out.resolve())
    except Mismatch as error:
        raise ValueError(str(error)) from error
    print(
        f"the course's website is in {html} ({time.monotonic() - start:.0f} s); serve it with "
        f"python -m http.server --directory {html} --bind 127.0.0.1"
    )
    return 0
