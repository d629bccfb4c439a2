"""Autograde's Execute step in the box, and the rescue of a killed or stuck kernel.

`BoxedExecute` takes the place of nbgrader's Execute (nbgrader_config.py names it for
`nbgrader autograde`; the grading worker calls it directly). Each kernel it starts is forked
by a zygote in the box (`kvlesson.grading.box.launch`, `kernel`): the worker's zygotes,
kept from one submission to the next, or zygotes of its own for this notebook. A cell that
kills its kernel (`os._exit`) or cannot be interrupted (a loop that catches
KeyboardInterrupt) no longer costs the whole submission: that cell gets an error (so its
tests score 0) and a flag, a new kernel runs again the cells before it, and grading goes on
with the next cell. Nothing is left as a "failed" submission for nbgrader to retry on every
later autograde. What the watch reports is flagged on the cell that was running
(`kvlesson.grading.box.events`). Every record line a cell prints is caught as it arrives
and kept in the cell's metadata (`kvlesson.grading.checks.records`): the marking reads
those, never the outputs the student's code can clear or bury.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbclient.client import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.exchange import Exchange
from nbgrader.preprocessors import Execute
from traitlets import Bool, Dict, Instance, Int, List, Unicode

from kvlesson.grading.box.bubblewrap import bwrap_path
from kvlesson.grading.box.events import Events, flags_of
from kvlesson.grading.box.flags import box_flag, write_flags
from kvlesson.grading.box.kernel import BoxedKernelManager
from kvlesson.grading.box.launch import Zygote, Zygotes
from kvlesson.grading.box.ledger import ALWAYS_PRELOADED
from kvlesson.grading.box.limits import Limits
from kvlesson.grading.box.walls import Walls
from kvlesson.grading.checks.records import CAUGHT, RecordCatcher
from kvlesson.grading.course.results import KILLED, STUCK

RESCUE_ERRORS = {KILLED: "KernelDied", STUCK: "CellNotInterruptible"}


def notebooks_in(folder: Path) -> list[Path]:
    """What the working copy shows of the submission: its plain notebooks (no link, no
    folder, nothing else; a submission is its notebooks, `kvlesson.grading.course.contract`)."""
    return sorted(
        p for p in folder.iterdir() if p.suffix == ".ipynb" and p.is_file() and not p.is_symlink()
    )


def lost_kernel(error: BaseException) -> str | None:
    """How a cell lost its kernel (KILLED, STUCK), or None for an error that is the grader's:
    a kernel that died, a cell that ran past its time, or a message on the kernel's channels
    that jupyter_client refuses as not the kernel's own (its signature: a process of the
    cell wrote into the kernel's connection, so nothing more the kernel says can be trusted;
    it is lost as a killed one is)."""
    if isinstance(error, DeadKernelError):
        return KILLED
    if isinstance(error, CellTimeoutError):
        return STUCK
    if isinstance(error, ValueError) and str(error).startswith(
        ("Invalid Signature", "Duplicate Signature")
    ):
        return KILLED
    return None


class BoxedExecute(Execute):
    """nbgrader's Execute, with each kernel in the box and a rescue for lost cells."""

    boxed = Bool(
        True,
        help="run each kernel in the bubblewrap box (needs `bwrap`); "
        "switch off only where student code is trusted",
    ).tag(config=True)
    hide = List(
        Unicode(),
        help="more folders to hide from the kernel (the course root and "
        "the grading run's folder, when a grading worker runs autograde elsewhere)",
    ).tag(config=True)
    ledger = Dict(
        help="the box's ledger (kvlesson.grading.box.ledger.spec): the exercises' forbidden "
        "functions, the hashes of the course's own cells, the modules to preload (the "
        "grading worker gives one per assignment); empty: no ledger",
    ).tag(config=True)
    package = Unicode(
        "",
        help="a copy of kvlesson to run the kernel with in place of the "
        "installed one (kvlesson.grading.box.withheld: the second run of a "
        "submission, without its exercises' forbidden functions); empty: the "
        "installed one",
    ).tag(config=True)
    font_cache = Unicode(
        "",
        help="matplotlib's list of the machine's fonts, made once "
        "(kvlesson.grading.box.fonts); empty: each zygote makes its own",
    ).tag(config=True)
    draw = Bool(True, help="draw figures (a run whose outputs nobody reads draws none)").tag(
        config=True
    )
    memory_bytes = Int(
        Limits.memory_bytes, help="address space each process of a graded kernel may take, bytes"
    ).tag(config=True)
    processes = Int(Limits.processes, help="processes a graded kernel may run").tag(config=True)
    disk_bytes = Int(
        Limits.disk_bytes,
        help="bytes each writable place of the box may hold (the working copy, /tmp, home)",
    ).tag(config=True)
    zygotes = Instance(
        Zygotes, allow_none=True, help="the zygotes to fork kernels from (a grading worker's)"
    )

    def create_kernel_manager(self) -> AsyncKernelManager:
        if not self.boxed:
            return super().create_kernel_manager()
        self.kernel_manager_class = BoxedKernelManager
        self._kernels += 1
        # a fresh folder and events file for each kernel: the worker's ends of its sockets
        connections = self._run_dir / f"connections-{self._kernels}"
        connections.mkdir(mode=0o700)
        self._events = Events(self._run_dir / f"events-{self._kernels}.log")
        km = super().create_kernel_manager()
        km.transport = "ipc"
        km.connection_file = str(connections / "kernel.json")
        km.ip = str(connections / "kernel-ipc")
        work = Path(self.resources.get("metadata", {}).get("path") or ".")
        notebooks = notebooks_in(work)
        km.fork_from(self._zygote(), dict(self.ledger), notebooks, self._events.path, self.draw)
        return km

    def _zygote(self) -> Zygote:
        """The zygote this notebook's kernels are forked from: hidden from it, the course
        root, the exchange and the `hide` folders; with `package` for kvlesson."""
        course = Path(CourseDirectory(config=self.config).root or ".").resolve()
        exchange = self.config.get("Exchange", {}).get("root", Exchange.root.default_value)
        hidden = tuple(Path(p) for p in (exchange, *self.hide))
        package = Path(self.package) if self.package else None
        font_cache = Path(self.font_cache) if self.font_cache else None
        limits = Limits(self.memory_bytes, self.processes, self.disk_bytes)
        preload = tuple(dict.fromkeys([*ALWAYS_PRELOADED, *self.ledger.get("preload", ())]))

        def walls_for(work: Path, connections: Path) -> Walls:
            return Walls.for_course(
                course, work, connections, hidden, limits.disk_bytes, package, font_cache
            )

        key = (course, hidden, package, font_cache)
        return self._zygotes.get(walls_for, limits, preload, key)

    def preprocess(self, nb: NotebookNode, resources=None, km=None):
        """Run every cell; after a lost or stuck cell, restart and go on."""
        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        if self.boxed:
            bwrap_path()  # a clear error before any kernel starts
        # in the worker's folder when there is one: a worker killed midway leaves nothing
        where = self.zygotes.folder if self.zygotes else None
        self._run_dir = Path(tempfile.mkdtemp(prefix="kvlesson-box-", dir=where))
        self._zygotes = self.zygotes or Zygotes(self._run_dir / "zygotes")
        self._kernels, self._flags, self._lost = 0, [], set()
        self._counts: dict[str, int] = {}  # this kernel's execution counts: the latest cell
        self._catcher: RecordCatcher | None = None  # the record lines of the cell running
        for cell in self.nb.cells:  # what a submitted notebook says was caught counts for nothing
            cell.metadata.pop(CAUGHT, None)
            if cell.cell_type == "code":
                cell.metadata[CAUGHT] = []
        try:
            start = 0
            while start is not None:
                start = self._run_from(start)
        finally:
            if self._zygotes is not self.zygotes:
                self._zygotes.close()
            shutil.rmtree(self._run_dir, ignore_errors=True)
        self.set_widgets_metadata()
        write_flags(self.nb, self._flags, self.boxed)
        return self.nb, self.resources

    def _run_from(self, start: int) -> int | None:
        """In a new kernel, run again the cells before `start` that did not lose their
        kernel, then the cells from `start` on; the index to go on from after a lost or
        stuck cell, or None when the notebook is done. The kernel is killed at the end, not
        asked to stop: its state is thrown away, and every report reached the events file as
        its cell ran."""
        self.shutdown_kernel = "immediate"
        resume, index = None, start
        # a new kernel counts from 1 again: a count of the kernel before names another cell
        self._counts = {}
        with self.setup_kernel():
            info = self.wait_for_reply(self.kc.kernel_info())
            self.nb.metadata["language_info"] = info["content"]["language_info"]
            if not all(self._again(i) for i in range(start) if i not in self._lost):
                return start
            self._watch(None)  # a cell run again reports again what was flagged already
            for index in range(start, len(self.nb.cells)):
                self._catcher = RecordCatcher()
                try:
                    self.preprocess_cell(self.nb.cells[index], self.resources, index)
                except (DeadKernelError, CellTimeoutError, ValueError) as error:
                    if (kind := lost_kernel(error)) is None:
                        raise
                    self._rescue(index, kind)
                    resume = index + 1
                    break
                finally:
                    if self.nb.cells[index].cell_type == "code":
                        self.nb.cells[index].metadata[CAUGHT] = self._catcher.caught()
                    self._catcher = None
                    self._watch(index)
        self._watch(index)  # what came while the kernel shut down
        return resume

    def process_message(self, msg: dict, cell: NotebookNode, cell_index: int):
        """nbclient's handling of one message of the running cell, after catching the record
        lines in what it prints, before any `clear_output`, output widget or nbgrader's limit
        of lines can touch them."""
        content = msg.get("content") or {}
        if (
            self._catcher is not None
            and msg.get("msg_type") == "stream"
            and content.get("name") == "stdout"
        ):
            self._catcher.take(str(content.get("text", "")))
        return super().process_message(msg, cell, cell_index)

    def _again(self, index: int) -> bool:
        """Run cell `index` again in the new kernel, its outputs thrown away; False (and the
        cell counts as lost) if it loses this kernel too."""
        original = self.nb.cells[index]
        try:
            self.execute_cell(copy.deepcopy(original), index, store_history=False)
        except (DeadKernelError, CellTimeoutError, ValueError) as error:
            if (kind := lost_kernel(error)) is None:
                raise
            self.nb.cells[index] = original
            self._rescue(index, kind)
            return False
        self.nb.cells[index] = original
        return True

    def _rescue(self, index: int, kind: str) -> None:
        """Cell `index` lost its kernel: give it an error output (its tests score 0), flag
        it, and have the kernel killed rather than waited for."""
        cell = self.nb.cells[index]
        reason = (
            f"cell {index} {kind}: it scores 0, the kernel was restarted and "
            "grading went on with the next cell"
        )
        cell.setdefault("outputs", []).append(
            NotebookNode(
                output_type="error",
                ename=RESCUE_ERRORS[kind],
                evalue=reason,
                traceback=[f"{RESCUE_ERRORS[kind]}: {reason}"],
            )
        )
        self._lost.add(index)
        self._flags.append(box_flag(self.nb, index, kind, reason))
        self.log.warning("kvlesson box: %s", reason)
        self.shutdown_kernel = "immediate"

    def _watch(self, index: int | None) -> None:
        """Flag on cell `index` what the watch reported since the last look (drop it if
        `index` is None)."""
        if not self.boxed:
            return
        lines = self._events.since()
        if index is None or index >= len(self.nb.cells):
            return
        cell = self.nb.cells[index]
        if cell.get("execution_count") is not None:
            self._counts[str(cell.execution_count)] = index
        self._flags += flags_of(lines, self.nb, index, self._counts)
