"""axe-core in Chromium: the WCAG 2.0 and 2.1 A and AA rules, run on a page as it stands.

axe-core comes inside axe-playwright-python (no download). A violation is kept as the rule,
its impact and the nodes it names, for a message a person can act on.

axe costs seconds a page (its color-contrast rule looks at every piece of text), so the
tests spend it once: `watch` puts axe in every page a browser context opens (one script
compiled as the page loads, not sent again per page), `on_pages` runs it on a list of
addresses two tabs at a time (both cores when the machine has them), and `split` runs it
once on a whole page and sorts what it finds into the nodes inside a selector and the rest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import BrowserContext, Page

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE = Axe()
OPTIONS = json.dumps(
    {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"], "elementRef": True}
)
# The page's own violations, each node with its selector and whether it lies inside `inside`
# (a CSS selector, or null): only what the test reads crosses to Python.
RUN = (
    """(inside) => axe.run(document, %s).then(result => result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '),
        inside: inside !== null && n.element !== undefined && n.element.closest(inside) !== null}))
})))"""
    % OPTIONS
)
START = "(inside) => { window.__kvlessonAxe = (%s)(inside); }" % RUN


@dataclass(frozen=True)
class Violation:
    """One axe rule broken on a page: its id, impact, help text and the nodes' selectors."""

    rule: str
    impact: str
    help: str
    nodes: tuple[str, ...]

    def __str__(self) -> str:
        nodes = list(self.nodes)[:5]
        return f"{self.rule} ({self.impact}, {len(self.nodes)}): {self.help}: {nodes}"


def _kept(found: list[dict], inside: bool | None = None) -> list[Violation]:
    """The violations as found, each with only its nodes inside (True), outside (False) or
    all of them (None); a rule left with no node is dropped."""
    kept = []
    for v in found:
        nodes = tuple(n["target"] for n in v["nodes"] if inside is None or n["inside"] == inside)
        if nodes:
            kept.append(Violation(v["id"], v.get("impact") or "", v["help"], nodes))
    return kept


def watch(context: BrowserContext) -> None:
    """Put axe-core in every page `context` opens from now on, before the page's own scripts."""
    context.add_init_script(script=AXE.axe_script)


def _ready(page: Page) -> Page:
    """`page` with axe in it: put there now unless its context is watched."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(AXE.axe_script)
    return page


def violations(page: Page) -> list[Violation]:
    """The WCAG A/AA violations axe finds on `page`."""
    return _kept(_ready(page).evaluate(RUN, None))


def split(page: Page, inside: str) -> tuple[list[Violation], list[Violation]]:
    """One axe run on the whole of `page`: the violations on nodes inside the CSS selector
    `inside`, and those on every other node."""
    found = _ready(page).evaluate(RUN, inside)
    return _kept(found, inside=True), _kept(found, inside=False)


def on_pages(
    context: BrowserContext, addresses: Sequence[str], at_once: int = 2
) -> dict[str, list[Violation]]:
    """axe on every address, `at_once` tabs of the watched `context` side by side: each tab
    loads its page and starts axe, then each tab's result is read in turn."""
    tabs = [context.new_page() for _ in range(max(1, min(at_once, len(addresses))))]
    found: dict[str, list[Violation]] = {}
    try:
        for start in range(0, len(addresses), len(tabs)):
            batch = list(zip(tabs, addresses[start : start + len(tabs)]))
            for tab, address in batch:
                tab.goto(address, wait_until="load")
                tab.evaluate(START, None)
            for tab, address in batch:
                found[address] = _kept(tab.evaluate("window.__kvlessonAxe"))
    finally:
        for tab in tabs:
            tab.close()
    return found
