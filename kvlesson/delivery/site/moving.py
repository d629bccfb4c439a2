"""An explorer on the website: its sliders move its figure and its sentence, with no kernel.

The build makes the explorer again from the recipe its stored output holds (`lesson/recipe`)
and works out its frames (`lesson/frames`): what it shows at every stop of each slider from
the notebook's setting. Each frame's picture becomes a small file beside the page (the same
picture, in a 256-colour palette: a chart has a few flat colours, and every pixel stays
within 3 levels of the original), and the page gets the explorer as HTML: the notebook's
native range inputs named by their labels, the caption in a polite live region, the picture
with its alt text, and the frames' captions, alt texts and files as JSON, which the site's
script (`theme`) reads when a slider moves. A page then moves one slider at a time.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import html
import io
import json
import os
import struct
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PIL import Image

from kvlesson.delivery.site.pages import role
from kvlesson.lesson.explorer_base import RECIPE
from kvlesson.lesson.frames import Frames, frames
from kvlesson.lesson.recipe import made_again
from kvlesson.lesson.slider import number_line

PNG_LEVEL = 9  # zlib: a frame is written once and read many times
WORKERS = min(2, os.cpu_count() or 1)  # explorers worked out side by side (Sphinx's -j 2 too)


@dataclass(frozen=True)
class Moved:
    """What one explorer costs the website: its frames, the picture files, their bytes."""

    frames: int
    files: int
    size: int


def palette_png(png: bytes) -> bytes:
    """A chart's PNG in a 256-colour palette (Pillow's maximum-coverage quantizer, no
    dithering): about a third of the bytes, no colour more than a few levels off."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    out = io.BytesIO()
    image.quantize(256, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE).save(
        out, "PNG", compress_level=PNG_LEVEL
    )
    return out.getvalue()


def png_size(png: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its header (IHDR, right after the signature)."""
    return struct.unpack(">II", png[16:24])


def slider_html(frames: Frames, number: int, which: int) -> str:
    """One slider, as the notebook's: a labelled range input (the stops' own numbers when
    they are evenly spaced, else their positions) and its value in words."""
    track = frames.tracks[which]
    ident = f"kvlesson-explorer-{number}-{which}"
    line = number_line(track.labels)
    first, step = line or (0, 1)

    def value(index: int) -> str:
        return f"{first + step * index:.12g}"

    text = html.escape(track.labels[track.home])
    return (
        f'<div class="kvlesson-slider"><label for="{ident}">{html.escape(track.description)}'
        f'</label><input type="range" id="{ident}" min="{value(0)}" '
        f'max="{value(len(track.labels) - 1)}" step="{step:.12g}" value="{value(track.home)}" '
        f'aria-valuetext="{text}" disabled><output for="{ident}" aria-hidden="true">{text}'
        "</output></div>"
    )


def note(frames: Frames) -> str:
    """What the page's explorer does, and how it differs from the notebook's."""
    words = (
        "Move a slider: the figure, its description and the sentence follow, as in the notebook."
    )
    if len(frames.tracks) > 1:
        words += (
            " Here one slider moves at a time from the notebook's setting: moving one puts the"
            " others back at theirs; in the notebook you can combine them."
        )
    if frames.fixed:
        words += f" Set as in the notebook, which can change them: {frames.fixed}."
    return words


def moving_html(frames: Frames, number: int, folder: Path, link: str) -> tuple[str, Moved]:
    """The page's explorer number `number` (HTML), its pictures written into `folder`, which
    the page reaches as `link` (a relative address ending in '/')."""
    folder.mkdir(parents=True, exist_ok=True)
    table, written = {}, {}
    for setting, shown in frames.shown.items():
        picture = palette_png(shown.png)
        name = hashlib.sha256(picture).hexdigest()[:16] + ".png"
        if name not in written:
            (folder / name).write_bytes(picture)
            written[name] = len(picture)
        table[",".join(map(str, setting))] = [shown.caption, shown.alt, link + name]
    home = frames.shown[frames.home]
    caption, alt, src = table[",".join(map(str, frames.home))]
    width, height = png_size(home.png)
    data = {
        "tracks": [
            {"labels": list(t.labels), "home": t.home, "line": list(number_line(t.labels) or [])}
            for t in frames.tracks
        ],
        "frames": table,
    }
    script = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    sliders = "".join(slider_html(frames, number, i) for i in range(len(frames.tracks)))
    page = (
        f'<div class="kvlesson-explorer"><p class="kvlesson-explorer-note">'
        f"{html.escape(note(frames))}</p>{sliders}"
        "<noscript><p>Its sliders need JavaScript, which this browser does not run.</p>"
        "</noscript>"
        f'<div class="kvlesson-caption" role="status" aria-live="polite" aria-atomic="true">'
        f'{caption}</div><img class="kvlesson-frame" src="{html.escape(src)}" '
        f'alt="{html.escape(alt)}" width="{width}" height="{height}">'
        f'<script type="application/json" class="kvlesson-frames">{script}</script></div>'
    )
    return page, Moved(len(table), len(written), sum(written.values()))


@dataclass(frozen=True)
class Job:
    """One explorer of a page to move: its recipe, the notebook's folder (where its files
    are), its number on the page, the folder its pictures go to and the page's link to it."""

    recipe: dict
    made_in: Path
    number: int
    folder: Path
    link: str


@dataclass(frozen=True)
class Done:
    """A job's end: the page's explorer (HTML) and its cost, or None and why it stays a still."""

    page: str | None
    cost: Moved | None
    said: str = ""


def jobs_of(solution, made_in: Path, folder: Path, stem: str) -> list[Job]:
    """The explorers to move on a notebook's page, in the order the page shows them: each
    output of a text cell that holds a recipe."""
    recipes = [
        output["metadata"][RECIPE]
        for cell in solution.cells
        if cell.cell_type == "code" and role(cell) == "text"
        for output in cell.get("outputs", [])
        if RECIPE in output.get("metadata", {})
    ]
    return [
        Job(made, made_in, number, folder / f"{stem}_frames", f"{stem}_frames/")
        for number, made in enumerate(recipes, start=1)
    ]


def done(job: Job) -> Done:
    """Make a job's explorer again, work out its frames, write its pictures (in a worker)."""
    try:
        with contextlib.chdir(job.made_in):
            walked = frames(made_again(job.recipe))
    except Exception as error:  # a recipe from another version of the course
        return Done(
            None, None, f"{job.made_in.name}: explorer {job.number} stays a still ({error})"
        )
    return Done(*moving_html(walked, job.number, job.folder, job.link))


def all_done(jobs: list[Job], workers: int = WORKERS) -> list[Done]:
    """Every job done, `workers` at a time (each its own process: the frames are drawing)."""
    if workers <= 1 or len(jobs) <= 1:
        return [done(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(done, jobs))


def restyler(finished: list[Done]) -> Callable[[dict], dict | None]:
    """For a page's outputs, in order: an explorer's output becomes its job's moving HTML
    (or stays the still its job could not move); any other output stays as it is."""
    left = iter(finished)

    def restyle(output: dict) -> dict | None:
        if RECIPE not in output.get("metadata", {}):
            return None
        end = next(left)
        if end.page is None:
            return None
        output = copy.deepcopy(output)
        output["data"] = {"text/html": end.page, "text/plain": output["data"].get("text/plain", "")}
        output["metadata"] = {}
        return output

    return restyle
