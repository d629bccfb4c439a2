"""An explorer's caption: the sentence under its sliders, said again when it changes.

WCAG 2.1's 4.1.3 (status messages): a screen reader must hear the new sentence after a
slider moves without the reader going to look for it. The caption is a live region
(`role="status"`, polite, read whole), and a live region only speaks of changes inside an
element that was already there: ipywidgets' HTML widget replaces its content's element when
its value changes. So the caption is a small widget of its own, an element drawn once whose
content follows `value` (HTML the explorer wrote: its caption, escaped, with <b>). Loaded
by anywidget, as the sliders are (`slider`): no network.
"""

from __future__ import annotations

import anywidget
import traitlets as t

ESM = """
function render({ model, el }) {
  const region = document.createElement("div");
  region.className = "kvlesson-caption";
  region.setAttribute("role", "status");
  region.setAttribute("aria-live", "polite");
  region.setAttribute("aria-atomic", "true");
  const show = () => { region.innerHTML = model.get("value"); };
  model.on("change:value", show);
  show();
  el.append(region);
  return () => model.off("change:value", show);
}
export default { render };
"""


class Caption(anywidget.AnyWidget):
    """A polite live region holding an explorer's caption as HTML (`value`)."""

    _esm = t.Unicode(ESM).tag(sync=True)
    value = t.Unicode("").tag(sync=True)
