"""The second run's decisions, without a box (kvlesson.grading.marking.second_run).

Which right answers are checked, which cells a short run keeps (notebook 1 answered right:
the set-up, what each answer reads, the answer and its test; never a chart), and the
verdict: the short run's answer stands where it is the first run's, the whole run decides
where it is not, and an exercise that forbids fewer functions is run again without its own.
"""

from __future__ import annotations

import nbformat
import pytest

from kvlesson.authoring import command
from kvlesson.grading.checks import probes
from kvlesson.grading.checks.records import CAUGHT, record_line
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.course.notebooks import grade_id_of
from kvlesson.grading.course.results import PASSED, ZEROED, ExerciseMark
from kvlesson.grading.marking import cell_roles, second_run
from kvlesson.grading.marking.marks import NotebookMark
from support.paths import ROOT

KEY = read_key(key_path(ROOT, "01_floor_plan"))


def answered() -> tuple[nbformat.NotebookNode, cell_roles.CourseCells]:
    """Notebook 1 answered right (as a student hands it in), and its course cells."""
    [path] = (ROOT / "solutions" / "01_floor_plan").glob("*.ipynb")
    instructor = nbformat.read(path, as_version=4)
    release = nbformat.read(ROOT / "notebooks" / "01_floor_plan" / path.name, as_version=4)
    return command.answered(release, instructor), cell_roles.CourseCells.of(instructor)


def index_of(nb: nbformat.NotebookNode, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if grade_id_of(c) == grade_id)


def test_only_right_answers_of_exercises_that_forbid_functions_are_compared():
    forbidding = [g for g, ex in KEY["exercises"].items() if ex["forbidden"]]
    free = [g for g, ex in KEY["exercises"].items() if not ex["forbidden"]]
    assert forbidding and free, "notebook 1 has exercises of both kinds"
    marks = [ExerciseMark(g, 1.0, 1.0, (), PASSED) for g in KEY["exercises"]]
    marks[0] = ExerciseMark(marks[0].grade_id, 1.0, 0.0, (), "failed")
    compared = second_run.to_compare(NotebookMark(marks), KEY)
    assert set(compared) == set(forbidding) - {marks[0].grade_id}
    assert all(compared[g] == tuple(sorted(KEY["exercises"][g]["forbidden"])) for g in compared)


def test_a_short_run_keeps_the_set_up_what_the_answer_reads_and_its_test_and_no_chart():
    nb, course = answered()
    compared = sorted(g for g, ex in KEY["exercises"].items() if ex["forbidden"])
    kept = second_run.short_cells(nb, compared, KEY, course)
    sources = [nb.cells[i].source for i in kept]
    setup = next(i for i, c in enumerate(nb.cells) if "import kvlesson" in c.source)
    assert setup in kept
    for grade_id in compared:
        test = index_of(nb, grade_id)
        assert test in kept and cell_roles.answer_cell(nb, test) in kept, grade_id
    assert max(kept) == max(index_of(nb, g) for g in compared), "nothing after the last test"
    assert not [s for s in sources if "charts." in s or "explorers." in s], sources
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    assert len(kept) < len([i for i in code if i <= max(kept)]), "a short run leaves cells out"


def test_a_cell_of_the_students_that_feeds_the_answer_is_kept():
    nb, course = answered()
    q1 = nb.cells[index_of(nb, "q1_answer")]
    q1.source = "pool_gb = box['p'] / 1e9\nunused_gb = 8.0"
    setup = next(i for i, c in enumerate(nb.cells) if "import kvlesson" in c.source)
    nb.cells[setup + 1 : setup + 1] = [
        nbformat.v4.new_code_cell("box = {}"),
        nbformat.v4.new_code_cell("box['p'] = 53.9e9"),
        nbformat.v4.new_code_cell("unrelated = 1"),
    ]
    kept = second_run.short_cells(nb, ["q1_pool_tests"], KEY, course)
    assert {setup + 1, setup + 2} <= set(kept) and setup + 3 not in kept, kept


def runs_that_answer(answers: dict[tuple[tuple[str, ...], bool], dict]) -> tuple[list, object]:
    """A fake box: each run (names withheld, short or whole) answers as `answers` says, for
    the grade ids it is asked about; the runs made, in order."""
    made = []

    def run(names, grade_ids, short):
        made.append((names, tuple(grade_ids), short))
        return {g: answers[(names, short)][g] for g in grade_ids}

    return made, run


def test_the_short_runs_answer_stands_when_it_is_the_first_runs():
    made, run = runs_that_answer({(("f",), True): {"a": ["1"], "b": ["2"]}})
    changed = second_run.changed_answers({"a": ("f",), "b": ("f",)}, {"a": ["1"], "b": ["2"]}, run)
    assert changed == {} and made == [(("f",), ("a", "b"), True)]


def test_where_the_short_run_differs_the_whole_run_decides():
    made, run = runs_that_answer(
        {
            (("f",), True): {"a": None, "b": ["9"]},  # a short run may miss what an answer read
            (("f",), False): {"a": ["1"], "b": ["9"]},
        }
    )
    changed = second_run.changed_answers({"a": ("f",), "b": ("f",)}, {"a": ["1"], "b": ["2"]}, run)
    assert made == [(("f",), ("a", "b"), True), (("f",), ("a", "b"), False)]
    assert list(changed) == ["b"] and changed["b"].after == ["9"] and changed["b"].before == ["2"]
    assert "it gives other values" in changed["b"].words()


def test_an_exercise_that_forbids_fewer_is_run_again_without_its_own_only():
    made, run = runs_that_answer(
        {
            (("f", "g"), True): {"a": ["0"], "b": ["0"]},
            (("f", "g"), False): {"a": ["0"], "b": ["0"]},
            (("g",), True): {"b": ["2"]},  # b uses f, which only a forbids
        }
    )
    changed = second_run.changed_answers(
        {"a": ("f", "g"), "b": ("g",)}, {"a": ["1"], "b": ["2"]}, run
    )
    assert list(changed) == ["a"] and changed["a"].functions == ("f", "g")
    assert made[-1] == (("g",), ("b",), True)


@pytest.mark.parametrize(
    ("after", "said"),
    [(None, "the test recorded no answer"), (["error:RuntimeError"], "it raises RuntimeError")],
)
def test_a_changed_answer_says_what_it_gave_and_never_the_right_value(after, said):
    words = second_run.Changed(("memory_parts",), ["num:53.9"], after).words()
    assert said in words and "53.9" not in words and "lacks memory_parts" in words


def test_a_zeroed_answer_keeps_its_flags_and_says_why():
    marked = NotebookMark([ExerciseMark("a", 2.0, 2.0, ("kept",), PASSED)])
    [mark] = second_run.zeroed(marked, {"a": "scored 0: why"}).marks
    assert (mark.score, mark.outcome, mark.flags) == (0.0, ZEROED, ("kept", "scored 0: why"))


def test_what_a_run_recorded_is_read_from_its_test_cells_in_the_grades_normal_forms():
    nb, _ = answered()
    exercise = KEY["exercises"]["q1_pool_tests"]
    values = [probes.encode(53.94)] * len(exercise["probes"])
    test = nb.cells[index_of(nb, "q1_pool_tests")]
    test.metadata[CAUGHT] = [record_line({"id": "q1_pool_tests", "values": values})]
    nb.cells[index_of(nb, "ex1_1_tests")].metadata[CAUGHT] = []
    answers = second_run.answers_of(nb, KEY, ["q1_pool_tests", "ex1_1_tests"])
    assert answers == {
        "q1_pool_tests": ["num:53.9"] * len(exercise["probes"]),  # 53.94 GB, as the grade reads it
        "ex1_1_tests": None,  # no record: no answer
    }
