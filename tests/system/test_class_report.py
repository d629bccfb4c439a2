"""What the class got wrong: the class report, the carry-over and the feedback (issue 20).

A synthetic class of 01_floor_plan and 02_ceiling, built from the instructor's solutions
with wrong answers written in as students write them (GB read as GiB, the reserve left
out, floor for ceiling, the notebook's global for the argument, a forbidden function, an
answer no known mistake gives, an untouched release), is graded once by the one command
(`kvlesson grade 01_floor_plan 02_ceiling`). The counts each report must show
are worked out here from the class as written, never from the report's own code: the
report's counts (HTML and CSV) must be exactly those. The page is opened in Debian's
Chromium: no console error, every image has alt text, the charts are drawn, and a
screenshot is not blank. The course report (`--report`) counts how each mistake carries
from notebook 1 to notebook 2; `--names` names students, the default names none; the
feedback a student gets names the known mistake under each failed exercise, in the words
of the self-check's hint; bad input gets a clear error.

The screenshot goes to artifacts/class_report.png; with KVLESSON_UPDATE_DOCS=1 also to
docs/images/class_report.png, the guide's picture of the report.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from PIL import Image

from kvlesson import cli
from kvlesson.authoring import stamp_places
from kvlesson.authoring.command import copy_course
from kvlesson.authoring.key_mistakes import key_mistakes
from kvlesson.grading.checks.messages import words_digest
from kvlesson.grading.course.known_mistakes import MISTAKES, NAMES
from kvlesson.grading.course.results import FAILED, PASSED, ZEROED
from kvlesson.grading.marking import diagnosis
from kvlesson.grading.report import counts
from support.course import (
    run_nbgrader,
)
from support.graded_course import GRADED
from support.paths import ROOT
from support.report_class import (
    ASSIGNMENTS,
    CLASS,
    EXERCISES,
    IDS,
    NOT_JSON,
    NOTEBOOKS,
    POINTS,
    expected_exercise_rows,
    expected_scores,
    handed_in,
    made,
)

# --- the class, graded once ------------------------------------------------------------


@dataclass
class Graded:
    """What the graded class left: the course, the grading run, the reports asked for."""

    course: Path
    env: dict
    run: subprocess.CompletedProcess
    runs: dict[str, tuple[int, str, str]] = field(default_factory=dict)

    def csv(self, name: str) -> list[dict[str, str]]:
        with (self.course / "reports" / name).open(newline="") as f:
            return list(csv.DictReader(f))

    def html(self, name: str) -> str:
        return (self.course / "reports" / name).read_text()


def command(*args: str, course: Path) -> tuple[int, str, str]:
    """`kvlesson grade ARGS --course COURSE`, through its entry in this process
    (the grading itself runs as a command, in the fixture): the exit code, what it printed,
    what it said on stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["grade", *args, "--course", str(course)])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def graded(graded_course) -> Graded:
    """The class handed in and graded by the one command, with every other assignment of the
    course, in one run (tests/system/conftest.py, shared with test_grade_every_assignment.py);
    then the course report, anonymous and named, the named report of 01_floor_plan (which
    grades nothing again), and the feedback of 01_floor_plan."""
    root, env, done = graded_course.root, graded_course.env, graded_course.run
    # exit 1: one submission could not be graded (hal's), and it is named
    assert done.returncode == 1 and "hal (01_floor_plan)" in done.stderr, done.stderr
    graded = Graded(root, env, done)
    for name, args, code in (
        ("course", ["--report"], 0),
        ("course names", ["--report", "--names"], 0),
        ("01 names", ["01_floor_plan", "--names"], 1),
    ):  # hal, again
        graded.runs[name] = command(*args, course=root)
        assert graded.runs[name][0] == code, graded.runs[name]
    run_nbgrader(["generate_feedback", "01_floor_plan", "--force"], root, env)
    return graded


# --- tables, as the page shows them and as the CSV holds them ---------------------------


class Tables(HTMLParser):
    """Every table of a page: its caption and its rows of cell texts."""

    def __init__(self, html: str):
        super().__init__()
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._in_caption = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"caption": "", "rows": []})
        elif tag == "tr":
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._in_caption = True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "caption":
            self._in_caption = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_caption:
            self.tables[-1]["caption"] += data

    def named(self, start: str) -> list[list[str]]:
        """The body rows of the one table whose caption starts with `start`."""
        [table] = [t for t in self.tables if t["caption"].startswith(start)]
        return table["rows"][1:]


def counted(rows: list[dict[str, str]], assignment: str) -> dict[tuple[str, str], int]:
    """The CSV's per-exercise counts of `assignment`: (exercise, item) -> count."""
    return {
        (r["exercise"], r["item"]): int(r["count"])
        for r in rows
        if r["assignment"] == assignment and r["section"] in ("exercise", "mistake")
    }


def group_label(item: str) -> str:
    """How the page names a group of failed answers."""
    return f"{NAMES[item]} ({item})" if item in MISTAKES else counts.GROUPS[item]


def page_counts(html: str, assignment: str) -> dict[tuple[str, str], int]:
    """The page's per-exercise counts, as `counted` gives the CSV's."""
    tables, found = Tables(html), {}
    for exercise, points, handed, passed, failed, skipped in tables.named("Each exercise"):
        assert float(points) == POINTS[exercise]
        for item, count in (
            ("handed in", handed),
            ("passed", passed),
            ("failed", failed),
            ("skipped", skipped),
        ):
            found[exercise, item] = int(count)
        if int(failed):
            labels = {
                group_label(item): item
                for _, item in expected_exercise_rows(assignment)
                if item not in ("handed in", "passed", "failed", "skipped")
            }
            for row in tables.named(f"{exercise}: the {failed} failed answer"):
                found[exercise, labels[row[0]]] = int(row[2])
    return found


# --- the report of each assignment ------------------------------------------------------


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_exercise_counts_exactly_what_the_class_did(graded, assignment):
    """Handed in, passed, failed, skipped, and each failure's known mistake (or none, or
    zeroed by a flag), in the CSV and on the page, exactly as the class was written."""
    expected = expected_exercise_rows(assignment)
    assert counted(graded.csv(f"{assignment}.csv"), assignment) == expected
    shown = page_counts(graded.html(f"{assignment}.html"), assignment)
    # the page lists a failure's groups only for an exercise someone failed
    assert shown == {
        k: v
        for k, v in expected.items()
        if k[1] in ("handed in", "passed", "failed", "skipped") or expected[k[0], "failed"]
    }
    assert f"the class report of {assignment}: " in graded.run.stdout


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_known_mistake_is_named_in_the_words_of_its_self_check(graded, assignment):
    """Each group of a known mistake carries its hint's words, and the released notebook's
    self-check of that exercise gives that same hint (its stamp holds the words)."""
    rows = graded.csv(f"{assignment}.csv")
    words = {
        (r["exercise"], r["item"]): r["words"]
        for r in rows
        if r["section"] == "mistake" and r["item"] in MISTAKES
    }
    expected = {
        (exercise, code): hint
        for s in handed_in(assignment)
        for exercise, (code, hint) in s.wrong.items()
        if exercise in EXERCISES[assignment] and code in MISTAKES
    }
    assert words == expected
    tables = Tables(graded.html(f"{assignment}.html"))
    release = nbformat.read(ROOT / "notebooks" / assignment / f"{NOTEBOOKS[assignment]}.ipynb", 4)
    for (exercise, code), hint in expected.items():
        failed = next(r[4] for r in tables.named("Each exercise") if r[0] == exercise)
        hints = [row[1] for row in tables.named(f"{exercise}: the {failed} failed")]
        assert hint.replace("`", "") in hints, (exercise, hints)
        assert words_digest(hint) in self_check_hints(release, exercise), (exercise, hint)


def self_check_hints(release, exercise: str) -> set[str]:
    """The hints the released self-check of `exercise` can give, as its stamps name them: by
    a digest of their words, which are sealed with the answers of their mistake (no hint is
    readable in the setup cell; `kvlesson.grading.checks.messages.seal`)."""
    [cell] = [
        c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade_id") == exercise
    ]
    stamps = stamp_places.stamps_of(release)
    return {
        hint["named"]
        for name in stamp_places.stamp_names(cell.source)
        for hint in stamps[name]["hints"]
    }


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_scores_are_spread_as_the_class_scored(graded, assignment):
    rows = [r for r in graded.csv(f"{assignment}.csv") if r["section"] == "score"]
    scores = expected_scores(assignment)
    top = sum(POINTS[e] for e in EXERCISES[assignment])
    assert {int(r["item"]): int(r["count"]) for r in rows} == {
        point: scores.get(point, 0) for point in range(top + 1)
    }
    assert {r["out_of"] for r in rows} == {str(len(handed_in(assignment)))}


# --- the page in a browser --------------------------------------------------------------


def not_blank(png: bytes) -> bool:
    """A screenshot with something drawn: many colours, and a fair part not white."""
    image = Image.open(io.BytesIO(png)).convert("L")
    histogram = image.histogram()
    return sum(1 for n in histogram if n) > 20 and histogram[255] < 0.97 * sum(histogram)


@pytest.mark.parametrize("name", ["01_floor_plan.html", "course.html"])
def test_the_page_opens_in_chromium_with_its_charts_and_their_alt_text(graded, browser, name):  # noqa: F811 - test_browser's fixture
    """No console error, no failed load; every image has alt text and is drawn (the
    charts: two per assignment, and the course's page has every graded assignment of the
    shared course); the screenshot is not blank."""
    page = browser.new_page(viewport={"width": 1000, "height": 1200})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
    try:
        page.goto((graded.course / "reports" / name).as_uri())
        images = page.eval_on_selector_all(
            "img",
            "imgs => imgs.map(i => ({alt: i.alt, width: i.naturalWidth, src: i.src.slice(0, 22)}))",
        )
        shot = page.screenshot(full_page=True)
    finally:
        page.close()
    assert errors == []
    charts = 2 * (1 if name != "course.html" else len(GRADED))  # the course: every one graded
    assert len(images) == charts, images
    for image in images:
        assert image["src"] == "data:image/png;base64," and image["width"] > 300, image
        assert len(image["alt"]) > 40, image
    assert not_blank(shot)
    if name == "01_floor_plan.html":
        (ROOT / "artifacts").mkdir(exist_ok=True)
        (ROOT / "artifacts" / "class_report.png").write_bytes(shot)
        if os.environ.get("KVLESSON_UPDATE_DOCS") == "1":
            (ROOT / "docs" / "images").mkdir(exist_ok=True)
            (ROOT / "docs" / "images" / "class_report.png").write_bytes(shot)


def test_the_score_chart_says_its_numbers_in_its_alt_text(graded):
    """The alt text of the score chart gives the same spread as the CSV."""
    html = graded.html("01_floor_plan.html")
    alt = unescape(re.search(r'alt="(Bar chart of the total[^"]*)"', html).group(1))
    scores = expected_scores("01_floor_plan")
    for point in range(7):
        count = scores.get(point, 0)
        assert f"{count} student{'' if count == 1 else 's'} scored {point}" in alt, alt


# --- names only when asked ----------------------------------------------------------------


def visible_text(html: str) -> str:
    """The page without its embedded images (base64 can spell anything)."""
    return re.sub(r'src="data:[^"]*"', "", html)


@pytest.mark.parametrize("name", ["01_floor_plan", "02_ceiling", "course"])
def test_the_report_names_no_student_unless_asked(graded, name):
    for suffix in (".html", ".csv"):
        text = visible_text((graded.course / "reports" / f"{name}{suffix}").read_text())
        named = [s for s in IDS if re.search(rf"\b{s}\b", text)]
        assert named == [], f"{name}{suffix} names {named}"
    assert "No student is named" in graded.html(f"{name}.html")


def test_with_names_each_group_lists_its_students(graded):
    rows = graded.csv("01_floor_plan.names.csv")
    who = {(r["exercise"], r["item"]): r["students"] for r in rows if r["section"] == "mistake"}
    assert who["q1_pool_tests", "gib"] == "ben cy"
    assert who["ex1_1_tests", ZEROED] == "fay"
    flags = [r for r in rows if r["section"] == "flag"]
    # fay's forbidden function, hal's notebook that is not a notebook
    assert {r["students"] for r in flags} == {"fay", "hal"}
    tables = Tables(graded.html("01_floor_plan.names.html"))
    gib = next(r for r in tables.named("q1_pool_tests: the") if r[0].endswith("(gib)"))
    assert gib[-1] == "ben, cy"
    scores = {row[0]: float(row[1]) for row in tables.named("Each student")}
    assert scores == {
        s.id: sum(POINTS[e] for e in EXERCISES["01_floor_plan"] if s.outcome(e)[0] == PASSED)
        for s in handed_in("01_floor_plan")
    }
    assert "01_floor_plan.names.html" in graded.runs["01 names"][1]
    assert "0 submissions graded in this run" in graded.runs["01 names"][1]


# --- the course as a whole ----------------------------------------------------------------


def expected_carries() -> dict[tuple[str, str, str], tuple[int, int]]:
    """(mistake, earlier, later) -> (made again, of those who handed the later one in)."""
    later = json.loads((ROOT / "keys" / "02_ceiling.json").read_text())["exercises"]
    can_make = {known["mistake"] for exercise in later.values() for known in exercise["mistakes"]}
    out = {}
    for mistake in MISTAKES:
        handed = made("01_floor_plan", mistake) & {s.id for s in handed_in("02_ceiling")}
        if mistake in can_make and handed:
            out[mistake, "01_floor_plan", "02_ceiling"] = (
                len(handed & made("02_ceiling", mistake)),
                len(handed),
            )
    return out


def test_the_course_report_counts_how_mistakes_carry_to_the_next_notebook(graded):
    """Of those who read GB as GiB (or left the reserve out, or used the notebook's global)
    in notebook 1, how many handed in notebook 2 and how many still did there."""
    expected = expected_carries()
    assert {k[0] for k in expected} == {"gib", "term", "global"}
    # the guide quotes these: of 3 who read GB as GiB in notebook 1, 2 handed in notebook 2
    # and 1 still did
    assert len(made("01_floor_plan", "gib")) == 3
    assert expected["gib", "01_floor_plan", "02_ceiling"] == (1, 2)
    rows = graded.csv("course.csv")
    carried = {
        (r["item"], r["assignment"], r["then"]): (int(r["count"]), int(r["out_of"]))
        for r in rows
        if r["section"] == "carry"
    }
    assert carried == expected
    made_rows = {
        (r["item"], r["assignment"]): int(r["count"]) for r in rows if r["section"] == "made"
    }
    assert made_rows == {
        (m, "01_floor_plan"): len(made("01_floor_plan", m)) for m, _, _ in expected
    }
    table = Tables(graded.html("course.html")).named("How mistakes carry")
    shown = {(row[0], row[1], row[3]): (int(row[5]), int(row[4])) for row in table}
    assert shown == {(NAMES[m], a, b): v for (m, a, b), v in expected.items()}
    for assignment in ASSIGNMENTS:  # and each assignment's counts, as in its own report
        assert counted(rows, assignment) == expected_exercise_rows(assignment)
    named = {
        (r["item"], r["then"]): r["students"]
        for r in graded.csv("course.names.csv")
        if r["section"] == "carry"
    }
    assert named["gib", "02_ceiling"] == "ben"
    assert "course.html" in graded.runs["course"][1]


# --- the feedback -------------------------------------------------------------------------


def comments(course: Path, student: str) -> str:
    """The comments of a student's feedback page on 01_floor_plan, as text."""
    page = course / "feedback" / student / "01_floor_plan" / "floor_plan.html"
    blocks = re.findall(r"<b>Comments:</b>(.*?)</div>", page.read_text(), flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", "", block)) for block in blocks)


@pytest.mark.parametrize(
    "student",
    [s.id for s in handed_in("01_floor_plan") if s.answers["01_floor_plan"] is not NOT_JSON],
)
def test_the_feedback_names_the_known_mistake_of_each_failed_exercise(graded, student):
    """Under each failed exercise, the feedback says the known mistake the answer matched,
    in the self-check's words, or that it matched none; nothing for a passed or skipped
    one, and never the right answer."""
    said = comments(graded.course, student)
    me = next(s for s in CLASS if s.id == student)
    for exercise in EXERCISES["01_floor_plan"]:
        outcome, mistake, words = me.outcome(exercise)
        line = f"{exercise}: not right"
        if outcome == FAILED and mistake:
            assert (
                f"{line}; your answer is the one a known mistake gives: "
                f"{words.replace('`', '')}" in said
            ), said
        elif outcome == FAILED:
            assert f"{line}, and your answer matches none of the known mistakes" in said, said
            assert "Re-read" in said and "units and the rounding" not in said, said
        else:
            assert line not in said, said
    key = json.loads((ROOT / "keys" / "01_floor_plan.json").read_text())
    for exercise in ("q1_pool_tests", "q1_unused_tests"):
        right = key["exercises"][exercise]["probes"][0]["normal"].split(":")[1]
        assert right not in said, (exercise, right)


# --- bad input ----------------------------------------------------------------------------


def test_an_unknown_assignment_or_nothing_graded_gets_a_clear_error(graded, tmp_path):
    """Exit 2 and one line saying what is wrong and what is allowed; nothing written."""

    def grade(*args: str, course: Path = graded.course) -> str:
        code, out, err = command(*args, course=course)
        assert code == 2 and out == "" and "Traceback" not in err, (code, out, err)
        return err

    for args in (["--report", "99_nope"], ["99_nope"]):
        said = grade(*args)
        assert "unknown assignment '99_nope'" in said and "01_floor_plan, 02_ceiling" in said
    fresh = copy_course(tmp_path / "fresh", ["01_floor_plan"])
    assert "nothing is graded yet" in grade("--report", course=fresh)
    assert "nothing of 01_floor_plan is graded yet" in grade(
        "--report", "01_floor_plan", course=fresh
    )
    assert "name the ASSIGNMENT to grade" in grade(course=fresh)
    assert not (fresh / "reports").exists() and not (fresh / "gradebook.db").exists()


# --- naming a wrong answer by value, without a class ---------------------------------------


def probe(kind: str, normal: str) -> dict:
    return {
        "label": "f(1)",
        "kind": kind,
        "unit": "blocks",
        "places": 0,
        "scale": 1.0,
        "normal": normal,
        "expected": {},
    }


@pytest.mark.parametrize(
    ("encoded", "kind", "text"),
    [
        ({"t": "int", "v": 3}, "count", "int:3"),
        ({"t": "float", "v": 3.0}, "count", "kind:float"),
        ({"t": "float", "v": 53.94}, "number", "num:53.9"),
        (
            {"t": "error", "type": "NameError", "message": "name 'x' is not defined"},
            "count",
            "error:NameError: name 'x' is not defined",
        ),
        ({"t": "str", "v": "53.9 GB"}, "number", "kind:str"),
        ({"t": "bool", "v": True}, "count", "kind:bool"),
        ("not a record", "count", "kind:unreadable"),
    ],
)
def test_an_answer_has_one_text_whatever_it_is(encoded, kind, text):
    from kvlesson.grading.checks import probes

    spec = probes.Probe("f(1)", lambda: None, kind, "GB", 1)
    assert probes.answer_text(spec, encoded) == text


def test_the_key_keeps_a_mistake_only_where_its_words_describe_what_it_gives():
    right = [probe("count", "int:2"), probe("yes_no", "bool:True")]
    wrong = [  # in the order of MISTAKES, as the build sorts them
        {"mistake": "ceil", "hint": "round up", "answers": [["int:1", "bool:True"]]},
        {"mistake": "float", "hint": "a float", "answers": [["kind:float", "bool:True"]]},
        {"mistake": "float", "hint": "a float", "answers": [["int:2", "kind:float"]]},
        {
            "mistake": "global",
            "hint": "its argument",
            "answers": [["error:NameError: x", "error:NameError: x"]],
        },
        {"mistake": "off_by_one", "hint": "off by one", "answers": [["int:1", "bool:True"]]},
        {"mistake": "off_by_one", "hint": "off by one", "answers": [["int:2", "bool:True"]]},
    ]
    kept = key_mistakes(wrong, 0, right, {"ceil": "the cell's own words"})
    # a float for a count; not ceil, whose answers off by one gives too in other words (a
    # coincidence, not a diagnosis); not a float for yes or no, not an error everywhere,
    # not the right answers
    assert kept == [
        {"mistake": "float", "words": "a float", "answers": ["kind:float", "bool:True"]},
    ]
    one_function = [
        {**row, "same": "f1"} if row["mistake"] in ("ceil", "off_by_one") else row for row in wrong
    ]
    # the same wrong function reached by two mistakes: the first, in the cell's words
    same = key_mistakes(one_function, 0, right, {"ceil": "the cell's own words"})
    assert same == [
        {"mistake": "ceil", "words": "the cell's own words", "answers": ["int:1", "bool:True"]},
        {"mistake": "float", "words": "a float", "answers": ["kind:float", "bool:True"]},
    ]
    exercise = {"probes": right, "mistakes": same}
    assert diagnosis.diagnose(exercise, ["int:1", "bool:True"]).mistake == "ceil"
    assert diagnosis.diagnose(exercise, ["int:1", "bool:False"]) == diagnosis.Diagnosis()


def test_a_comment_shows_its_words_as_written_once_rendered():
    from nbconvert.filters.markdown import markdown2html

    from kvlesson.grading.grade.store import as_markdown

    words = (
        "a: 2**30 bytes; b: 2**30 bytes, `SHARE / 100 * gpu.memory_bytes` and pool_bytes's _share_"
    )
    shown = unescape(re.sub(r"<[^>]+>", "", markdown2html(as_markdown(words)))).strip()
    assert shown == words.replace("`", "")


def test_the_guide_shows_the_report_and_quotes_its_numbers():
    """docs/instructors.md shows the screenshot this module takes (KVLESSON_UPDATE_DOCS=1)
    and quotes the carry-over of this class."""
    guide = (ROOT / "docs" / "instructors.md").read_text()
    assert "](images/class_report.png)" in guide
    assert not_blank((ROOT / "docs" / "images" / "class_report.png").read_bytes())
    quoted = re.search(
        r"(\d+) read GB as GiB in\s+01_floor_plan; (\d+) of them handed in\s+"
        r"02_ceiling, and (\d+) still did",
        guide,
    )
    assert quoted, "the guide no longer quotes the carry-over"
    again, handed = expected_carries()["gib", "01_floor_plan", "02_ceiling"]
    assert tuple(map(int, quoted.groups())) == (len(made("01_floor_plan", "gib")), handed, again)


def test_a_page_is_written_for_an_assignment_without_exercises():
    """A reading page graded by mistake: a page with no exercise rows, and its charts."""
    from kvlesson.grading.report import page

    report = counts.AssignmentReport("07_wrap_up", ("ann",), (), (("ann", 0.0),), 0.0, (), ())
    html = page.assignment_page(report, names=False)
    assert html.count("<img ") == 2 and "ann" not in visible_text(html)
