"""Cheats against the one grading command, class by class (issues 12 and 17).

One class of 01_floor_plan (6 autograded points) is submitted and graded by
`kvlesson grade 01_floor_plan --course ROOT --jobs 2`, the command
docs/instructors.md gives, in a temporary course with a short cell timeout. Three honest
students (everything right, part right, untouched) sit among the cheats, and each of them
must keep exactly their mark, with no flag. Each class of attack of issue 17 has at least
two variants (invented here, beyond the issue's examples), each with the mark it must get
and the flags the instructor must see:

 1. files beside the notebook that would run as the grader;
 2. links and special files in a submission, and links left in the working copy;
 3. code the reading of cells must see: added cells, the set-up cell, magics, shell lines;
 4. no hash in the kernel to forge a record from, and forged record lines;
 5. forbidden functions reached indirectly: through the package, another cell, a name
    built at run time, a moved cell;
 6. a notebook nbgrader cannot grade, which costs that student only;
 7. record lines that would break the marker;
 8. live HTML and JavaScript in what the formgrader and the feedback show;
 9. resources: disk, memory, processes, time.

The issue-12 cheats stay too (rebinding checks, builtins, transformers, a detached process,
a killed or stuck kernel, a forbidden call).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import nbformat
import pytest
from nbgrader.api import Gradebook

from kvlesson.authoring.command import copy_course
from kvlesson.grading.course import seal
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.course.seal import REFUSALS
from support.course import (
    ROOT,
    account_env,
    cell_by_id,
    edit_notebook,
    flags_of,
    instructor_solutions,
    nbgrader_meta,
    read_nb,
    run_nbgrader,
    set_cell_timeout,
)
from support.live_html import live
from support.patience import HANG, scaled
from support.throttle import half_a_core

ASSIGNMENT, NOTEBOOK = "01_floor_plan", "floor_plan"
COURSE_ID = "kvlesson"  # c.CourseDirectory.course_id in nbgrader_config.py
# The course's cell timeout here: its config says 30; no cell here needs more than 1 on a quiet
# machine, and 10 leaves room for half a core (the determinism test); stretched by the load.
CELL_TIMEOUT = scaled(10)
MARKER = "kvlesson-cheat-7f3a"  # in command lines and file names the cheats leave
PWNED = Path("/tmp") / f"{MARKER}-pwned"  # what a file run as the grader would write
# A TCP server of the grader's machine that no graded notebook may reach.
LISTENER = socket.create_server(("127.0.0.1", 0))
PORT = LISTENER.getsockname()[1]
KEY = read_key(key_path(ROOT, ASSIGNMENT))
POINTS = {grade_id: float(ex["points"]) for grade_id, ex in KEY["exercises"].items()}
SOLVED = instructor_solutions(ASSIGNMENT, NOTEBOOK)
RELEASE = read_nb(ROOT / "notebooks" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
ANSWERS = [nbgrader_meta(c)["grade_id"] for c in RELEASE.cells if nbgrader_meta(c).get("solution")]
FIRST, LAST = ANSWERS[0], ANSWERS[-1]
Q1, EX1_1 = "q1_answer", "ex1_1_answer"


def graded_tests_of(answer: str) -> list[str]:
    """The autograded test cells between answer cell `answer` and the next answer cell."""
    ids = [nbgrader_meta(c).get("grade_id") for c in RELEASE.cells]
    start = ids.index(answer) + 1
    later = [ids.index(a) for a in ANSWERS if ids.index(a) > ids.index(answer)]
    return [i for i in ids[start : min(later, default=len(ids))] if i in POINTS]


def without(*answers: str) -> float:
    """Full marks less the points of the tests of `answers`."""
    lost = {t for a in answers for t in graded_tests_of(a)}
    return sum(p for t, p in POINTS.items() if t not in lost)


FULL = without()


def pwn(name: str) -> str:
    """Python that, wherever it runs, leaves a trace outside the box's walls: a file in the
    machine's /tmp (the box's /tmp is its own) and one in the course root (hidden in it)."""
    return (
        f"import os\nfor _d in ('/tmp', os.environ.get('KVLESSON_COURSE', '/nonexistent')):\n"
        f"    try:\n        open(os.path.join(_d, '{MARKER}-pwned-{name}'), 'w').write('x')\n"
        f"    except OSError:\n        pass\n"
    )


ALWAYS_EQUAL = """
import hashlib
from kvlesson.grading.checks import selfcheck
from kvlesson.grading.checks import probes
class Same(str):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = str.__hash__
probes.normal = lambda *a, **k: Same("x")
selfcheck.verify = selfcheck.record = lambda *a, **k: print("Self-check passed.")
hashlib.sha1 = lambda *a, **k: type("H", (), {"hexdigest": lambda self: Same("x")})()
"""
ABS_ZERO = """
import builtins, hashlib
builtins.abs = lambda x: 0
hashlib.sha1 = lambda *a, **k: type("H", (), {"hexdigest": lambda self: "0" * 40})()
"""
TRANSFORMER = """
get_ipython().input_transformers_post.append(lambda lines: ["print('Self-check passed.')\\n"])
"""
EXIT = "\nimport os\nos._exit(0)\n"
STUCK = """
import time
while True:
    try:
        time.sleep(0.1)
    except KeyboardInterrupt:
        pass
"""
PACKAGE = "\npool_gb = kv.memory_parts(Q1_SHARE, gpu, model).pool_bytes / 1e9\n"
# The walls, from inside: write the gradebook, read solutions/ and the key, connect to the
# grader's machine over TCP, then start a detached process (subprocess first, which the
# watch refuses, then _posixsubprocess, which it does not see) that tries TCP once and
# keeps trying the gradebook after grading; the cell waits a moment and prints what the
# detached process wrote in its working copy.
DETACHED = f'''
import os, sys, time, socket, subprocess, _posixsubprocess
for what, path in (("gradebook", "../../../gradebook.db"),
                   ("key", "../../../keys/{ASSIGNMENT}.json")):
    try:
        open(path, "a").write("all marks: 100")
        print("WROTE", what)
    except OSError as error:
        print(what + ":", type(error).__name__)
try:
    print("SOLUTIONS:", os.listdir("../../../solutions"))
except OSError as error:
    print("solutions:", type(error).__name__)
try:
    socket.create_connection(("127.0.0.1", {PORT}), timeout=2)
    print("CONNECTED")
except OSError as error:
    print("tcp:", type(error).__name__)
later = """
import os, socket, time
open("started.txt", "w").write(str(os.getpid()))
try:
    socket.create_connection(("127.0.0.1", {PORT}), timeout=2)
    open("tcp.txt", "w").write("CONNECTED")
except OSError as error:
    open("tcp.txt", "w").write(type(error).__name__)
for _ in range(120):
    time.sleep(0.25)
    try:
        open("../../../gradebook.db", "w").write("all marks: 100")
    except OSError:
        pass
"""
command = [sys.executable, "-c", later, "{MARKER}"]
try:
    subprocess.Popen(command, start_new_session=True)
except PermissionError as error:
    print("subprocess:", error)
r, w = os.pipe()
_posixsubprocess.fork_exec(command, [os.fsencode(sys.executable)], True, (), None, None,
                           -1, -1, -1, -1, -1, -1, r, w, True, True, -1, None, None, None,
                           -1, None, False)
time.sleep(2.5)
for name in ("started.txt", "tcp.txt"):
    print(name, open(name).read() if os.path.exists(name) else "missing")
'''
WRITER = (
    "open('mymod.py', 'w').write('import kvlesson\\ndef f(s, g, m):\\n    return "
    "getattr(kvlesson, \\'memory\\' + \\'_parts\\')(s, g, m)\\n')\nimport mymod\n"
    "pool_gb = mymod.f(Q1_SHARE, gpu, model).pool_bytes / 1e9\n"
    "unused_gb = (100 - Q1_SHARE) / 100 * gpu.memory_bytes / 1e9"
)
UNUSED = "unused_gb = (100 - Q1_SHARE) / 100 * gpu.memory_bytes / 1e9\n"
# Question 1's share, as notebook 1 sets it, for a cell added above the cell that sets it
EARLY_Q1_SHARE = "SHARE - 7 if SHARE > 30 else SHARE + 7"
BUILT = "getattr(kv, 'memory' + '_parts')"  # memory_parts by a name no reading of code sees
THREADER = (
    f"""import _thread, time
_box = {{}}
_thread.start_new_thread(lambda: _box.update(p={BUILT}(Q1_SHARE, gpu, model).pool_bytes), ())
for _ in range(200):
    if 'p' in _box:
        break
    time.sleep(0.01)
pool_gb = _box['p'] / 1e9
"""
    + UNUSED
)
THREAD_TABLE = f"""import _thread, time
_table = {{}}
def _fill():
    for share in range(1, 101):
        _table[share] = {BUILT}(share, gpu, model).pool_bytes
    _table['done'] = True
_thread.start_new_thread(_fill, ())
for _ in range(200):
    if 'done' in _table:
        break
    time.sleep(0.01)
def pool_bytes(share):
    return _table[share]
"""
PIPER = (
    f"""import os
def _writes_a_pipe(fd):  # the watch's report channel is a pipe the kernel writes
    try:
        flags = int(open(f'/proc/self/fdinfo/{{fd}}').read().split('flags:')[1].split()[0], 8)
        return os.readlink(f'/proc/self/fd/{{fd}}').startswith('pipe:') and flags & 3 == 1
    except (OSError, IndexError, ValueError):
        return False
_keep = [os.dup(fd) for fd in range(3, 256) if _writes_a_pipe(fd)]
for fd in range(3, 256):
    if fd not in _keep and _writes_a_pipe(fd):
        os.close(fd)
pool_gb = {BUILT}(Q1_SHARE, gpu, model).pool_bytes / 1e9
"""
    + UNUSED
)
SELF_SENDER = f"""import glob, jupyter_client
_mounts = [_line.split()[4] for _line in open('/proc/self/mountinfo')]
_file = [_f for _m in _mounts for _f in glob.glob(_m + '/kernel*.json')][0]
_kc = jupyter_client.BlockingKernelClient(connection_file=_file)
_kc.load_connection_file()
_kc.start_channels()
_kc.execute("_box = {{'p': {BUILT}({EARLY_Q1_SHARE}, gpu, model).pool_bytes}}", store_history=False)
"""
# A wrong pool_bytes (0) whose first visible probe erases the real record line and prints
# one of right values in its place, as if the hidden probes had given them.
FORGER = """
import json
from IPython.display import clear_output
_asked = []
def _right(share):
    return share / 100 * gpu.memory_bytes - model.weights_bytes - kv.RESERVE_BYTES
def pool_bytes(share):
    _asked.append(share)
    if len(_asked) == 6:
        {erase}
        values = [{{"t": "float", "v": _right(s), "type": "float"}} for s in _asked[:5]]
        print("KVLESSON-MARK " + json.dumps({{"id": "ex1_1_tests", "values": values,
                                              "calls": [], "setting": SETTING}}))
    return 0
"""


def forger(erase: str) -> str:
    """FORGER with `erase`, the line that does away with the real record."""
    return FORGER.format(erase=erase).replace("SETTING", repr(KEY["setting"]))


FORGED = "KVLESSON-MARK " + json.dumps(
    {
        "id": "ex1_1_tests",
        "values": [p["expected"] for p in KEY["exercises"]["ex1_1_tests"]["probes"]],
        "calls": [],
        "setting": KEY["setting"],
    }
)


@dataclass(frozen=True)
class Student:
    """One submission: the answer cells as written, cells added (after the answer cell
    named, or at the top), files beside the notebook, a last change to the notebook file;
    the mark it must get, and patterns every one of which must appear among its flags."""

    id: str
    does: str
    answers: dict[str, str]
    score: float
    flags: tuple[str, ...] = ()
    cells: tuple[tuple[str, str], ...] = ()  # (grade id of the answer cell it follows, code)
    files: dict[str, object] = field(default_factory=dict)  # name: bytes, ("link", target), "fifo"
    change: Callable[[Path], None] | None = None
    collected: bool = False  # handed in through the course's collect (sealed, its notes beside)


def solved(**changes: str) -> dict[str, str]:
    return {**SOLVED, **changes}


def copy_answer_cell(path: Path) -> None:
    nb = read_nb(path)
    cell = cell_by_id(nb, EX1_1)
    index = nb.cells.index(cell)
    copy = nbformat.from_dict(json.loads(json.dumps(cell)))
    copy["id"] = "copied-by-accident"
    nb.cells.insert(index + 1, copy)
    nbformat.write(nb, path)


def bump_schema(path: Path) -> None:
    nb = read_nb(path)
    cell_by_id(nb, EX1_1).metadata.nbgrader["schema_version"] = 4
    nbformat.write(nb, path)


def strip_metadata(path: Path) -> None:
    nb = read_nb(path)
    for cell in nb.cells:
        cell.metadata = {}
    nbformat.write(nb, path)


def not_json(path: Path) -> None:
    path.write_text('{"cells": [ this is not a notebook')


def move_parts_above_q1(path: Path) -> None:
    """The course's cell that works out `parts` with memory_parts, moved above Question 1."""
    nb = read_nb(path)
    parts = next(c for c in nb.cells if c.source.startswith("parts = kv.memory_parts"))
    nb.cells.remove(parts)
    nb.cells.insert(nb.cells.index(cell_by_id(nb, Q1)), parts)
    nbformat.write(nb, path)


def markdown_links(path: Path) -> None:
    nb = read_nb(path)
    nb.cells.insert(
        1,
        nbformat.v4.new_markdown_cell(
            f"[notes](javascript:alert('{MARKER}')) <javascript:alert('{MARKER}')> "
            "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) "
            f"$\\href{{javascript:alert('{MARKER}')}}{{x}}$"
        ),
    )
    nbformat.write(nb, path)


def markdown_script(path: Path) -> None:
    nb = read_nb(path)
    nb.cells.insert(
        1,
        nbformat.v4.new_markdown_cell(
            f"<script>document.title='{MARKER}'</script><img src=x onerror=\"alert('{MARKER}')\">"
        ),
    )
    nbformat.write(nb, path)


SOLUTIONS_NB = ("link", str(ROOT / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"))
HTML = (
    "\nfrom IPython.display import HTML, Javascript, display\n"
    f"display(HTML(\"<b>hi</b><script>alert('{MARKER}')</script>"
    f'<img src=x onerror=\\"alert(\'{MARKER}\')\\">"))\n'
)
JS = (
    "\nfrom IPython.display import Javascript, display\n"
    f"display(Javascript(\"alert('{MARKER}')\"))\n"
)

CLASS = [
    # honest students: their marks must stay exactly these, with no flag
    Student("solver", "answers everything right", solved(), FULL),
    Student(
        "partial", "answers only the first exercise", {FIRST: SOLVED[FIRST]}, without(*ANSWERS[1:])
    ),
    Student("blank", "submits the release untouched", {}, 0.0),
    # issue 12
    Student(
        "rebinder",
        "rebinds the self-check helpers and hashlib.sha1",
        {FIRST: ALWAYS_EQUAL},
        0.0,
        (r"hashlib|selfcheck|probes", r"tampering"),
    ),
    Student(
        "abs",
        "sets builtins.abs = lambda x: 0 and fakes sha1",
        {FIRST: ABS_ZERO},
        0.0,
        (r"builtins",),
    ),
    Student(
        "transformer",
        "turns every later cell into print('Self-check passed.')",
        solved(**{FIRST: SOLVED[FIRST] + "\n" + TRANSFORMER}),
        0.0,
        (r"get_ipython|input_transformers",),
    ),
    Student(
        "detacher",
        "tries the gradebook, the key and solutions/, and leaves a detached process behind",
        solved(**{FIRST: SOLVED[FIRST] + "\n" + DETACHED}),
        0.0,
        (r"starts a process", r"opens a network connection"),
    ),
    Student(
        "exiter",
        "calls os._exit(0) after right answers",
        solved(**{LAST: SOLVED[LAST] + EXIT}),
        without(LAST),
        (r"killed its kernel",),
    ),
    Student(
        "stuck",
        "loops catching KeyboardInterrupt",
        solved(**{LAST: SOLVED[LAST] + STUCK}),
        without(LAST),
        (r"could not be interrupted",),
    ),
    Student(
        "packager",
        "calls kv.memory_parts where Question 1 says not to",
        solved(q1_answer=SOLVED[Q1] + PACKAGE),
        without(Q1),
        (r"work it out without memory_parts",),
    ),
    # 1. files beside the notebook that would run as the grader
    Student(
        "shadow",
        "puts argparse.py and a kvlesson/ package beside the notebook",
        solved(),
        FULL,
        (),
        files={
            "argparse.py": pwn("argparse").encode(),
            "kvlesson/__init__.py": pwn("kvlesson").encode(),
        },
    ),
    Student(
        "startup",
        "puts sitecustomize.py and an nbgrader_config.py that turns the box "
        "off beside the notebook",
        solved(),
        FULL,
        (),
        files={
            "sitecustomize.py": pwn("sitecustomize").encode(),
            "nbgrader_config.py": (
                pwn("nbgrader_config") + "c = get_config()\nc.BoxedExecute.boxed = False\n"
            ).encode(),
        },
    ),
    # 2. links and special files
    Student(
        "linker",
        "submits a link to the instructor's notebook instead of a notebook",
        {},
        0.0,
        (r"symbolic link", r"no notebook was submitted"),
        files={f"{NOTEBOOK}.ipynb": SOLUTIONS_NB},
    ),
    Student(
        "keylinker",
        "puts links to the key and to the gradebook beside the notebook",
        solved(),
        FULL,
        (r"keys\.json: a symbolic link", r"grades\.db: a symbolic link"),
        files={
            "keys.json": ("link", str(ROOT / "keys" / f"{ASSIGNMENT}.json")),
            "grades.db": ("link", "../../../gradebook.db"),
        },
    ),
    Student(
        "specials",
        "puts a FIFO and a 25 MB file beside the notebook",
        solved(),
        FULL,
        (r"data\.fifo: a FIFO", r"big\.bin: 26,214,400 bytes"),
        files={"data.fifo": "fifo", "big.bin": b"\0" * (25 * 2**20)},
    ),
    Student(
        "leaver",
        "leaves a link to the key in its working copy for the feedback",
        solved(
            **{
                FIRST: SOLVED[FIRST] + "\nimport os\nos.symlink('../../../keys/"
                f"{ASSIGNMENT}.json', 'leak.json')\n"
            }
        ),
        FULL,
        (r"imports os",),
    ),
    # 3. code the reading must see
    Student(
        "addcell",
        "adds a cell of its own that rebinds selfcheck.record",
        solved(),
        0.0,
        (r"writes to an attribute of selfcheck", r"tampering"),
        cells=(("", "selfcheck.record = lambda *a, **k: None"),),
    ),
    Student(
        "setupcell",
        "changes the set-up cell to fake the self-check",
        solved(),
        0.0,
        (r"writes to an attribute of selfcheck",),
        change=lambda path: _edit_setup(
            path, "\nselfcheck.verify = lambda *a, **k: print('Self-check passed.')"
        ),
    ),
    Student(
        "restamp",
        "loads stamps of its own in the set-up cell so that a wrong answer passes its self-check",
        solved(ex1_1_answer="def pool_bytes(share):\n    return 0"),
        without(EX1_1),
        change=lambda path: _edit_setup(path, "\nselfcheck.load_stamps('{}')"),
    ),
    Student(
        "shell",
        "reads the solutions with a `!` line",
        solved(**{Q1: SOLVED[Q1] + "\n!cat ../../../solutions/*/*.ipynb | head -c 100"}),
        0.0,
        (r"shell command",),
    ),
    Student(
        "writefile",
        "writes and imports a module with %%writefile",
        solved(),
        0.0,
        (r"magic %writefile",),
        cells=((EX1_1, "%%writefile helper.py\nanswer = 1"),),
    ),
    # 4. nothing in the kernel to forge from
    Student(
        "forger",
        "prints a forged record line of right values from its own cell",
        {},
        0.0,
        (),
        cells=(("", f"print({FORGED!r})"),),
    ),
    Student(
        "doubler",
        "prints a forged record line from inside the test, beside the real one",
        {EX1_1: f"def pool_bytes(share):\n    print({FORGED!r})\n    return 0"},
        0.0,
        (r"\d+ record lines",),
    ),
    # 5. forbidden functions, indirectly
    Student(
        "indirect",
        "works the pool out with kv.startup, which calls memory_parts",
        solved(
            q1_answer="pool_gb = kv.startup(gpu, model, Q1_SHARE, LONGEST, "
            "kv.RESERVE_BYTES).parts.pool_bytes / 1e9\n"
            "unused_gb = (100 - Q1_SHARE) / 100 * gpu.memory_bytes / 1e9"
        ),
        without(Q1),
        (r"uses memory_parts",),
    ),
    Student(
        "elsewhere",
        "calls memory_parts in a cell of its own and uses the result",
        solved(
            q1_answer="pool_gb = _parts.pool_bytes / 1e9\nunused_gb = _parts.unused_bytes / 1e9"
        ),
        without(Q1),
        (r"memory_parts",),
        cells=(("", f"_parts = kv.memory_parts({EARLY_Q1_SHARE}, gpu, model)"),),
    ),
    Student(
        "builtname",
        "reaches memory_parts through a name built at run time",
        solved(
            ex1_1_answer="import operator\n"
            "_mp = operator.attrgetter('memory' + '_parts')(kv)\n"
            "def pool_bytes(share):\n"
            "    return getattr(_mp(share, gpu, model), "
            "'pool' + '_bytes')"
        ),
        without(EX1_1),
        (r"memory_parts",),
    ),
    Student(
        "moduler",
        "hides memory_parts in a module of its own beside the notebook",
        solved(
            q1_answer="import helper\npool_gb = helper.pool(Q1_SHARE, gpu, model) / 1e9\n"
            "unused_gb = (100 - Q1_SHARE) / 100 * gpu.memory_bytes / 1e9"
        ),
        without(Q1),
        (r"helper\.py: a file handed in beside the notebook",),
        files={
            "helper.py": b"import kvlesson as kv\n\ndef pool(share, gpu, model):\n"
            b"    return kv.memory_parts(share, gpu, model).pool_bytes\n"
        },
    ),
    Student(
        "mover",
        "moves the course's memory_parts cell above Question 1 and reads it",
        solved(q1_answer="pool_gb = parts.pool_bytes / 1e9\nunused_gb = parts.unused_bytes / 1e9"),
        without(Q1),
        (r"moved",),
        change=move_parts_above_q1,
    ),
    # issue 26, 1-2: a submission is its notebook, the same in every environment
    Student(
        "writer",
        "writes a module of its own at run time and imports it",
        solved(q1_answer=WRITER),
        without(Q1),
        (r"uses open",),
    ),
    Student(
        "datafile",
        "hands in its answers in a file beside the notebook and reads them",
        solved(q1_answer="import json\npool_gb, unused_gb = json.load(open('answers.json'))"),
        without(Q1),
        (r"answers\.json: a file handed in beside the notebook",),
        files={"answers.json": b"[53.9, 8.0]"},
    ),
    # issue 26, 6: what a student writes reaches the instructor inert
    Student(
        "jslinker",
        "puts javascript: and data: links in Markdown of its own",
        solved(),
        FULL,
        (),
        change=markdown_links,
    ),
    Student(
        "refuser",
        "hands in a kvlesson-refused.json of its own: a formula, a line that "
        "accuses a classmate, terminal escapes",
        solved(),
        FULL,
        (
            r"kvlesson-refused\.json beside this submission is not the list the course's collect "
            r"writes",
        ),
        files={
            REFUSALS: json.dumps(
                [
                    '=HYPERLINK("http://evil.example","open me")',
                    "x\n  partial · floor_plan · q1_answer: copied",
                    "\x1b[2J\x1b[31mred",
                ]
            ).encode()
        },
        collected=True,
    ),
    # issue 26, 7: one entry never stops the class
    Student(
        "oddnames",
        "hands in a link whose name is not UTF-8, a name with a newline, a "
        "250-character name and a name that is a Markdown link",
        solved(),
        FULL,
        (
            r"caf\\xe9\.lnk: a symbolic link",
            r"two\\nlines\.txt: a file handed in",
            r"\(254 characters\)",
            r"\[x\]\(javascript:",
        ),
        files={
            os.fsdecode(b"caf\xe9.lnk"): ("link", "../../../gradebook.db"),
            "two\nlines.txt": b"x",
            "n" * 250 + ".txt": b"x",
            f"[x](javascript:alert('{MARKER}')).py": b"x",
        },
    ),
    Student(
        "clearer",
        "clears the real record line from the test's output and prints a "
        "forged one of right values",
        solved(ex1_1_answer=forger("clear_output()")),
        without(EX1_1),
        (r"ex1_1_tests: 2 record lines",),
    ),
    Student(
        "burier",
        "buries the real record line past nbgrader's 1,000 lines of output and prints a forged one",
        solved(ex1_1_answer=forger("print('x\\n' * 1_100)")),
        without(EX1_1),
        (r"ex1_1_tests: 2 record lines",),
    ),
    # issue 26, 3: whatever the student's process does to the watch inside it, the
    # forbidden function is not there in the second run
    Student(
        "threader",
        "calls memory_parts from a thread started with _thread, which no trace function sees",
        solved(q1_answer=THREADER),
        without(Q1),
        (
            r"q1_pool_tests: scored 0: worked out again in a fresh box whose kvlesson lacks "
            r"floor_view, memory_parts",
        ),
    ),
    Student(
        "threadtable",
        "fills a table of pool_bytes with memory_parts from a _thread thread",
        solved(ex1_1_answer=THREAD_TABLE),
        without(EX1_1),
        (r"ex1_1_tests: scored 0: worked out again .* lacks memory_parts,",),
    ),
    Student(
        "piper",
        "keeps a copy of the watch's report pipe, closes the original, then "
        "calls memory_parts by a name built at run time",
        solved(q1_answer=PIPER),
        without(Q1),
        (r"q1_pool_tests: scored 0: worked out again",),
    ),
    Student(
        "selfsender",
        "has the kernel send itself an execute_request with "
        "store_history=False through its own connection file",
        solved(
            q1_answer="pool_gb = _box['p'] / 1e9\n"
            "unused_gb = (100 - Q1_SHARE) / 100 * gpu.memory_bytes / 1e9"
        ),
        without(Q1),
        (r"q1_pool_tests: scored 0: worked out again",),
        cells=(("", SELF_SENDER),),
    ),
    # 6. a notebook nbgrader cannot grade costs that student only
    Student(
        "copier",
        "copies an answer cell by accident",
        solved(),
        0.0,
        (r"copied \(copy and paste\)",),
        change=copy_answer_cell,
    ),
    Student(
        "schema",
        "has a cell whose metadata says schema version 4",
        solved(),
        0.0,
        (r"grading information",),
        change=bump_schema,
    ),
    Student(
        "stripped",
        "has every cell's metadata stripped",
        solved(),
        0.0,
        (r"none of its graded cells",),
        change=strip_metadata,
    ),
    Student(
        "garbled",
        "submits a file that is not a notebook",
        solved(),
        0.0,
        (r"not a notebook",),
        change=not_json,
    ),
    # 7. record lines that would break the marker
    Student(
        "huge",
        "prints a 2 MB record line during the test",
        {
            EX1_1: "def pool_bytes(share):\n"
            "    print('KVLESSON-MARK ' + '{\"x\": \"' + 'A' * 2 * 10**6 "
            "+ '\"}')\n    return 0"
        },
        0.0,
        (r"record lines",),
    ),
    Student(
        "nested",
        "prints a deeply nested record line during the test",
        {
            EX1_1: "def pool_bytes(share):\n    print('KVLESSON-MARK ' + '[' * 40000 + ']' * "
            "40000)\n    return 0"
        },
        0.0,
        (r"record lines",),
    ),
    # 8. live HTML and JavaScript
    Student(
        "htmler",
        "displays HTML with a script and an onerror from an answer",
        solved(**{FIRST: SOLVED[FIRST] + HTML + JS}),
        FULL,
        (),
    ),
    Student(
        "markdowner",
        "adds a Markdown cell with a script",
        solved(),
        FULL,
        (),
        change=markdown_script,
    ),
    # 9. resources
    Student(
        "filler",
        "fills the disk from its working copy",
        solved(
            **{
                FIRST: SOLVED[FIRST] + "\nwith open('fill.bin', 'wb') as f:\n"
                "    for _ in range(4096):\n        f.write(b'x' * 2**20)\n"
            }
        ),
        FULL,
        (),
    ),
    Student(
        "hog",
        "asks for 8 GB of memory",
        solved(**{FIRST: SOLVED[FIRST] + "\nhog = bytearray(8 * 2**30)\n"}),
        FULL,
        (),
    ),
    Student(
        "forker",
        "starts processes until it cannot",
        solved(
            **{
                FIRST: SOLVED[FIRST]
                + f'''
import os, sys, _posixsubprocess
started = 0
for _ in range(500):
    try:
        _posixsubprocess.fork_exec(
            [sys.executable, "-c", "import time; time.sleep(30)", "{MARKER}"],
            [os.fsencode(sys.executable)], True, (), None, None, -1, -1, -1, -1, -1, -1,
            *os.pipe(), True, True, -1, None, None, None, -1, None, False)
        started += 1
    except OSError:
        break
print("started", started)
'''
            }
        ),
        0.0,
        (r"imports _posixsubprocess",),
    ),
]
BY_ID = {student.id: student for student in CLASS}
HONEST = ("solver", "partial", "blank")


def _edit_setup(path: Path, extra: str) -> None:
    nb = read_nb(path)
    setup = next(
        c for c in nb.cells if c.cell_type == "code" and "import kvlesson as kv" in c.source
    )
    setup.source += extra
    nbformat.write(nb, path)


def submit(course_root: Path, student: Student) -> None:
    """The student's work where `nbgrader collect` leaves it (for a `collected` one, sealed
    as the course's collect seals it, with collect's notes beside it)."""
    final = course_root / "submitted" / student.id / ASSIGNMENT
    folder = course_root / "inbound" / student.id if student.collected else final
    folder.mkdir(parents=True)
    path = folder / f"{NOTEBOOK}.ipynb"
    if f"{NOTEBOOK}.ipynb" not in student.files:
        shutil.copy(course_root / "notebooks" / ASSIGNMENT / path.name, path)
        edit_notebook(path, answers=student.answers)
        if student.cells:
            nb = read_nb(path)
            for after, code in reversed(student.cells):
                index = (
                    nb.cells.index(cell_by_id(nb, after)) + 1
                    if after
                    else next(
                        i for i, c in enumerate(nb.cells) if "import kvlesson as kv" in c.source
                    )
                    + 1
                )
                nb.cells.insert(index, nbformat.v4.new_code_cell(code))
            nbformat.write(nb, path)
        if student.change:
            student.change(path)
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    for name, content in student.files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if content == "fifo":
            os.mkfifo(target)
        elif isinstance(content, tuple):
            target.symlink_to(content[1])
        else:
            target.write_bytes(content)
    if student.collected:  # as kvlesson.grading.exchange.SafeCollect.do_copy does
        notes = [f"not collected: {refusal}" for refusal in seal.seal(folder, final)]
        if notes:
            (final / REFUSALS).write_text(json.dumps(notes, indent=1))


@dataclass
class Graded:
    course: Path
    run: subprocess.CompletedProcess
    env: dict

    def grades(self, student: str) -> dict[str, float]:
        with Gradebook(f"sqlite:///{self.course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
            notebook = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student)
            return {grade.name: grade.score for grade in notebook.grades}

    def flags(self, student: str) -> list[str]:
        return flags_of(self.course, ASSIGNMENT, student)

    def notebook(self, student: str) -> nbformat.NotebookNode:
        return read_nb(self.course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb")

    def printed(self, student: str, grade_id: str) -> str:
        cell = cell_by_id(self.notebook(student), grade_id)
        return "".join(o.get("text", "") for o in cell.outputs)


def grade_command(root: Path, jobs: int) -> list[str]:
    """The guide's grading command for this course, `jobs` at a time."""
    return [
        sys.executable,
        "-m",
        "kvlesson",
        "grade",
        ASSIGNMENT,
        "--course",
        str(root),
        "--jobs",
        str(jobs),
    ]


def a_course(base: Path, students) -> tuple[Path, dict]:
    """A course of this assignment in `base`, generated, with `students` handed in; its root
    and the instructor's environment."""
    root = copy_course(base / "course", [ASSIGNMENT])
    set_cell_timeout(root, CELL_TIMEOUT)
    env = {**account_env(base / "instructor", "instructor"), "KVLESSON_COURSE": str(root)}
    run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], root, env)
    for student in students:
        submit(root, student)
    return root, env


@pytest.fixture(scope="module")
def starved(tmp_path_factory):
    """The determinism run (TIMING's students, --jobs 1 on half of one core), started before
    the class's run and graded beside it: its starved half core costs the suite nothing while
    the class is graded. Yields a function that waits for it: (its course, the run)."""
    for leftover in Path("/tmp").glob(f"{MARKER}-pwned-*"):
        leftover.unlink()
    base = tmp_path_factory.mktemp("starved")
    root, env = a_course(base, [BY_ID[student] for student in TIMING])
    with (
        half_a_core(0) as join,
        subprocess.Popen(
            grade_command(root, jobs=1),
            cwd=base,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=join,
        ) as process,
    ):

        def finished() -> tuple[Path, subprocess.CompletedProcess]:
            out, err = process.communicate(timeout=HANG)
            return root, subprocess.CompletedProcess(process.args, process.returncode, out, err)

        try:
            yield finished
        finally:
            if process.poll() is None:
                process.kill()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, starved):
    """The class submitted and graded by the one command, in one run, two at a time (while the
    determinism run goes on beside it)."""
    base = tmp_path_factory.mktemp("cheats")
    root, env = a_course(base, CLASS)
    command = grade_command(root, jobs=2)
    done = subprocess.run(command, cwd=base, env=env, capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 1, done.stdout + done.stderr  # four notebooks nbgrader cannot grade
    yield Graded(root, done, env)
    LISTENER.close()


def test_every_submission_gets_a_mark_and_nothing_is_left_failed(graded):
    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        submitted = sorted(s.student.id for s in gb.assignment_submissions(ASSIGNMENT))
    assert submitted == sorted(BY_ID)
    not_graded = re.findall(r"^  (\S+) .*NOT GRADED", graded.run.stdout, re.M)
    assert sorted(not_graded) == ["copier", "garbled", "schema", "stripped"], graded.run.stdout


@pytest.mark.parametrize("student", CLASS, ids=[s.id for s in CLASS])
def test_each_student_gets_the_mark_it_earned(graded, student):
    grades = graded.grades(student.id)
    assert set(grades) == set(POINTS), grades
    assert sum(grades.values()) == student.score, (
        f"{student.id} ({student.does}): {grades}, expected {student.score} of {FULL}"
        f"\nflags: {graded.flags(student.id)}"
    )


@pytest.mark.parametrize("student", CLASS, ids=[s.id for s in CLASS])
def test_each_cheat_is_flagged_with_its_reason_and_shown_in_the_summary(graded, student):
    flags = graded.flags(student.id)
    missing = [p for p in student.flags if not any(re.search(p, flag) for flag in flags)]
    assert not missing, f"{student.id} ({student.does}): no flag matching {missing} in {flags}"
    for flag in flags:
        assert (
            f"{student.id} · " in graded.run.stdout and flag.split(": ", 1)[1] in graded.run.stdout
        ), (flag, graded.run.stdout)


def test_honest_students_keep_their_marks_and_get_no_flag(graded):
    expected = {
        "solver": POINTS,
        "blank": {t: 0.0 for t in POINTS},
        "partial": {t: (p if t in graded_tests_of(FIRST) else 0.0) for t, p in POINTS.items()},
    }
    for student in HONEST:
        assert graded.grades(student) == expected[student], student
        assert graded.flags(student) == [], (student, graded.flags(student))


def test_no_file_beside_a_notebook_ran_outside_the_box(graded):
    """Class 1: the launcher, the worker and nbgrader run in isolated mode, away from the
    submission's folder; inside the box a student's module may run, but leaves nothing on
    the machine or in the course."""
    left = sorted(
        p.name
        for p in [*Path("/tmp").glob(f"{MARKER}-pwned-*"), *graded.course.glob(f"{MARKER}-pwned-*")]
    )
    assert left == [], left


def test_links_and_special_files_are_left_out_and_the_gradebook_stays_writable(graded):
    """Class 2: nothing is followed or opened: the linker's notebook is not the
    instructor's, the key and the gradebook are not copied, the FIFO does not hang
    grading, the big file is not copied; everyone after them was graded."""
    copies = graded.course / "autograded"
    for student, name in (
        ("keylinker", "keys.json"),
        ("keylinker", "grades.db"),
        ("specials", "data.fifo"),
        ("specials", "big.bin"),
    ):
        assert not (copies / student / ASSIGNMENT / name).exists(), (student, name)
    assert not (copies / "linker" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").exists()
    assert os.access(graded.course / "gradebook.db", os.W_OK)


def test_feedback_carries_no_link_left_in_a_working_copy_and_no_live_html(graded):
    """Classes 2 and 8: the working copy is thrown away with the box, so a link the leaver
    made does not reach feedback; what nbgrader's feedback and the formgrader show of the
    htmler and the markdowner runs nothing."""
    env = graded.env
    run_nbgrader(["generate_feedback", ASSIGNMENT, "--force"], graded.course, env)
    feedback = graded.course / "feedback"
    assert not [p for p in feedback.rglob("*") if p.is_symlink()]
    assert not list(feedback.rglob("leak.json"))
    for student in ("htmler", "markdowner", "jslinker", "oddnames", "refuser"):
        page = (feedback / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
        shown = graded.notebook(student)  # what the formgrader shows: outputs and Markdown
        stored = json.dumps(
            [c.get("outputs", []) if c.cell_type == "code" else c.source for c in shown.cells]
        )
        for text in (
            f"<script>alert('{MARKER}')",
            f"<script>document.title='{MARKER}'",
            f"onerror=\"alert('{MARKER}')",
            f"onerror=\\\"alert('{MARKER}')",
            "application/javascript",
            "\\href{javascript",
        ):
            assert text not in page and text not in stored, (student, text)
        # the page's own scripts and styles aside, nothing that runs or loads: no handler,
        # no javascript: or data: link, in the cells, the outputs or the grader's comments
        running = [
            part
            for part in live(page, {"script", "style", "link", "meta"})
            if "javascript" in part or "data:" in part or " on" in part
        ]
        assert not running, (student, running)


def test_what_a_student_wrote_reaches_the_summary_the_csvs_and_the_report_inert(graded):
    """Class 6 and 7: the refuser's own list (a formula, a line accusing a classmate,
    terminal escapes) and the odd names are left out or shown as text: no CSV cell starts a
    formula, no line of the summary is forged, no terminal escape is printed, and the class
    report's page runs nothing."""
    out = graded.run.stdout + graded.run.stderr
    assert "\x1b" not in out and "\r" not in out
    assert not re.search(r"^\s*partial · floor_plan · q1_answer: copied", out, re.M), out
    for path in (
        graded.course / "flags" / f"{ASSIGNMENT}.csv",
        graded.course / "reports" / f"{ASSIGNMENT}.csv",
    ):
        cells = [cell for row in csv.reader(path.open(newline="")) for cell in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], path
    page = (graded.course / "reports" / f"{ASSIGNMENT}.html").read_text()
    assert not live(page, {"style", "meta"}), live(page, {"style", "meta"})


def test_no_hash_of_a_graded_answer_is_in_the_graded_kernel(graded):
    """Class 4: the hidden tests as autograde runs them carry no stamp: what a brute force
    could invert is not in the kernel; the forgers' lines scored nothing."""
    for cell in graded.notebook("solver").cells:
        if nbgrader_meta(cell).get("grade"):
            hidden = cell.source.split("### END HIDDEN TESTS")[0]
            assert "stamp=" not in hidden and '"hash"' not in hidden, nbgrader_meta(cell)


def test_the_detacher_meets_walls_and_its_process_dies_with_its_kernel(graded):
    """Class 9 and issue 12: the gradebook and the key cannot be written, solutions/ not
    read, no TCP connection reaches the grader; the detached process started in the box,
    failed to connect, and is gone."""
    printed = graded.printed("detacher", next(iter(graded_tests_of(FIRST)))) + "".join(
        o.get("text", "") for o in cell_by_id(graded.notebook("detacher"), FIRST).outputs
    )
    assert "gradebook: OSError" in printed or "gradebook: FileNotFoundError" in printed, printed
    assert "WROTE" not in printed and "SOLUTIONS:" not in printed, printed
    assert "subprocess: kvlesson box" in printed, printed
    assert "tcp: " in printed and "CONNECTED" not in printed, printed
    assert re.search(r"started\.txt \d+", printed), printed
    LISTENER.setblocking(False)
    with pytest.raises(BlockingIOError):
        LISTENER.accept()
    time.sleep(1.0)
    running = [
        p.parent.name for p in Path("/proc").glob("[0-9]*/cmdline") if MARKER.encode() in _read(p)
    ]
    assert not running, running


def test_resources_are_capped_and_cost_only_the_cell(graded):
    """Class 9: the disk filler met a full working copy (the machine's disk did not fill),
    the hog a MemoryError, the forker a limit on processes; each kept the rest."""
    filled = "".join(str(o) for o in cell_by_id(graded.notebook("filler"), FIRST).outputs)
    assert "No space left on device" in filled, filled
    hog = "".join(str(o) for o in cell_by_id(graded.notebook("hog"), FIRST).outputs)
    assert "MemoryError" in hog, hog
    started = re.search(
        r"started (\d+)",
        "".join(o.get("text", "") for o in cell_by_id(graded.notebook("forker"), FIRST).outputs),
    )
    assert started and int(started.group(1)) < 500, started


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


# Students whose marks could hang on timing: a stuck kernel restarted, a thread, a message
# the kernel sends itself, a forbidden call the ledger reports late (and, after the stuck
# cell's new kernel, with that kernel's count), and an honest one.
TIMING = ("solver", "stuck", "threader", "selfsender", "packager")


def test_marks_and_flags_are_the_same_with_one_job_on_a_starved_core(graded, starved):
    """Determinism: the students of TIMING, graded again in a course of their own with
    --jobs 1 on half of one core (the grader, its worker, the box and the kernel all on that
    core, under a CPU quota: support.throttle, and beside the class's own run), get exactly the
    marks and the flags they got in the class's run with --jobs 2 on both cores."""
    root, done = starved()
    assert done.returncode in (0, 1) and "5 submissions graded" in done.stdout, done.stderr
    again = Graded(root, done, graded.env)
    for student in TIMING:
        assert (again.grades(student), again.flags(student)) == (
            graded.grades(student),
            graded.flags(student),
        ), student
