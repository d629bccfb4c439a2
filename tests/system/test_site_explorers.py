"""The website's explorers move without a kernel, by keyboard, as in JupyterLab: in Debian's
Chromium, every slider of every explorer (13 in 7 notebooks) is reached with Tab from the
explorer's note and moved with the arrow keys, Home and End; after each move the caption (a
polite live region, the same element throughout), the picture and its alt text are what the
same explorer shows at that setting in JupyterLab (made again here from the recipe its
stored output keeps), and the other sliders stand at the notebook's setting.

Pages come from tests/support/site.py (built once a session). About a minute.
"""

from __future__ import annotations

import html
import re

import nbformat

from kvlesson.lesson.explorer_base import RECIPE
from kvlesson.lesson.frames import sliders_of
from kvlesson.lesson.recipe import made_again
from support.browser import chromium
from support.paths import ROOT
from support.site import notebook_pages

KEYS = {"ArrowRight": 1, "ArrowLeft": -1}
PRESSES = 2


def recipes(name: str) -> list[dict]:
    """The recipes of a notebook's explorers, in the order its page shows them."""
    (path,) = (ROOT / "solutions" / name).glob("*.ipynb")
    return [
        output["metadata"][RECIPE]
        for cell in nbformat.read(path, as_version=4).cells
        for output in cell.get("outputs", [])
        if RECIPE in output.get("metadata", {})
    ]


def words(caption_html: str) -> str:
    """A caption as a browser's inner text gives it."""
    return html.unescape(re.sub(r"<[^>]+>", "", caption_html)).strip()


def expected(made: dict, which: int, index: int) -> tuple[str, str]:
    """The caption's words and the alt text the explorer shows with its slider `which` at
    `index`, the others at the notebook's setting (a fresh explorer, as JupyterLab's)."""
    explorer = made_again(made)
    sliders_of(explorer)[which].index = index
    return words(explorer.caption.value), explorer.alt


def tab_to(page, box, which: int) -> str:
    """From the explorer's note, Tab until slider `which` has the focus; its label."""
    box.locator(".kvlesson-explorer-note").click()
    target = box.locator("input[type=range]").nth(which)
    for _ in range(which + 3):
        page.keyboard.press("Tab")
        if target.evaluate("(e) => e === document.activeElement"):
            return target.evaluate("(e) => e.labels[0].textContent")
    raise AssertionError(f"Tab from the explorer's note never reached its slider {which}")


def test_every_slider_moves_by_key_and_shows_what_jupyterlab_shows(served, built):
    moved = 0
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for name, path in notebook_pages(built.html).items():
            made = recipes(name)
            address = next(a for a, p in served.items() if p == path)
            page.goto(address, wait_until="load")
            boxes = page.locator(".kvlesson-explorer")
            assert boxes.count() == len(made), name
            for number, recipe in enumerate(made):
                box = boxes.nth(number)
                caption = box.locator(".kvlesson-caption")
                assert (caption.get_attribute("role"), caption.get_attribute("aria-live")) == (
                    "status",
                    "polite",
                )
                caption.evaluate("(e) => { e.dataset.kept = 'yes'; }")
                sliders = sliders_of(made_again(recipe))
                for which, slider in enumerate(sliders):
                    label = tab_to(page, box, which)
                    assert label == slider.description
                    stops, home = len(slider.labels), slider.index
                    key = "ArrowRight" if home + PRESSES < stops else "ArrowLeft"
                    moves = [
                        ([key] * PRESSES, home + KEYS[key] * PRESSES),
                        (["Home"], 0),
                        (["End"], stops - 1),
                    ]
                    for keys, index in moves:
                        for pressed in keys:
                            page.keyboard.press(pressed)
                        words_now, alt = expected(recipe, which, index)
                        where = f"{name}, explorer {number + 1}, {label} after {keys}"
                        input_ = box.locator("input[type=range]").nth(which)
                        assert input_.evaluate("(e) => e === document.activeElement"), where
                        assert input_.get_attribute("aria-valuetext") == slider.labels[index], where
                        assert caption.inner_text().strip() == words_now, where
                        assert box.locator("img.kvlesson-frame").get_attribute("alt") == alt, where
                        others = [
                            box.locator("input[type=range]").nth(o).get_attribute("aria-valuetext")
                            for o in range(len(sliders))
                            if o != which
                        ]
                        assert others == [
                            s.labels[s.index] for o, s in enumerate(sliders) if o != which
                        ]
                        moved += 1
                assert caption.evaluate("(e) => e.dataset.kept") == "yes", (
                    "the live region was replaced"
                )
                src = box.locator("img.kvlesson-frame").get_attribute("src")
                assert (path.parent / src).is_file(), f"{name}: {src} is not beside the page"
    assert moved == 13 * 3, f"{moved // 3} sliders moved, not 13"
