"""Benchmark: a slider move as a student feels it, in JupyterLab in Chromium.

Run from the repository root (Debian's /usr/bin/chromium, as for tests/system/test_browser.py):

    python benchmarks/bench_felt_latency.py            # 20 moves of each slider
    python benchmarks/bench_felt_latency.py --quick    # 5
    python benchmarks/bench_felt_latency.py --quick 03_cap_sweep   # one notebook's explorer

In one process it serves the student release with every answer filled in, through
tests/system/test_browser.py's JupyterLab and Chromium, opens each notebook that has an explorer,
runs it, and moves every slider of every explorer as a student does: the slider's handle
focused, one arrow key, the new picture on the screen, a pause, the same arrow again, to the
slider's end and back (one move first that is not counted, to warm up). So some moves reach a
setting for the first time (its view computed ahead while the student looked, see
kvlesson/lesson/lookahead.py, or on the move) and some come back to one seen before, which an
explorer shows again from what it kept (kvlesson/lesson/explorers.py): both are reported.

Each move is timed in the page with performance.now(), from the keydown (a listener in the
capture phase, before the slider sees it) to the new image painted: a MutationObserver sees
the image's new src, then img.decode(), then the next animation frame and a task posted from
it, which runs once that frame, the first holding the new image, has been painted (a second
animation frame would add up to a frame's wait, 17 ms, that the student does not see).

The page's websocket to the kernel is watched as well, and each message from the kernel says
when the kernel sent it (same machine, same clock), which splits the move in three:

* front end: the keydown to the slider's new value sent, plus the frame carrying the new PNG
  to the image painted (the widget message read, a blob URL, the PNG decoded, the paint);
* messages: the value sent to the kernel's "busy" (the server passing it on, the kernel
  picking it up), plus the kernel's last update (the PNG, or the caption) sent to its frame
  read in the page (the server passing it on, the page free to read it);
* kernel: the kernel's "busy" to its last update sent: the explorer's callback (the view
  computed, the figure drawn, the PNG written; or a kept setting shown again).

It prints per slider the median and the 90th percentile of the whole move in ms, both as
ratios of the 100 ms under which a move feels live, the median of the moves to a setting
not seen before, the median ms of each part with its share of all the time the slider's
moves took, and the PNG's size. The goal: a median under
100 ms for every slider on the 2-core development machine with nothing else running; on a
machine that other work shares, the figures wander with the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat
from playwright.sync_api import Locator, Page

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the browser tests' JupyterLab and Chromium

from support.browser import VIEWPORT, chromium, open_notebook, problems_on_page, run_all, served_lab  # noqa: E402

LIVE_MS = 100  # a move feels instant below this
PAUSE_S = 0.4  # between two presses, as a person reads the new picture
MOVE_TIMEOUT_MS = 20_000  # for one move's new image
KEYS = ("ArrowRight", "ArrowLeft")  # a slider's two directions

# Installed in every page before JupyterLab starts: the keydown, and each message on the
# kernel's websocket (JupyterLab's v1 protocol, or JSON), timed with performance.now() and
# named by its type ('status:busy' for a status); a 'comm_msg' holding binary buffers (a PNG)
# gets '+buffers'. A message from the kernel also carries when the kernel sent it (its
# header's date, on the same machine's clock, in the page's time). When the kernel says idle
# after a move was sent, `felt.idle()` runs.
WATCH = """
(() => {
  const felt = {input: [], sent: [], frames: [], move: null, idle: () => {}};
  const text = new TextDecoder('utf8');
  const name = (header, content, buffers) => [header.msg_type
    + (header.msg_type === 'status' ? ':' + content.execution_state : '')
    + (buffers > 0 ? '+buffers' : ''), Date.parse(header.date) - performance.timeOrigin];
  const kind = (data, protocol) => {
    if (typeof data === 'string') {
      const message = JSON.parse(data);
      return name(message.header, message.content, (message.buffers || []).length);
    }
    if (protocol !== 'v1.kernel.websocket.jupyter.org') return ['binary', NaN];
    const view = new DataView(data), count = Number(view.getBigUint64(0, true)), at = [];
    for (let k = 0; k < count; k++) at.push(Number(view.getBigUint64(8 * (k + 1), true)));
    const part = (k) => JSON.parse(text.decode(new Uint8Array(data, at[k], at[k + 1] - at[k])));
    return name(part(1), part(4), count - 6);  // channel, 4 JSON parts, buffers, the end
  };
  const size = (data) => typeof data === 'string' ? data.length : (data.byteLength ?? data.size);
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.kernel = String(args[0]).includes('/channels');
      this.addEventListener('message', (e) => {
        if (!this.kernel) return;
        const [type, stamp] = kind(e.data, this.protocol);
        felt.frames.push([performance.now(), size(e.data), type, stamp]);
        if (type === 'status:idle' && felt.sent.length > 0) felt.idle();
      });
    }
    send(data) {
      if (this.kernel) {
        felt.sent.push([performance.now(), size(data), kind(data, this.protocol)[0]]);
      }
      return super.send(data);
    }
  };
  window.addEventListener('keydown', () => felt.input.push(performance.now()), true);
  window.addEventListener('pointerdown', () => felt.input.push(performance.now()), true);
  window.__felt = felt;
})();
"""

# Before a press: forget the last move, then watch the explorer's image and caption. The
# move ends when the new image is painted, or, when the kernel went idle without sending a
# new PNG (the picture is the same for both values), when the new caption is painted.
ARM = """
([picture, caption]) => {
  const felt = window.__felt;
  for (const times of [felt.input, felt.sent, felt.frames]) times.length = 0;
  // the next frame's callbacks run before it is painted; a task posted from them runs after
  const painted = () => new Promise((done) => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => done(performance.now());
    channel.port2.postMessage(null);
  }));
  // the picture is an HTML widget holding an <img alt src="data:...">: a move replaces it
  const old = (picture.querySelector('img') || {}).src;
  let changed = false;
  const captionShown = new Promise((resolve) => {
    const watch = new MutationObserver(async () => {
      watch.disconnect();
      const shown = performance.now();
      resolve({what: 'caption', shown, decoded: shown, painted: await painted()});
    });
    watch.observe(caption, {subtree: true, childList: true, characterData: true});
  });
  felt.move = new Promise((resolve) => {
    const watch = new MutationObserver(async () => {
      const img = picture.querySelector('img');
      if (!img || img.src === old) return;
      changed = true;
      watch.disconnect();
      const shown = performance.now();
      await img.decode();
      const decoded = performance.now();
      resolve({what: 'image', shown, decoded, painted: await painted()});
    });
    watch.observe(picture, {subtree: true, childList: true, attributes: true});
    felt.idle = () => {
      if (!changed) captionShown.then(resolve);
    };
  });
}
"""

# After a press: the move's times, once painted (or an error after `timeout` ms).
RESULT = """
async (timeout) => {
  const felt = window.__felt;
  const late = new Promise((_, fail) => setTimeout(
    () => fail(new Error(`nothing new painted within ${timeout} ms`)), timeout));
  const shown = await Promise.race([felt.move, late]);
  return {...shown, input: felt.input, sent: felt.sent, frames: felt.frames};
}
"""


@dataclass(frozen=True)
class Move:
    """One move in milliseconds: keydown to painted, and its parts in the order they come;
    what showed it (the new 'image', or the 'caption' when the picture stayed the same) and
    the KB of the message that carried the picture (the PNG in base64, with its alt text)."""

    felt: float
    sending: float  # front end: the keydown to the slider's new value on the websocket
    to_kernel: float  # the value sent to the kernel saying busy (the server, the kernel's queue)
    kernel: float  # the kernel's busy to its last update sent (the callback: view, figure, PNG)
    from_kernel: float  # that update sent to its frame read in the page (the server, the page)
    reading: float  # front end: that frame to the new src (or caption) in the page
    decoding: float  # front end: img.decode()
    painting: float  # front end: the decoded image to the frame holding it painted
    shown_by: str
    png_kb: float
    seen: bool = False  # the setting was shown before (the explorer kept it)

    @property
    def front_end(self) -> float:
        return self.sending + self.reading + self.decoding + self.painting

    @property
    def messages(self) -> float:
        """Both trips between the page and the kernel, through the server."""
        return self.to_kernel + self.from_kernel

    @classmethod
    def from_page(cls, times: dict) -> Move:
        """Split what RESULT returned at the slider's value sent, the kernel's busy (when the
        kernel sent it), the kernel's last update before its idle (the PNG, or the caption)
        as the kernel sent it, and that update read in the page."""
        start = times["input"][0]
        sent = next(t for t, _, kind in times["sent"] if t >= start and kind == "comm_msg")
        after = [(t, size, kind, stamp) for t, size, kind, stamp in times["frames"] if t >= sent]
        busy = next(stamp for _, _, kind, stamp in after if kind == "status:busy")
        idle = next((t for t, _, kind, _ in after if kind == "status:idle"), float("inf"))
        updates = [
            (t, size, kind, stamp)
            for t, size, kind, stamp in after
            if t <= idle and kind.startswith("comm_msg")
        ]
        if not updates:
            raise RuntimeError("the kernel answered the move without an update")
        read, _, _, done = updates[-1]
        # the picture travels as an HTML widget's value, <img alt src="data:image/png;base64">:
        # the largest update of the move (the caption's is a sentence)
        png = sorted(size for _, size, _, _ in updates)
        return cls(
            felt=times["painted"] - start,
            sending=sent - start,
            to_kernel=busy - sent,
            kernel=done - busy,
            from_kernel=read - done,
            reading=times["shown"] - read,
            decoding=times["decoded"] - times["shown"],
            painting=times["painted"] - times["decoded"],
            shown_by=times["what"],
            png_kb=png[-1] / 1024 if png and times["what"] == "image" else 0.0,
        )


@dataclass(frozen=True)
class SliderTiming:
    """A slider's moves, summed up."""

    name: str
    moves: list[Move]

    def median(self, part: str = "felt") -> float:
        return statistics.median(getattr(move, part) for move in self.moves)

    def first_visits(self) -> list[Move]:
        """The moves to a setting not shown before: the explorer computed and drew it."""
        return [move for move in self.moves if not move.seen]

    def p90(self) -> float:
        felt = [move.felt for move in self.moves]
        if len(felt) == 1:
            return felt[0]
        return statistics.quantiles(felt, n=10, method="inclusive")[-1]

    def png_kb(self) -> float:
        """The median KB of the messages carrying a new picture (0 when no move changed it)."""
        sizes = [move.png_kb for move in self.moves if move.shown_by == "image"]
        return statistics.median(sizes) if sizes else 0.0

    def same_picture(self) -> int:
        """Moves that changed only the caption (the picture was the same for both values)."""
        return sum(move.shown_by == "caption" for move in self.moves)

    def share(self, part: str) -> float:
        """The part's share of all the time this slider's moves took (the parts add up)."""
        return sum(getattr(m, part) for m in self.moves) / sum(m.felt for m in self.moves)


def notebooks_with_explorers() -> list[str]:
    """The assignments whose student notebook builds an explorer, in the course's order."""
    found = []
    for folder in sorted((ROOT / "notebooks").iterdir()):
        notebooks = list(folder.glob("*.ipynb"))
        if notebooks and any(
            "Explorer(" in cell.source
            for cell in nbformat.read(notebooks[0], as_version=4).cells
            if cell.cell_type == "code"
        ):
            found.append(folder.name)
    return found


def explorers_on(panel: Locator) -> list[Locator]:
    """Every explorer's widget box in the notebook: an output box with a slider and an image."""
    page = panel.page
    boxes = (
        panel.locator(".jp-OutputArea-output .widget-vbox")
        .filter(has=page.locator(".kvlesson-slider"))
        .filter(has=page.locator("img"))
    )
    return boxes.all()


def position(handle: Locator) -> tuple[float, float, float]:
    """The range input's position, and its two ends."""
    return tuple(float(value) for value in handle.evaluate("(el) => [el.value, el.min, el.max]"))


def next_key(handle: Locator, key: str) -> str:
    """`key` again, or the other arrow at the slider's end in that direction."""
    now, low, high = position(handle)
    if (key == KEYS[0] and now >= high) or (key == KEYS[1] and now <= low):
        return KEYS[1 - KEYS.index(key)]
    return key


def time_slider(page: Page, box: Locator, row: Locator, moves: int) -> list[Move]:
    """Press the slider's arrows `moves` + 1 times, one way to its end, then back; the moves
    after the first, each marked when its setting was shown before."""
    handle = row.locator("input[type=range]").first
    image = box.locator(".widget-html").last.element_handle()
    caption = box.locator(".kvlesson-caption").element_handle()  # the live region
    seen = {position(handle)[0]}
    key, timed = KEYS[0], []
    for press in range(moves + 1):
        key = next_key(handle, key)
        page.evaluate(ARM, [image, caption])
        handle.press(key)
        times = page.evaluate(RESULT, MOVE_TIMEOUT_MS)
        value = position(handle)[0]
        if press:
            timed.append(replace(Move.from_page(times), seen=value in seen))
        seen.add(value)
        time.sleep(PAUSE_S)
    return timed


def time_notebook(page: Page, lab: str, assignment: str, moves: int) -> list[SliderTiming]:
    """Run the notebook, then time every slider of every explorer in it."""
    panel = open_notebook(page, lab, assignment)
    run_all(page, panel)
    problems = problems_on_page(panel)
    if problems:
        raise RuntimeError(f"{assignment} did not run cleanly:\n" + "\n".join(problems))
    boxes = explorers_on(panel)
    if not boxes:
        raise RuntimeError(f"{assignment} builds an explorer, but none shows in the page")
    timings = []
    for number, box in enumerate(boxes, 1):
        box.scroll_into_view_if_needed()
        which = f" #{number}" if len(boxes) > 1 else ""
        for row in box.locator(".kvlesson-slider").all():
            label = row.locator("label").first.inner_text().strip()
            print(f"  {assignment}{which}: {label} ...", file=sys.stderr, flush=True)
            timings.append(
                SliderTiming(f"{assignment}{which}: {label}", time_slider(page, box, row, moves))
            )
    return timings


def report(timings: list[SliderTiming]) -> None:
    print(
        f"{'notebook: slider':<42} {'median':>6} {'p90':>6} {'÷' + str(LIVE_MS):>5} "
        f"{'÷' + str(LIVE_MS):>5} {'new':>6} {'(n)':>5} | "
        f"{'kernel':>12} {'messages':>12} {'front end':>12} | {'img KB':>6}"
    )
    unchanged = []
    for t in timings:
        parts = " ".join(
            f"{t.median(part):6.1f} ({100 * t.share(part):2.0f}%)"
            for part in ("kernel", "messages", "front_end")
        )
        first = t.first_visits()
        new = statistics.median(move.felt for move in first) if first else float("nan")
        print(
            f"{t.name:<42} {t.median():6.1f} {t.p90():6.1f} {t.median() / LIVE_MS:5.2f} "
            f"{t.p90() / LIVE_MS:5.2f} {new:6.1f} {f'({len(first)})':>5} | {parts} | "
            f"{t.png_kb():6.1f}"
        )
        if t.same_picture():
            unchanged.append(f"{t.name} ({t.same_picture()} of {len(t.moves)})")
    print(
        f"÷{LIVE_MS}: the median and the p90 as ratios of the {LIVE_MS} ms goal (under 1 "
        "feels live); new: the median of the moves to a setting not shown before (n of them), "
        "drawn with its view computed ahead or on the move; the others the explorer showed "
        "again from what it kept"
    )
    if unchanged:
        print(
            "moves that changed only the caption (timed to the caption painted): "
            + ", ".join(unchanged)
        )
    details = ("sending", "to_kernel", "kernel", "from_kernel", "reading", "decoding", "painting")
    print(
        "\nthe parts in their order, medians in ms: keydown to value sent, to the kernel, "
        "the kernel's callback, from the kernel, read, decode, paint"
    )
    for t in timings:
        print(f"{t.name:<42} " + " ".join(f"{t.median(part):6.1f}" for part in details))
    slow = [t.name for t in timings if t.median() >= LIVE_MS]
    print(
        f"\nmedian under {LIVE_MS} ms: {len(timings) - len(slow)} of {len(timings)} sliders"
        + (f"; not: {', '.join(slow)}" if slow else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 moves of each slider, not 20")
    parser.add_argument(
        "assignments",
        nargs="*",
        metavar="ASSIGNMENT",
        help="only these notebooks' explorers (e.g. 03_cap_sweep); default: all",
    )
    arguments = parser.parse_args()
    moves = 5 if arguments.quick else 20
    assignments = notebooks_with_explorers()
    unknown = set(arguments.assignments) - set(assignments)
    if unknown:
        parser.error(
            f"no explorer in {', '.join(sorted(unknown))}; "
            f"the notebooks with explorers: {', '.join(assignments)}"
        )
    assignments = [
        a for a in assignments if a in arguments.assignments or not arguments.assignments
    ]
    print(
        f"Python {sys.version.split()[0]}; {moves} moves of each slider; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}; all times in ms, keydown to painted"
    )
    timings = []
    with (
        tempfile.TemporaryDirectory(prefix="felt-latency-") as base,
        served_lab(Path(base), assignments) as lab,
        chromium() as browser,
    ):
        for assignment in assignments:
            context = browser.new_context(viewport=VIEWPORT)
            try:
                context.add_init_script(WATCH)
                timings += time_notebook(context.new_page(), lab, assignment, moves)
            finally:
                context.close()
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    report(timings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
