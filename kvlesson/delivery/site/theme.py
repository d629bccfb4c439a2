"""What the website adds to sphinx-book-theme: its style, its script and its icon.

The style (`CSS`) keeps every page readable at 320 px (WCAG 1.4.10): a long code line, a wide
table or a printed table scrolls inside its own box, which the theme makes focusable when it
overflows (pydata-sphinx-theme 0.20 gives `pre`, `.cell_output > .output` and table boxes a
tab stop then); text outputs (a printed sentence, vLLM's error with its long address) wrap;
the previous/next links at a page's foot wrap instead of being cut. It gives the theme's
sidebar buttons the focus ring they lack (2.4.7), and draws the exercises' blanks and the
explorers (the slider's own look, `lesson/slider.py`).

The script (`SCRIPT`) resolves the theme's automatic colour mode before the page is drawn (a
reader in dark mode sees no light page first); moves the explorers from their frames
(`moving`); says the search's
result count in a live region (4.1.3: Sphinx writes it into a plain paragraph); and closes
the theme's tooltips with Escape (1.4.13: Bootstrap's tooltips stay open on Escape; the
theme's bundle gives `window.bootstrap`).
"""

from __future__ import annotations

from kvlesson.lesson.slider import CSS as SLIDER_CSS

CSS = (
    """/* the course's stills, tables and exercises on the site */
.kvlesson-still, .kvlesson-explorer { border-left: 4px solid #0072B2; padding-left: 0.75em; }
.kvlesson-still img, .kvlesson-explorer img, .cell_output img { max-width: 100%; height: auto; }
.kvlesson-explorer-note { font-style: italic; }
table.kvlesson-table caption { caption-side: top; text-align: left; font-weight: 600; }
.kvlesson-blank { border: 2px dashed var(--pst-color-border); border-radius: 4px;
  padding: 0.75em 1em; min-height: 4em; }
.tag_kvlesson-answer .cell_input { border: 2px dashed #0072B2; border-radius: 4px; }
.kvlesson-self-check { border-left: 4px solid var(--pst-color-border); padding-left: 0.75em; }
.kvlesson-ways { border: 1px solid var(--pst-color-border); border-radius: 4px;
  padding: 0.5em 1em; margin: 1em 0; }
.kvlesson-ways-title { font-weight: 600; margin-bottom: 0.25em; }
.kvlesson-ways ul { margin-bottom: 0; }
/* Reflow at 320 px (WCAG 1.4.10): the page never scrolls sideways; code, wide tables and
   printed tables scroll inside their own boxes (the theme gives a box that overflows a tab
   stop); text outputs and long words wrap. */
.bd-container, .bd-container__inner, .bd-main, .bd-content, .bd-article-container, .bd-article {
  min-width: 0; max-width: 100%; }
.bd-article pre, .bd-article div.highlight, .bd-article .cell_output > .output,
.bd-article .pst-scrollable-table-container { max-width: 100%; overflow-x: auto; }
.bd-article .cell_output { max-width: 100%; }
.bd-article pre { white-space: pre; }
.bd-article .cell_output .output.stream pre, .bd-article .cell_output .output.error pre {
  white-space: pre-wrap; overflow-wrap: anywhere; }
.bd-article code.literal, .bd-article code.literal span.pre { white-space: normal;
  overflow-wrap: anywhere; }
.bd-article h1, .bd-article h2, .bd-article h3, .bd-article h4, .bd-article p,
.bd-article li { overflow-wrap: anywhere; }
.prev-next-area { flex-wrap: wrap; gap: 0.5em; }
.prev-next-area a { min-width: 0; max-width: 100%; }
.prev-next-area a p.prev-next-title, .prev-next-info { min-width: 0; white-space: normal;
  overflow-wrap: anywhere; }
/* a visible focus ring on every control the keyboard reaches (WCAG 2.4.7): the theme's
   sidebar buttons have none of their own */
.primary-toggle:focus-visible, .secondary-toggle:focus-visible, .bd-header button:focus-visible,
.kvlesson-ways a:focus-visible, .bd-search input:focus-visible, form input:focus-visible {
  outline: 3px solid var(--pst-color-accent); outline-offset: 2px; }
.kvlesson-visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
"""
    + SLIDER_CSS
)

SCRIPT = """// kvlesson's website: explorers that move from their frames, and three fixes to the theme.
"use strict";

// The theme's "auto" colour mode, resolved as soon as this script runs (in the page's head),
// not after the page is drawn: a reader in dark mode sees no light page first.
(() => {
  const root = document.documentElement;
  if (!["light", "dark"].includes(root.dataset.theme))
    root.dataset.theme = matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
})();

function kvlessonExplorer(root) {
  const data = JSON.parse(root.querySelector("script.kvlesson-frames").textContent);
  const inputs = [...root.querySelectorAll("input[type=range]")];
  const readouts = [...root.querySelectorAll("output")];
  const caption = root.querySelector(".kvlesson-caption");
  const picture = root.querySelector("img.kvlesson-frame");
  const value = (track, index) => track.line.length ? track.line[0] + track.line[1] * index : index;
  const place = (track, input) => track.line.length
    ? Math.round((Number(input.value) - track.line[0]) / track.line[1]) : Number(input.value);
  const put = (which, index) => {
    const track = data.tracks[which];
    inputs[which].value = String(value(track, index));
    inputs[which].setAttribute("aria-valuetext", track.labels[index]);
    readouts[which].textContent = track.labels[index];
  };
  inputs.forEach((input, which) => {
    input.disabled = false;
    input.addEventListener("input", () => {
      const at = place(data.tracks[which], input);
      // one slider at a time: the others go back to the notebook's setting
      data.tracks.forEach((track, other) => { if (other !== which) put(other, track.home); });
      put(which, at);
      const key = data.tracks.map((track, other) => other === which ? at : track.home).join(",");
      const [words, alt, src] = data.frames[key];
      picture.alt = alt;
      picture.src = src;
      caption.innerHTML = words;
    });
  });
}

function kvlessonSearchStatus() {
  const results = document.getElementById("search-results");
  if (!results || document.getElementById("kvlesson-search-status")) return;
  const status = document.createElement("div");
  status.id = "kvlesson-search-status";
  status.className = "kvlesson-visually-hidden";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  results.before(status);
  new MutationObserver(() => {
    const summary = results.querySelector(".search-summary");
    const words = summary ? summary.textContent.trim() : "";
    if (words && status.textContent !== words) status.textContent = words;
  }).observe(results, { childList: true, subtree: true, characterData: true });
}

function kvlessonTooltipsCloseOnEscape() {
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !window.bootstrap || !window.bootstrap.Tooltip) return;
    document.querySelectorAll('[data-bs-toggle="tooltip"]').forEach((element) => {
      const tip = window.bootstrap.Tooltip.getInstance(element);
      if (tip) tip.hide();
    });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll(".kvlesson-explorer").forEach(kvlessonExplorer);
  kvlessonSearchStatus();
  kvlessonTooltipsCloseOnEscape();
});
"""

# The course's icon: a card's memory as four parts (weights, reserve, pool, unused), in the
# figures' Okabe-Ito colours; a page that names an icon asks no server for /favicon.ico.
ICON = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect x="1" y="6" width="30" height="20" rx="2" fill="#fff" stroke="#000" stroke-width="2"/>
<rect x="3" y="8" width="8" height="16" fill="#0072B2"/>
<rect x="11" y="8" width="3" height="16" fill="#E69F00"/>
<rect x="14" y="8" width="11" height="16" fill="#009E73"/>
</svg>
"""
