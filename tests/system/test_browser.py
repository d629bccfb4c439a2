"""A real browser: JupyterLab in headless Chromium, every notebook run, every slider moved.

The course's explorers only exist in a live page: a slider in the browser
sends its value to the kernel, which redraws a caption and a PNG and sends
them back. This module starts JupyterLab (temporary config, runtime, settings
and workspace folders; no token; the news pop-up off) on a copy of the
student notebooks with every answer filled in from solutions/, opens each
notebook in Debian's Chromium through Playwright, runs all its cells, and then,
as a keyboard user would, reaches every slider of its explorer with Tab from the
explorer's cell (13 sliders in 7 notebooks) and moves it with the arrow keys:

* the caption, a polite live region (WCAG 4.1.3, the same element throughout), must become
  exactly what the same explorer says at the new setting (made again here, in this process,
  from the recipe the instructor notebook's stored output keeps, and moved alike), and the
  explorer's image must change when that explorer's does; the focus stays on the slider;
* no cell may show an error or a traceback, and no widget may fail to display;
* axe-core (WCAG 2.0 and 2.1, A and AA) finds no violation in what the course renders
  (outputs: figures, tables, explorers; Markdown cells) once the notebook has run and the
  explorer is drawn; what it finds in JupyterLab's own interface is printed apart, not failed;
* every control of the explorer is reached with Tab, in order, and shows a focus ring.

A screenshot of each explorer after the moves goes to artifacts/ at the
repository root (gitignored). Needs /usr/bin/chromium (`apt-get install -y
chromium`); without it the tests fail, they do not skip. Every server and
browser started here is stopped by its process id, also when a test fails.
Takes a few minutes.
"""

from __future__ import annotations

import html
import re
import time
from typing import Iterator

import nbformat
import pytest
from playwright.sync_api import Locator

from kvlesson.lesson.explorer_base import RECIPE
from kvlesson.lesson.frames import sliders_of
from kvlesson.lesson.recipe import made_again
from support import axe
from support.browser import (
    ARTIFACTS,
    open_notebook,
    problems_on_page,
    require_chromium,
    run_all,
    served_lab,
)
from support.paths import ROOT
from support.patience import HANG_MS

PRESSES = 2  # arrow-key presses on each slider
KEYS = {"ArrowRight": 1, "ArrowLeft": -1}
EXPLORING = [
    "01_floor_plan",
    "02_ceiling",
    "03_cap_sweep",
    "04_preemption",
    "05_real_server",
    "06_traffic",
    "07_wrap_up",
]
COURSE_NODES = ".jp-OutputArea-output, .jp-MarkdownOutput"  # what the course renders
CONTROLS = "input, select, textarea, button"  # what a student operates in an explorer


def recipe_of(assignment: str) -> dict:
    """How the notebook's one explorer was made, from the instructor notebook's output."""
    (path,) = (ROOT / "solutions" / assignment).glob("*.ipynb")
    (found,) = [
        output["metadata"][RECIPE]
        for cell in nbformat.read(path, as_version=4).cells
        for output in cell.get("outputs", [])
        if RECIPE in output.get("metadata", {})
    ]
    return found


def words(caption_html: str) -> str:
    """A caption as the browser's inner text gives it."""
    return html.unescape(re.sub(r"<[^>]+>", "", caption_html)).strip()


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[str]:
    """JupyterLab serving the answered notebooks with explorers, and notebook 0."""
    assignments = [*EXPLORING, "00_start_here"]
    with served_lab(tmp_path_factory.mktemp("lab"), assignments) as url:
        yield url


def explorer_box(panel: Locator) -> Locator:
    """The explorer's widget box: the output VBox holding its live caption."""
    caption = panel.page.locator(".kvlesson-caption")
    boxes = panel.locator(".jp-OutputArea-output .widget-vbox").filter(has=caption)
    assert boxes.count() == 1, f"expected one explorer, found {boxes.count()}"
    return boxes.first


def image_of(box: Locator) -> str:
    """The explorer's picture as it stands (a new PNG as data at every redraw)."""
    return box.locator("img").last.get_attribute("src") or ""


def tab_to(panel: Locator, box: Locator, description: str) -> Locator:
    """Select the explorer's cell (its prompt), then Tab until the slider `description` has
    the focus, as a keyboard user gets there; the slider."""
    page = panel.page
    panel.locator(".jp-CodeCell").filter(has=page.locator(".kvlesson-caption")).locator(
        ".jp-InputPrompt"
    ).click()
    target = box.get_by_role("slider", name=description, exact=True)
    for _ in range(box.locator(CONTROLS).count() + 2):
        page.keyboard.press("Tab")
        if target.evaluate("(e) => e === document.activeElement"):
            return target
    raise AssertionError(f"Tab from the explorer's cell never reached its {description!r} slider")


def tab_order(box: Locator) -> tuple[list[str], list[str]]:
    """Tab from the explorer's first control to its last: the accessible name (label) or
    text of each control focused on the way, while focus stays inside the box; and the
    names of those that showed no focus ring (no outline, no shadow: WCAG 2.4.7)."""
    first = box.locator(CONTROLS).first
    first.focus()
    box.page.keyboard.press("Shift+Tab")  # the keyboard in use: focus drawn as for it
    box.page.keyboard.press("Tab")
    names, unringed = [], []
    for _ in range(box.locator(CONTROLS).count()):
        name, ring = box.page.evaluate(
            """(box) => {
            const el = document.activeElement;
            if (!box.contains(el)) return [null, true];
            const s = getComputedStyle(el);
            const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
                || (s.boxShadow && s.boxShadow !== 'none');
            return [(el.labels && el.labels[0] ? el.labels[0].textContent
                                                 : el.textContent).trim(), ring];
        }""",
            box.element_handle(),
        )
        names.append(name)
        if not ring:
            unringed.append(name)
        box.page.keyboard.press("Tab")
    return names, unringed


def course_violations(page, assignment: str) -> list:
    """axe's WCAG A/AA violations on what the course renders (outputs, Markdown), from one
    run on the whole page; those on the rest of the page, JupyterLab's own interface, are
    printed apart (rule, impact, how many nodes), not returned."""
    start = time.monotonic()
    course, lab = axe.split(page, COURSE_NODES)
    print(
        f"\n{assignment}: axe ({time.monotonic() - start:.1f} s), the course's nodes: "
        f"{len(course)} rules broken; JupyterLab's "
        f"own: {len(lab)} rules, {sum(len(v.nodes) for v in lab)} nodes: "
        + ", ".join(f"{v.rule} ({v.impact}, {len(v.nodes)})" for v in lab)
    )
    return course


# --- the tests -------------------------------------------------------------------------


def test_chromium_is_installed():
    """The browser tests need Debian's Chromium; say how to get it."""
    require_chromium()


def test_start_here_runs(lab, page):
    """Notebook 0 runs top to bottom in the browser without an error."""
    panel = open_notebook(page, lab, "00_start_here")
    run_all(page, panel)
    problems = problems_on_page(panel)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "00_start_here.png"))
    assert not problems, "\n".join(problems)
    course = course_violations(page, "00_start_here")
    assert course == [], "\n".join(str(v) for v in course)


@pytest.mark.parametrize("assignment", EXPLORING)
def test_every_slider_moves_by_key_from_tab_and_the_caption_is_said(lab, page, assignment):
    """Run the notebook; reach each slider with Tab and move it with the arrow keys: the live
    caption becomes what kvlesson says at the new setting and the figure is redrawn."""
    panel = open_notebook(page, lab, assignment)
    run_all(page, panel)
    problems = problems_on_page(panel)
    assert not problems, "\n".join(problems)

    box = explorer_box(panel)
    box.scroll_into_view_if_needed()
    caption = box.locator(".kvlesson-caption")
    assert (caption.get_attribute("role"), caption.get_attribute("aria-live")) == (
        "status",
        "polite",
    )
    caption.evaluate("(e) => { e.dataset.kept = 'yes'; }")
    mirror = made_again(recipe_of(assignment))  # moved alike, in this process
    assert caption.inner_text().strip() == words(mirror.caption.value)
    for slider in sliders_of(mirror):
        handle = tab_to(panel, box, slider.description)
        key = "ArrowRight" if slider.index + PRESSES < len(slider.labels) else "ArrowLeft"
        before, drawn = image_of(box), mirror.png
        for _ in range(PRESSES):
            handle.press(key)
        slider.index += KEYS[key] * PRESSES
        expected = words(mirror.caption.value)
        redrawn = mirror.png != drawn  # (a cap the day never reaches draws the same picture)
        try:
            caption.filter(has_text=expected).wait_for(timeout=HANG_MS)
        except Exception:
            pytest.fail(
                f"after {PRESSES} x {key} on {slider.description!r} the caption reads\n"
                f"{caption.inner_text()}\ninstead of\n{expected}"
            )
        if redrawn:
            page.wait_for_function(
                "([box, old]) => [...box.querySelectorAll('img')].pop().src !== old",
                arg=[box.element_handle(), before],
                timeout=HANG_MS,
            )
        else:
            assert image_of(box) == before, f"{slider.description}: a picture that should stay"
        assert caption.inner_text().strip() == expected
        assert handle.evaluate("(e) => e === document.activeElement"), "the focus left the slider"
    assert caption.evaluate("(e) => e.dataset.kept") == "yes", "the live region was replaced"

    ARTIFACTS.mkdir(exist_ok=True)
    box.screenshot(path=str(ARTIFACTS / f"{assignment}-explorer.png"))
    problems = problems_on_page(panel)
    assert not problems, "after the moves:\n" + "\n".join(problems)

    # every control is reached with Tab, each named, none skipped
    order, unringed = tab_order(box)
    assert None not in order and all(order), f"Tab order through the explorer: {order}"
    assert unringed == [], f"controls that show no focus ring: {unringed}"
    assert [s.description for s in sliders_of(mirror)] == [
        n for n in order if n in {s.description for s in sliders_of(mirror)}
    ]
    # what the course renders has no WCAG A/AA violation; JupyterLab's own is listed apart
    course = course_violations(page, assignment)
    assert course == [], "\n".join(str(v) for v in course)
