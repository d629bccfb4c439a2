"""axe-core in Chromium: the WCAG 2.0 and 2.1 A and AA rules, run on a page as it stands.

axe-core comes inside axe-playwright-python (no download). A violation is kept as the rule,
its impact and the nodes it names, for a message a person can act on.
"""

from __future__ import annotations

from dataclasses import dataclass

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE = Axe()


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


def violations(page: Page, context: str | dict | None = None) -> list[Violation]:
    """The WCAG A/AA violations axe finds on `page` (within `context`, a CSS selector or an
    axe context object, when given)."""
    options = {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]}
    found = AXE.run(page, context=context, options=options).response["violations"]
    return [Violation(v["id"], v.get("impact") or "", v["help"],
                      tuple(" ".join(n["target"]) if isinstance(n["target"], list) else
                            str(n["target"]) for n in v["nodes"])) for v in found]
