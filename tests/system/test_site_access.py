"""The website against WCAG 2.1 AA, in Debian's Chromium, on every page (each notebook's
page holds all its outputs):

* axe-core (WCAG 2.0 and 2.1, A and AA) finds nothing at 1280 px, at 320 px, at 200% zoom and
  in dark mode, and no page sends a request off 127.0.0.1; in each of them no page logs an
  error or fails to load a file;
* at 320 px and at 200% zoom (WCAG 1.4.10) no page scrolls sideways, no text is cut off at the
  window's edge or inside a box that hides it, and every box that scrolls sideways takes the
  keyboard's focus (2.1.1);
* every control the keyboard reaches shows where the focus is (2.4.7), at 1280 and 320 px;
* the search's result count is said in a live region (4.1.3); the theme's tooltips close with
  Escape (1.4.13).

Pages come from tests/support/site.py (built once a session). About two minutes: axe four times
on some twenty pages, and each page loaded once more in each condition for the other checks
(`walked`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

import pytest

from support import axe
from support.browser import chromium
from support.patience import HANG_MS

CONDITIONS = {
    "1280 px": {"viewport": {"width": 1280, "height": 900}},
    "320 px": {"viewport": {"width": 320, "height": 640}},
    # 200% zoom on a 1280 px screen: a window 640 CSS px wide, two device pixels to each
    "200% zoom": {"viewport": {"width": 640, "height": 450}, "device_scale_factor": 2},
    "dark mode": {"viewport": {"width": 1280, "height": 900}, "color_scheme": "dark"},
}
SETTLE_MS = 500  # after a page loads: the theme's script gives scroll boxes their tab stops
# What breaks reflow, as a reader at this width meets it: the page scrolling sideways, text
# past the window's edge (unless inside a box that scrolls), text cut off by a box that hides
# what overflows it, a box that scrolls sideways but takes no focus (the keyboard cannot
# scroll it). Visually hidden text (1 px, for screen readers) is no text on screen.
REFLOW = """() => {
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
      (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  const scrolls = (e) => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const inScroll = (e) => { for (let a = e.parentElement; a; a = a.parentElement)
      if (scrolls(a) && a.scrollWidth > a.clientWidth + 1) return true; return false; };
  const shown = (e) => { const s = getComputedStyle(e); const r = e.getBoundingClientRect();
      return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 1 && r.height > 1; };
  const text = (e) => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
  const found = [];
  if (document.documentElement.scrollWidth > innerWidth + 1)
    found.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
  const area = document.querySelector('.bd-article-container') || document.querySelector('main');
  for (const e of area.querySelectorAll('*')) {
    if (!shown(e)) continue;
    const s = getComputedStyle(e);
    if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0) {
      if (scrolls(e) && e.tabIndex < 0) found.push('a scroll box the keyboard cannot reach: ' + name(e));
      if (['hidden', 'clip'].includes(s.overflowX) && e.innerText.trim()) found.push('text cut off: ' + name(e));
    }
    const right = e.getBoundingClientRect().right;
    if (text(e) && right > innerWidth + 1 && !inScroll(e))
      found.push('text past the edge (' + Math.round(right) + ' px): ' + name(e));
  }
  return [...new Set(found)].slice(0, 8);
}"""
# Every control the keyboard reaches on the page, focused in turn (after a key press, so that
# the browser draws focus as for a keyboard user): those that show no outline and no shadow.
UNFOCUSED = """() => {
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
      (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '') +
      ' "' + (e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 30) + '"';
  const reached = [...document.querySelectorAll(
      'a[href], button, input, select, textarea, summary, [tabindex]')]
    .filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0
      && getComputedStyle(e).visibility !== 'hidden' && !e.closest('[inert]'));
  const missing = [];
  let focused = 0;
  for (const e of reached) {
    e.focus();
    if (document.activeElement !== e) continue;
    focused += 1;
    const s = getComputedStyle(e);
    const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
      || (s.boxShadow && s.boxShadow !== 'none');
    if (!ring) missing.push(name(e));
  }
  return [focused, missing];
}"""


def kept_here(route, off_machine: list[str]) -> None:
    """Let a request to 127.0.0.1 through; abort any other, and note it."""
    if urlparse(route.request.url).hostname == "127.0.0.1":
        route.continue_()
    else:
        off_machine.append(route.request.url)
        route.abort()


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_axe_finds_nothing_at_every_width_and_in_dark_mode(served, built, condition):
    off_machine: list[str] = []
    found = {}
    with chromium() as browser:
        context = browser.new_context(**CONDITIONS[condition])
        context.route("**/*", lambda route: kept_here(route, off_machine))
        axe.watch(context)
        for address, broken in axe.on_pages(context, list(served)).items():
            if broken:
                found[str(served[address].relative_to(built.html))] = [str(v) for v in broken]
        context.close()
    assert found == {}, "\n".join(f"{page}: {v}" for page, vs in found.items() for v in vs)
    assert off_machine == [], f"requests that would leave the machine: {off_machine}"


REFLOWING = ("320 px", "200% zoom")  # where WCAG 1.4.10 asks that nothing scrolls sideways
FOCUSING = ("1280 px", "320 px")  # where every control's focus ring is looked for


@dataclass
class Walk:
    """What the checks found on every page of the site loaded once in one condition."""

    problems: list[str]  # console errors, script errors, files that failed to load
    reflow: dict[str, list[str]]  # by page: what breaks reflow (REFLOWING only)
    unfocused: dict[str, list[str]]  # by page: controls that show no focus ring (FOCUSING only)
    focused: int  # controls the keyboard reached and focused, on every page
    theme: str  # the theme the last page was drawn in


WALKS: dict[str, Walk] = {}


def walked(served, built, condition: str) -> Walk:
    """Every page as a reader loads it in `condition` (no axe, whose own fetches of a style
    sheet's imports go astray), once a run for the tests below that read it: loading and
    settling the pages is most of their time. On each page, once settled: its reflow, then
    (after a key press, so that the browser draws focus as for a keyboard user) its focus."""
    if condition in WALKS:
        return WALKS[condition]
    walk = Walk([], {}, {}, 0, "")
    with chromium() as browser:
        context = browser.new_context(**CONDITIONS[condition])
        problems = walk.problems
        context.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        context.on("weberror", lambda e: problems.append(f"script error: {e.error}"))
        context.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
        context.on(
            "response", lambda r: r.status >= 400 and problems.append(f"{r.status}: {r.url}")
        )
        page = context.new_page()
        for address, path in served.items():
            name = str(path.relative_to(built.html))
            page.goto(address, wait_until="load")
            page.wait_for_timeout(SETTLE_MS)
            if condition in REFLOWING and (broken := page.evaluate(REFLOW)):
                walk.reflow[name] = broken
            if condition in FOCUSING:
                page.keyboard.press("Tab")
                focused, missing = page.evaluate(UNFOCUSED)
                walk.focused += focused
                if missing:
                    walk.unfocused[name] = missing
        walk.theme = page.evaluate("document.documentElement.dataset.theme")
        context.close()
    WALKS[condition] = walk
    return walk


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_no_page_logs_an_error_or_misses_a_file(served, built, condition):
    """Each page as a reader loads it: no error in the console, no script error, no file that
    fails to load; in dark mode, the pages are drawn dark."""
    walk = walked(served, built, condition)
    assert walk.problems == [], "\n".join(sorted(set(walk.problems)))
    assert (walk.theme == "dark") == (condition == "dark mode"), walk.theme


@pytest.mark.parametrize("condition", REFLOWING)
def test_every_page_reflows(served, built, condition):
    """WCAG 1.4.10 at 320 CSS px (1280 px at 400%) and at 200% zoom; 2.1.1 for what scrolls."""
    broken = walked(served, built, condition).reflow
    assert broken == {}, "\n".join(f"{p}: {f}" for p, fs in broken.items() for f in fs)


@pytest.mark.parametrize("condition", FOCUSING)
def test_focus_shows_on_every_control(served, built, condition):
    """WCAG 2.4.7: every link, button, slider and scroll box the keyboard reaches shows a ring
    (an outline or a shadow) when it has the focus."""
    walk = walked(served, built, condition)
    assert walk.focused > 200, f"only {walk.focused} controls focused on {len(served)} pages"
    missing = walk.unfocused
    assert missing == {}, "\n".join(f"{p}: {m}" for p, ms in missing.items() for m in ms)


def test_the_search_says_how_many_pages_it_found(served):
    """WCAG 4.1.3: the result count Sphinx writes after a search reaches a live region."""
    search = next(a for a in served if a.endswith("/search.html"))
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{search}?q=pool")
        status = page.locator("#kvlesson-search-status")
        assert status.get_attribute("role") == "status"
        status.filter(has_text="Search finished").wait_for(timeout=HANG_MS)
        words = status.inner_text()
        found = page.locator("#search-results .search-summary").inner_text()
        assert words == found and "pages matching" in words


def test_the_themes_tooltips_close_with_escape(served):
    """WCAG 1.4.13: the sidebar button's tooltip, opened by the keyboard's focus, closes with
    Escape and the focus stays on the button."""
    front = next(a for a in served if a.endswith("/index.html"))
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(front)
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.classList.contains('primary-toggle')"):
                break
        else:
            pytest.fail("Tab never reached the sidebar's toggle")
        tooltip = page.locator(".tooltip.show")
        tooltip.wait_for(timeout=HANG_MS)
        page.keyboard.press("Escape")
        tooltip.wait_for(state="detached", timeout=HANG_MS)
        assert page.evaluate("document.activeElement.classList.contains('primary-toggle')")


def test_axe_as_run_here_finds_what_a_page_breaks():
    """The axe runs above (batched, in a watched context, split by selector) report a broken
    page: an image with no alt text inside a course-like node, an unnamed range input outside."""
    broken = (
        '<!DOCTYPE html><html lang="en"><head><title>t</title></head><body><main>'
        '<div class="out"><img src="data:image/png;base64,iVBORw0KGgo="></div>'
        '<input type="range"></main></body></html>'
    )
    with chromium() as browser:
        context = browser.new_context()
        axe.watch(context)
        found = axe.on_pages(context, [f"data:text/html,{broken}<!--{n}-->" for n in range(3)])
        page = context.new_page()
        page.set_content(broken)
        inside, outside = axe.split(page, ".out")
        context.close()
    assert [sorted(v.rule for v in vs) for vs in found.values()] == [["image-alt", "label"]] * 3
    assert [v.rule for v in inside] == ["image-alt"] and [v.rule for v in outside] == ["label"]


def test_the_reflow_and_focus_checks_find_what_a_page_breaks():
    """The checks above report a page built broken: text cut off in a hidden-overflow box,
    a box that scrolls with no tab stop, a button whose ring is taken away."""
    broken = (
        '<!DOCTYPE html><html lang="en"><head><title>t</title><style>'
        ".cut { width: 100px; overflow: hidden; white-space: nowrap; }"
        ".wide { width: 100px; overflow-x: auto; white-space: nowrap; }"
        "button:focus { outline: none; box-shadow: none; }"
        '</style></head><body><main><div class="cut">' + "a long line of text " * 8 + "</div>"
        '<div class="wide">'
        + "another long line " * 8
        + "</div><button>go</button></main></body></html>"
    )
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 320, "height": 640})
        page.set_content(broken)
        found = page.evaluate(REFLOW)
        page.keyboard.press("Tab")
        focused, missing = page.evaluate(UNFOCUSED)
    assert any(f.startswith("text cut off: div.cut") for f in found)
    assert any(f.startswith("a scroll box the keyboard cannot reach: div.wide") for f in found)
    assert focused == 1 and missing == ['button "go"']
