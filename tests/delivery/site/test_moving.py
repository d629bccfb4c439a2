"""An explorer on the website (kvlesson.delivery.site.moving): its frames as small pictures
beside the page, and HTML whose sliders, live caption, picture and frames agree."""

from __future__ import annotations

import io
import json
import re

import nbformat
import numpy as np
import pytest
from PIL import Image

from kvlesson.delivery.site.moving import (
    all_done,
    jobs_of,
    moving_html,
    note,
    palette_png,
    restyler,
)
from kvlesson.lesson import explorers
from kvlesson.lesson.explorer_base import RECIPE
from kvlesson.lesson.frames import frames


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def frames_of(page: str) -> dict:
    found = re.search(
        r'<script type="application/json" class="kvlesson-frames">(.*?)</script>', page
    )
    return json.loads(found.group(1))


def test_a_frame_in_a_palette_keeps_every_pixel_within_three_levels_and_is_smaller():
    explorer = explorers.CeilingExplorer()
    small = palette_png(explorer.png)
    assert np.abs(pixels(small) - pixels(explorer.png)).max() <= 3
    assert len(small) < len(explorer.png) / 2


@pytest.mark.heavy  # seconds of a core: CI runs it, the quick tier does not
def test_the_page_explorer_starts_at_the_notebooks_setting_with_every_frame_beside_it(tmp_path):
    walked = frames(explorers.CeilingExplorer(share=80, longest=8_000))
    page, cost = moving_html(walked, 2, tmp_path / "f", "ceiling_frames/")
    data = frames_of(page)
    assert len(data["frames"]) == cost.frames == len(walked.shown) == 106
    files = {frame[2] for frame in data["frames"].values()}
    assert cost.files == len(files) == len(list((tmp_path / "f").glob("*.png")))
    assert cost.size == sum(p.stat().st_size for p in (tmp_path / "f").glob("*.png"))
    assert all(name.startswith("ceiling_frames/") for name in files)
    home = walked.shown[walked.home]
    assert (
        f'<div class="kvlesson-caption" role="status" aria-live="polite" aria-atomic="true">{home.caption}</div>'
        in page
    )
    assert data["frames"][",".join(map(str, walked.home))][:2] == [home.caption, home.alt]
    # each slider named by its label; the share holds its own numbers, 1 to 100
    assert '<label for="kvlesson-explorer-2-0">memory share (%)</label>' in page
    assert 'id="kvlesson-explorer-2-0" min="1" max="100" step="1" value="80"' in page
    assert (
        'id="kvlesson-explorer-2-1" min="0" max="6" step="1" value="2" aria-valuetext="8,000"'
        in page
    )
    assert (
        data["tracks"][0]["line"] == [1, 1] and data["tracks"][1]["line"] == []
    )  # 2,000 4,000 8,000
    assert "one slider moves at a time" in note(walked)


def test_a_caption_cannot_close_the_frames_script(tmp_path):
    walked = frames(explorers.PauseExplorer())
    last = (len(walked.tracks[0].labels) - 1,)  # not the first setting, shown as HTML
    odd = "<p></script><b>x</b></p>"
    walked.shown[last] = type(walked.shown[last])(None, odd, walked.shown[last].png, "alt")
    page, _ = moving_html(walked, 1, tmp_path, "f/")
    assert page.count("</script>") == 1
    assert frames_of(page)["frames"][str(last[0])][0] == odd


def test_only_an_output_with_a_recipe_moves_and_a_recipe_that_fails_stays_a_still(tmp_path):
    explorer = explorers.PauseExplorer()
    bundle, metadata = explorer._repr_mimebundle_()
    stored = {"output_type": "display_data", "data": bundle, "metadata": metadata}
    gone = {RECIPE: {"explorer": "kvlesson.lesson.explorers:Gone", "args": [], "kwargs": {}}}
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("explorers.PauseExplorer()", outputs=[stored]),
            nbformat.v4.new_code_cell("old", outputs=[dict(stored, metadata=gone)]),
        ]
    )
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))  # as read from a file
    jobs = jobs_of(notebook, tmp_path, tmp_path / "extra", "preemption")
    assert [(job.number, job.link) for job in jobs] == [
        (1, "preemption_frames/"),
        (2, "preemption_frames/"),
    ]
    ends = all_done(jobs, workers=1)
    assert ends[0].cost.frames == 18 and "explorer 2 stays a still" in ends[1].said
    restyle = restyler(ends)
    assert restyle({"output_type": "stream", "name": "stdout", "text": "x", "metadata": {}}) is None
    moved = restyle(notebook.cells[0].outputs[0])
    assert moved["metadata"] == {} and 'class="kvlesson-explorer"' in moved["data"]["text/html"]
    assert restyle(notebook.cells[1].outputs[0]) is None  # the still, as stored
