"""A real browser: JupyterLab in headless Chromium, every notebook run, every explorer moved.

The course's explorers only exist in a live page: a slider in the browser
sends its value to the kernel, which redraws a caption and a PNG and sends
them back. This module starts JupyterLab (temporary config, runtime, settings
and workspace folders; no token; the news pop-up off) on a copy of the
student notebooks with every answer filled in from solutions/, opens each
notebook in Debian's Chromium through Playwright, runs all its cells, and then
moves the explorer's main slider with the keyboard, as a student would:

* the caption must become exactly what kvlesson says for the new slider value,
  and the explorer's image must change;
* no cell may show an error or a traceback, and no widget may fail to display.

* axe-core (WCAG 2.0 and 2.1, A and AA) finds no violation in what the course renders
  (outputs: figures, tables, explorers; Markdown cells) once the notebook has run and the
  explorer is drawn; what it finds in JupyterLab's own interface is printed apart, not failed;
* every control of the explorer is reached with Tab, in order.

A screenshot of each explorer after the move goes to artifacts/ at the
repository root (gitignored). Needs /usr/bin/chromium (`apt-get install -y
chromium`); without it the tests fail, they do not skip. Every server and
browser started here is stopped by its process id, also when a test fails.
Takes about a minute.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator

import pytest
from playwright.sync_api import Locator

import kvlesson as kv
from kvlesson.lesson import explorers, sentences
from kvlesson.lesson.real_server_explorer import real_view
from kvlesson.lesson.traffic_explorer import DAY, RATES, traffic_view
from kvlesson.memory.specs import as_measured
from kvlesson.memory.startup import PROFILED_BYTES
from support import axe
from support.browser import (
    ARTIFACTS,
    open_notebook,
    parameters,
    problems_on_page,
    require_chromium,
    run_all,
    served_lab,
)
from support.patience import HANG_MS

PRESSES = 3  # arrow-key presses on a slider handle


@dataclass(frozen=True)
class Explorer:
    """An assignment's explorer: its slider (by description), the key that moves it, and the
    caption kvlesson gives after PRESSES presses, from the notebook's parameters."""

    assignment: str
    slider: str
    key: str

    def caption_after_move(self, parameters: dict) -> str:
        """The caption text (Markdown bold removed, as the browser shows it) after the move."""
        gpu, model = kv.gpu(parameters["GPU"]), kv.model(parameters["MODEL"])
        share, longest, cap = parameters["SHARE"], parameters["LONGEST"], parameters["CAP"]
        if self.assignment == "01_floor_plan":
            caption = sentences.floor_view(share - PRESSES, gpu, model).caption
        elif self.assignment == "02_ceiling":
            choices = sorted(set(explorers.CEILING_CHOICES) | {longest})
            longer = choices[choices.index(longest) + PRESSES]
            caption = sentences.ceiling_view(share, longer, gpu, model).caption
        elif self.assignment == "03_cap_sweep":
            caption = sentences.sweep_view(
                kv.lesson_chats(), share - PRESSES, longest, gpu, model
            ).caption(cap)
        elif self.assignment == "05_real_server":
            caption = real_view(gpu, model, 1, "bf16", "auto", share - PRESSES, longest).caption
        elif self.assignment == "07_wrap_up":  # the floor plan on another card, as measured
            caption = sentences.floor_view(
                share - PRESSES,
                as_measured(kv.gpu("H100_80GB")),
                kv.model("QWEN25_7B"),
                PROFILED_BYTES,
            ).caption
        elif self.assignment == "06_traffic":  # arrivals 1 -> 5 chats/s, as the notebook calls it
            faster = RATES[RATES.index(1.0) + PRESSES]
            caption = traffic_view(
                kv.lesson_chats(n=DAY),
                faster,
                512,
                min(cap, 128),
                share=share,
                longest=longest,
                gpu=gpu,
                model=model,
            ).caption
        else:
            hand = [kv.Chat(prompt=30, reply=10), kv.Chat(prompt=30, reply=10)]
            pause = explorers.PauseExplorer(hand, blocks=4, cap=10, gpu=gpu, model=model)
            caption = pause.compute((1 + PRESSES,)).caption  # the step slider starts at 1
        return str(caption).replace("**", "")


EXPLORERS = [
    Explorer("01_floor_plan", "share (%)", "ArrowLeft"),
    Explorer("02_ceiling", "longest", "ArrowRight"),
    Explorer("03_cap_sweep", "share (%)", "ArrowLeft"),
    Explorer("04_preemption", "step", "ArrowRight"),
    Explorer("05_real_server", "share (%)", "ArrowLeft"),
    Explorer("06_traffic", "arrivals", "ArrowRight"),
    Explorer("07_wrap_up", "share (%)", "ArrowLeft"),
]
COURSE_NODES = ".jp-OutputArea-output, .jp-MarkdownOutput"  # what the course renders
CONTROLS = "input, select, textarea, button"  # what a student operates in an explorer


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[str]:
    """JupyterLab serving the answered notebooks with explorers, and notebook 0."""
    assignments = [*(e.assignment for e in EXPLORERS), "00_start_here"]
    with served_lab(tmp_path_factory.mktemp("lab"), assignments) as url:
        yield url


def explorer_box(panel: Locator, slider: str) -> Locator:
    """The explorer's widget box: the output VBox holding a slider described `slider`."""
    label = panel.page.locator(".kvlesson-slider label", has_text=slider)
    boxes = panel.locator(".jp-OutputArea-output .widget-vbox").filter(has=label)
    assert boxes.count() == 1, (
        f"expected one explorer with a {slider!r} slider, found {boxes.count()}"
    )
    return boxes.first


def slider_handle(box: Locator, slider: str) -> Locator:
    """The range input of the slider described `slider`, found by its label as a screen
    reader names it."""
    return box.get_by_role("slider", name=slider).first


def caption_and_image(box: Locator) -> tuple[str, str]:
    """The caption's text and the image's src (a new PNG as data at every redraw); the
    image is the last HTML widget, the caption the one before it."""
    caption = box.locator(".widget-html").nth(-2).inner_text().strip()
    src = box.locator("img").last.get_attribute("src") or ""
    return caption, src


def tab_order(box: Locator) -> list[str]:
    """Tab from the explorer's first control to its last: the accessible name (label) or
    text of each control focused on the way, while focus stays inside the box."""
    first = box.locator(CONTROLS).first
    first.focus()
    names = []
    for _ in range(box.locator(CONTROLS).count()):
        names.append(
            box.page.evaluate(
                """(box) => {
            const el = document.activeElement;
            if (!box.contains(el)) return null;
            return (el.labels && el.labels[0] ? el.labels[0].textContent : el.textContent).trim();
        }""",
                box.element_handle(),
            )
        )
        box.page.keyboard.press("Tab")
    return names


def move(box: Locator, explorer: Explorer) -> None:
    """Press the explorer's key PRESSES times on its slider's handle, as a student would."""
    handle = slider_handle(box, explorer.slider)
    handle.focus()
    for _ in range(PRESSES):
        handle.press(explorer.key)


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


@pytest.mark.parametrize("explorer", EXPLORERS, ids=lambda e: e.assignment)
def test_explorer_follows_its_slider(lab, page, explorer):
    """Run the notebook, move the slider with the keyboard: the caption becomes what
    kvlesson says for the new value and the figure is redrawn; no error anywhere."""
    panel = open_notebook(page, lab, explorer.assignment)
    run_all(page, panel)
    problems = problems_on_page(panel)
    assert not problems, "\n".join(problems)

    box = explorer_box(panel, explorer.slider)
    box.scroll_into_view_if_needed()
    caption, src = caption_and_image(box)
    assert caption and src, "the explorer shows no caption or no image before the move"
    expected = explorer.caption_after_move(parameters(explorer.assignment))
    assert caption != expected, "the caption already reads as after the move: nothing to test"

    move(box, explorer)
    caption_locator = box.locator(".widget-html").nth(-2)
    try:
        caption_locator.filter(has_text=expected).wait_for(timeout=HANG_MS)
    except Exception:
        pytest.fail(
            f"after {PRESSES} x {explorer.key} on {explorer.slider!r} the caption reads\n"
            f"{caption_locator.inner_text()}\ninstead of\n{expected}"
        )
    page.wait_for_function(
        "([box, old]) => [...box.querySelectorAll('img')].pop().src !== old",
        arg=[box.element_handle(), src],
        timeout=HANG_MS,
    )
    new_caption, new_src = caption_and_image(box)
    assert new_caption == expected
    assert new_src != src

    ARTIFACTS.mkdir(exist_ok=True)
    box.screenshot(path=str(ARTIFACTS / f"{explorer.assignment}-explorer.png"))
    problems = problems_on_page(panel)
    assert not problems, "after the move:\n" + "\n".join(problems)

    # every control is reached with Tab, each named, none skipped
    order = tab_order(box)
    assert None not in order and all(order), f"Tab order through the explorer: {order}"
    assert any(explorer.slider in name for name in order)
    # what the course renders has no WCAG A/AA violation; JupyterLab's own is listed apart
    course = course_violations(page, explorer.assignment)
    assert course == [], "\n".join(str(v) for v in course)
