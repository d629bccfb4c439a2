"""An explorer's slider: the browser's own range input, named by its label.

ipywidgets' sliders draw a noUiSlider handle, a `div` with role "slider" that nothing names
(axe: aria-input-field-name), and ipywidgets has no option to name it. This control is a
native `<input type="range">` with a `<label for>`: a screen reader reads "memory share (%),
slider, 90", the browser gives it the arrow keys, Page Up/Down, Home and End and a focus
ring (the input keeps its keys from JupyterLab's notebook shortcuts, which would take the
arrows to move between cells), and nothing patches another library's page. Its front end is
a few lines of JavaScript in this file, loaded by anywidget (whose front end comes in its own
wheel): no network.

Where the options are evenly spaced numbers (the share's 1 to 100), the input's own min, max,
step and value are those numbers, so that a screen reader that speaks the value rather than
its text (`aria-valuetext`, the option's label) still says "90", not the position "89".

The kernel's side is the slider ipywidgets would give: `value` (one of the options' values),
`options` as (label, value) pairs, `min`, `max`, `index`, and `observe(..., names="value")`.
"""

from __future__ import annotations

from typing import Any, Sequence

import anywidget
import traitlets as t

ESM = """
const OWN_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "PageUp",
                          "PageDown", "Home", "End"]);
function render({ model, el }) {
  // anywidget loads this module once per widget, so a counter here would restart at 0 for
  // every slider: the id is random, or two sliders drawn in the same millisecond would share
  // it and the second one's <label for> would name the first (crypto.randomUUID needs a
  // secure context, which a hub served over plain http is not).
  const id = `kvlesson-slider-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  el.classList.add("kvlesson-slider");
  const label = document.createElement("label");
  label.htmlFor = id;
  const input = document.createElement("input");
  input.type = "range";
  input.id = id;
  const readout = document.createElement("output");
  readout.setAttribute("for", id);
  readout.setAttribute("aria-hidden", "true");  // the input says its value itself
  // [first, step] when the options are evenly spaced numbers: the input holds them
  const line = () => model.get("number_line");
  const show = () => {
    const labels = model.get("labels");
    const text = labels[model.get("index")] ?? "";
    const [first, step] = line().length ? line() : [0, 1];
    label.textContent = model.get("description");
    input.min = String(first);
    input.step = String(step);
    input.max = String(first + step * Math.max(labels.length - 1, 0));
    input.value = String(first + step * model.get("index"));
    input.setAttribute("aria-valuetext", text);
    readout.textContent = text;
  };
  // The keys a range input moves by are the input's own: JupyterLab's notebook (command
  // mode) would take the arrows to select another cell and move the focus off the slider.
  // Every other key (Tab, Shift+Enter, Escape) still reaches JupyterLab.
  input.addEventListener("keydown", (event) => {
    if (OWN_KEYS.has(event.key)) event.stopPropagation();
  });
  input.addEventListener("input", () => {
    const [first, step] = line().length ? line() : [0, 1];
    model.set("index", Math.round((Number(input.value) - first) / step));
    model.save_changes();
  });
  model.on("change:index", show);
  model.on("change:labels", show);
  model.on("change:description", show);
  show();
  el.append(label, input, readout);
  return () => {
    model.off("change:index", show);
    model.off("change:labels", show);
    model.off("change:description", show);
  };
}
export default { render };
"""

# the slider's look (and the ring of an explorer's other controls), in JupyterLab and on the
# website's explorers (kvlesson/delivery/site/moving.py)
CSS = """
.kvlesson-slider { display: flex; align-items: center; gap: 8px; margin: 2px 0; }
.kvlesson-slider label { flex: 0 0 var(--kvlesson-label-width, 180px); text-align: right; }
.kvlesson-slider input[type=range] { flex: 1 1 auto; min-width: 120px; accent-color: #0072B2; }
.kvlesson-slider input[type=range]:focus-visible { outline: 3px solid #0072B2;
  outline-offset: 2px; }
.kvlesson-slider output { flex: 0 0 5em; font-variant-numeric: tabular-nums; }
/* the explorer's other controls (ipywidgets' dropdowns, text box, button) draw focus as a
   thin border colour only (ipywidgets 8.1 sets a dropdown's outline none, !important): the
   same ring as the sliders' (WCAG 2.4.7) */
.kvlesson-explorer select:focus-visible, .kvlesson-explorer textarea:focus-visible,
.kvlesson-explorer button:focus-visible { outline: 3px solid #0072B2 !important;
  outline-offset: 1px; }
@media (max-width: 560px) {  /* a phone, or 400% zoom: the label above its slider */
  .kvlesson-slider { flex-wrap: wrap; }
  .kvlesson-slider label { flex: 1 0 100%; text-align: left; }
  .kvlesson-slider input[type=range] { min-width: 0; }
}
"""


class Slider(anywidget.AnyWidget):
    """A slider over fixed options, each a (label, value) pair; `value` is the chosen value."""

    _esm = t.Unicode(ESM).tag(sync=True)
    _css = t.Unicode(CSS).tag(sync=True)
    description = t.Unicode("").tag(sync=True)
    labels = t.List(t.Unicode()).tag(sync=True)
    number_line = t.List(t.Float()).tag(sync=True)  # [first, step], or [] (see number_line)
    index = t.Int(0).tag(sync=True)
    value = t.Any()

    def __init__(self, description: str, options: Sequence[Any], value: Any, **kwargs):
        pairs = [
            option if isinstance(option, tuple) else (str(option), option) for option in options
        ]
        self._values = [v for _, v in pairs]
        if value not in self._values:
            raise t.TraitError(f"{description}: {value!r} is not one of the options")
        super().__init__(
            description=description,
            labels=[label for label, _ in pairs],
            number_line=list(number_line([label for label, _ in pairs]) or ()),
            index=self._values.index(value),
            value=value,
            **kwargs,
        )

    @t.validate("value")
    def _known(self, proposal) -> Any:
        if proposal.value not in self._values:
            raise t.TraitError(f"{self.description}: {proposal.value!r} is not one of the options")
        return proposal.value

    @t.observe("index")
    def _moved(self, change) -> None:
        self.value = self._values[change.new]

    @t.observe("value")
    def _set(self, change) -> None:
        self.index = self._values.index(change.new)

    @property
    def options(self) -> list[tuple[str, Any]]:
        return list(zip(self.labels, self._values))

    @property
    def min(self) -> Any:
        return self._values[0]

    @property
    def max(self) -> Any:
        return self._values[-1]

    def next_values(self) -> list[Any]:
        """The values one step either way from where the slider stands."""
        return [
            self._values[i] for i in (self.index - 1, self.index + 1) if 0 <= i < len(self._values)
        ]


def number_line(labels: Sequence[str]) -> tuple[float, float] | None:
    """(first, step) when every label is a plain number ("1,024" too) and they are evenly
    spaced, rising: a range input can then hold the numbers themselves. None otherwise (the
    caps 1, 2, 4, ...; "none"; a single stop)."""
    try:
        values = [float(label.replace(",", "")) for label in labels]
    except ValueError:
        return None
    if len(values) < 2:
        return None
    step = values[1] - values[0]
    evenly = all(
        abs((b - a) - step) <= 1e-9 * max(1.0, abs(step)) for a, b in zip(values, values[1:])
    )
    return (values[0], step) if evenly and step > 0 else None
