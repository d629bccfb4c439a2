"""What notebooks 5 to 7 say in words, checked where words can be checked (issue 18).

Notebook 5's section on two GPUs says whose memory each figure is; notebook 6
defines its percentiles before it uses them, names the capstone's variables, and
its heading and text agree on Bob's document; notebook 7's glossary has the
terms notebooks 5 and 6 teach, and its command for another card runs from a
cell with the kernel's own Python.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import nbformat
import pytest

from kvlesson.authoring.shown_numbers import cell_text
from support.paths import ROOT
from support.patience import HANG


def cells(name: str) -> list:
    [path] = (ROOT / "solutions" / name).glob("*.ipynb")
    return nbformat.read(path, as_version=4).cells


def section(name: str, heading: str, until: str) -> list:
    """The cells from the markdown cell that starts with `heading` to the one with `until`."""
    all_cells = cells(name)
    start = next(i for i, c in enumerate(all_cells) if c.source.startswith(heading))
    end = next(i for i, c in enumerate(all_cells) if i > start and c.source.startswith(until))
    return all_cells[start:end]


def test_notebook_5_section_5_says_whose_memory_each_figure_is():
    """Two GPUs: every line with a GB or GiB figure says per GPU or in all, as printed."""
    part = section("05_real_server", "## 5 ·", "## 6 ·")
    prose = " ".join(c.source for c in part if c.cell_type == "markdown")
    printed = "\n".join(cell_text(c)[len(c.source) :] for c in part if c.cell_type == "code")
    pieces = re.split(r"(?<=\.)\s+(?=[A-Z])", " ".join(prose.split())) + printed.splitlines()
    lines = [piece for piece in pieces if re.search(r"\d\s*GiB|\d\s*GB\b", piece)]
    assert len(lines) >= 8
    vague = [line for line in lines if not re.search(r"each GPU|per GPU|in all|one GPU", line)]
    assert not vague, vague


def test_notebook_5_does_not_answer_question_6_above_it():
    """Question 6 asks how many full-length requests to let in: the text above must not say."""
    all_cells = cells("05_real_server")
    q6 = next(i for i, c in enumerate(all_cells) if "**Question 6.**" in c.source)
    above = " ".join(cell_text(c) for c in all_cells[:q6])
    assert not re.search(r"promise\s+\**(two|2)\b", above, re.IGNORECASE)
    assert "Question 6" in above  # the text sends the reader there instead


def test_notebook_6_defines_percentiles_and_the_tail_before_using_them():
    text = "\n".join(c.source for c in cells("06_traffic") if c.cell_type == "markdown")
    for term in ("p50", "p95", "p99", "tail"):
        first = re.search(rf"\b{term}\b", text)
        defined = re.search(rf"\*\*{term}\*\*", text)
        assert defined and defined.start() + 2 == first.start(), (
            f"{term} is used before it is defined"
        )


def test_notebook_6_heading_and_text_agree_on_bobs_document():
    part = section("06_traffic", "## 2 ·", "## 3 ·")
    heading = part[0].source.splitlines()[0].split("·")[1]
    assert not re.search(r"\d", heading)  # a heading cannot say what the cell below computes
    printed = " ".join(cell_text(c) for c in part if c.cell_type == "code")
    assert re.search(r"Bob's prompt: [\d,]+ tokens, about \d+ pages", printed)
    assert not re.search(
        r"\d+\s*pages", " ".join(c.source for c in part if c.cell_type == "markdown")
    )


def test_the_capstone_names_its_three_variables_and_their_units():
    text = " ".join(
        c.source for c in section("06_traffic", "## 6 ·", "## 7 ·") if c.cell_type == "markdown"
    )
    for name in ("assistant_choice", "office_choice", "app_choice"):
        assert f"`{name}`" in text
    for key, unit in (("share", "percent"), ("longest", "tokens"), ("budget", "tokens a step")):
        assert re.search(rf"`{key}` \({unit}", text), key


def test_notebook_6_section_4_says_agents_send_on_a_timer():
    text = " ".join(c.source for c in section("06_traffic", "## 4 ·", "## 5 ·"))
    assert "own timer, whether or not its last one has been answered" in text
    assert "seed 001" not in text.lower()


GLOSSARY = (
    "time to first token",
    "time per output token",
    "inter-token latency",
    "p95",
    "tail",
    "token budget",
    "chunked prefill",
    "prefix caching",
    "tensor parallel",
    "fp8 cache",
    "admission cap",
    "prefill",
    "typical size",
    "V0, V1",
    "LoRA",
    "NCCL",
    "hybrid model",
    "MLA",
    "measured total",
)


def test_the_glossary_has_the_terms_of_notebooks_5_and_6():
    glossary = next(c.source for c in cells("07_wrap_up") if c.source.startswith("## Glossary"))
    words = [row.split("|")[1] for row in glossary.splitlines() if row.startswith("| **")]
    for term in GLOSSARY:
        assert any(term in word for word in words), term
    itl = next(
        row
        for row in glossary.splitlines()
        if row.startswith("| **") and "inter-token latency" in row.split("|")[1]
    )
    assert "gap between tokens" in itl  # notebook 6's words for it
    defined = next(
        c.source for c in cells("06_traffic") if "**inter-token latency (ITL)**" in c.source
    )
    assert "gap between tokens" in " ".join(defined.split())


@pytest.mark.process
def test_the_command_for_another_card_runs_from_a_cell(tmp_path):
    """The wrap-up's command, as IPython runs it from a cell: `!{sys.executable} -m ...` is this
    kernel's Python, whatever a fresh terminal's PATH holds. Run here with PATH emptied and an
    `--out` that already has a file, so it stops after checking its arguments (the cell
    itself gives none: the course goes to a new folder of the student's home)."""
    text = next(c.source for c in cells("07_wrap_up") if "kvlesson for" in c.source)
    [line] = [
        row for row in text.splitlines() if row.startswith("!{sys.executable} -m kvlesson for")
    ]
    assert "import sys" in text
    args = line.split()[1:]
    out = tmp_path / "taken"  # a folder with a file in it: no course is written there
    out.mkdir()
    (out / "keep").touch()
    assert "--out" not in args  # the default: a new folder in the student's home
    args += ["--out", str(out)]
    run = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=HANG,
        cwd=ROOT / "notebooks" / "07_wrap_up",
        env={**os.environ, "PATH": ""},
    )
    assert run.returncode == 2 and "out must be a new or empty folder" in run.stderr, run.stderr


# --- terms and files a student meets --------------------------------------------------------

NOTEBOOKS = sorted(path.parent.name for path in (ROOT / "solutions").glob("*/*.ipynb"))
# A term and how a sentence uses it (a word, case as written); it is defined where it is set in
# bold. The walk of December 2026 met these before their definition.
TERMS = {
    "prefill": r"\bprefill\b",
    "typical size": r"\btypical size\b",
    "V1": r"\bV1\b",
    "V0": r"\bV0\b",
    "LoRA": r"\bLoRA\b",
    "NCCL": r"\bNCCL\b",
    "MLA": r"\bMLA\b",
    "hybrid": r"\bhybrid\b",
    "preemption": r"\bpreemption\b",
    "chunked prefill": r"\bchunked prefill\b",
    "token budget": r"\btoken budget\b",
}


def student_markdown() -> list[tuple[str, int, str]]:
    """Every markdown cell a student reads (not the instructor's answers), in course order."""
    return [
        (name, i, cell.source)
        for name in NOTEBOOKS
        for i, cell in enumerate(cells(name))
        if cell.cell_type == "markdown" and not cell.metadata.get("nbgrader", {}).get("solution")
    ]


def first_uses(texts: list[tuple[str, int, str]]) -> dict[str, tuple[int, int | None]]:
    """For each term, the index of the first cell that uses it and of the first that defines
    it in bold (None: never defined)."""
    found = {}
    for term, pattern in TERMS.items():
        used = next(k for k, (_, _, text) in enumerate(texts) if re.search(pattern, text))
        bold = re.compile(r"\*\*" + re.escape(term) + r"[.:]?\*\*", re.IGNORECASE)
        defined = next((k for k, (_, _, text) in enumerate(texts) if bold.search(text)), None)
        found[term] = (used, defined)
    return found


def test_every_term_is_defined_before_or_where_it_is_first_used():
    texts = student_markdown()
    late = {
        term: (texts[used][:2], None if defined is None else texts[defined][:2])
        for term, (used, defined) in first_uses(texts).items()
        if defined is None or defined > used
    }
    assert not late, f"(first use, definition) by term: {late}"


def test_the_term_check_catches_a_term_used_before_it_is_defined():
    texts = [("00", 0, "The prefill is slow."), ("01", 0, "Its **prefill** is reading a prompt.")]
    used, defined = first_uses(texts + student_markdown())["prefill"]
    assert (used, defined) == (0, 1)


def test_every_term_is_in_the_glossary():
    glossary = next(c.source for c in cells("07_wrap_up") if c.source.startswith("## Glossary"))
    rows = [row for row in glossary.splitlines() if row.startswith("| **")]
    for term, pattern in TERMS.items():  # the course's word, or vLLM's name for it
        assert any(re.search(pattern, row, re.IGNORECASE) for row in rows), term


# A path into the repository outside notebooks/, which the student's Lab does not serve.
REPO_PATH = re.compile(
    r"(?<![\w/.])(?:docs|tests|kvlesson|scripts|binder|hub)/[\w./-]*|"
    r"`kvlesson\.[\w.]+`|\bREADME\b|\.md\b"
)


def test_no_file_a_student_cannot_open_is_named():
    """A file the text sends a student to opens from the Lab (a notebook beside this one, a
    web page) or is quoted in the text; the repository's docs/ and tests/ are out of reach."""
    named = [
        (name, i, m.group(0))
        for name, i, text in student_markdown()
        for m in REPO_PATH.finditer(re.sub(r"\]\(https?://[^)]*\)", "]", text))
    ]
    assert not named, named
    assert REPO_PATH.search("see `docs/fidelity.md`") and REPO_PATH.search("tests/data/vllm_logs")
