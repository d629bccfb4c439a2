"""Answers run through an exercise's self-check and its grade, in the notebook's own kernel.

tests/authoring/test_selfchecks.py holds every exercise to two promises: the self-check
rejects what the grade rejects, and every key is true (the exercise's declared authority
gives the same answers as the key and the stamps). This module does the running: one kernel
per notebook, the released notebook answered right up to each exercise; per exercise, each
wrong answer (the package's mutations, the exercise's declared mistakes, the test's
hand-written ones), then the released self-check, then the hidden test, whose record line
`kvlesson.grading.marking` scores against the key outside the kernel; and the authority's
answer on every probe. Only the exercises asked for run their variants (`-k ex2_1` runs
notebook 2 up to Exercise 2.1, and that exercise's variants alone).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from kvlesson.authoring import command, mutants, probe_search, stamp_places
from kvlesson.authoring.kernel import top_level_names
from kvlesson.grading.checks import forbidden, probes, selfcheck
from kvlesson.grading.course import notebooks
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.marking import cell_roles, cell_scan, marks
from support.paths import ROOT
from support.patience import HANG

ARTIFACTS = ROOT / "artifacts"


@dataclass
class Outcome:
    """One answer, run through the self-check and the grade."""

    grade_id: str
    variant: str
    source: str
    expect: str | None
    check_passed: bool
    check_error: str  # "Name: message" of the self-check's failure, "" if it passed
    grade_right: bool
    flags: tuple[str, ...]
    wrong_somewhere: bool = False  # differs from the solution on an input in the domain
    origin: str = ""  # "solution", "generated" (mutated or declared), "hand", "setting"


@dataclass
class Exercise:
    """One exercise's run: its answers' outcomes, and its probes held against the authority
    (label, side, what the key or stamp holds agrees) or None when none is declared."""

    outcomes: list[Outcome] = field(default_factory=list)
    authority: list[tuple[str, str, bool]] | None = None


def exercises_of(name: str) -> list[str]:
    """The grade ids of a notebook's exercises (its test cells), in order."""
    [path] = (ROOT / "solutions" / name).glob("*.ipynb")
    return [notebooks.meta(c)["grade_id"] for c in read(path).cells if notebooks.is_test_cell(c)]


# Runs in the notebook's kernel: each variant, then the self-check, the hidden test and the
# right answer again, each as a cell of its own (IPython's run_cell), in one round trip.
DRIVER = """
def _kvlesson_variants(codes, check, hidden, restore, answers, plan, checked):
    import json, math
    from IPython.utils.capture import capture_output
    from kvlesson.authoring.probe_inputs import wrong_somewhere
    shell = get_ipython()
    def same(a, b):  # one value, to float noise (and of one kind): an answer's value
        import numbers
        if isinstance(a, (bool, type(None), str)) or isinstance(b, (bool, type(None), str)):
            return type(a) is type(b) and a == b
        if isinstance(a, numbers.Real) and isinstance(b, numbers.Real):
            kind = isinstance(a, numbers.Integral) == isinstance(b, numbers.Integral)
            return kind and math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
        return False
    shell.run_cell(restore, store_history=False)
    right = {name: shell.user_ns.get(name) for name in checked}
    def run(code):
        with capture_output() as captured:
            result = shell.run_cell(code, store_history=True)
        error = result.error_before_exec or result.error_in_exec
        return [captured.stdout, f"{type(error).__name__}: {error}" if error else ""]
    rows, shown = [], (shell.showtraceback, shell.showsyntaxerror)
    shell.showtraceback = shell.showsyntaxerror = lambda *args, **kwargs: None
    try:
        for code in codes:
            for name in answers:  # a variant that raises must not leave the right answer
                shell.user_ns.pop(name, None)
            run(code)
            row = run(check) + run(hidden)
            try:  # after the checks, which run the answer's functions as the grade does
                differs = any(not same(shell.user_ns.get(n), v) for n, v in right.items())
                row.append(differs or (bool(plan) and wrong_somewhere(plan, shell.user_ns)))
            except Exception:
                row.append(True)
            rows.append(row)
            run(restore)
    finally:
        shell.showtraceback, shell.showsyntaxerror = shown
    print(json.dumps(rows))
"""


class Kernel:
    """One kernel, in a notebook's folder, running code given as text."""

    def __init__(self, client: NotebookClient):
        self.client = client

    async def run(self, code: str) -> list:
        cell = nbformat.v4.new_code_cell(code, metadata={"tags": ["raises-exception"]})
        first = self.client.nb.cells[0]
        await self.client.async_execute_cell(cell, 0, store_history=False)
        self.client.nb.cells[0] = first  # nbclient stores the cell it ran at the index
        return cell.outputs

    async def must(self, code: str) -> None:
        outputs = await self.run(code)
        assert not failure(outputs), f"{failure(outputs)} in:\n{code}"

    async def variants(
        self,
        codes: list[str],
        check: str,
        hidden: str,
        restore: str,
        answers: list[str],
        plan: str,
        checked: list[str],
    ) -> list[list]:
        """[check stdout, check error, hidden stdout, hidden error, wrong somewhere] for each
        code; the names in `answers` are removed before each code runs; "wrong somewhere":
        a variable the cell checks (`checked`) holds another value than the instructor's, to
        float noise (Question 7's `* 1001`), or the code's function differs from the
        instructor's on an input planned in `plan` (`kvlesson.authoring.probe_inputs`, around
        the cell's probes, in the exercise's domain)."""
        outputs = await self.run(
            f"_kvlesson_variants({codes!r}, {check!r}, {hidden!r}, "
            f"{restore!r}, {answers!r}, {plan!r}, {checked!r})"
        )
        assert not failure(outputs), failure(outputs)
        return json.loads("".join(o.get("text", "") for o in outputs if o.output_type == "stream"))


def checked_names(test_source: str) -> list[str]:
    """The variables a test cell's self-check checks (its probes' labels that are names)."""
    labels = [
        probe.args[0].value
        for call in stamp_places.stamp_calls(test_source)
        for probe in call.args[0].elts
    ]
    return [label for label in dict.fromkeys(labels) if label.isidentifier()]


def bound_names(code: str) -> list[str]:
    """The names an answer cell binds at its top level (variables, functions)."""
    names = []
    for statement in ast.parse(code).body:
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            names.append(statement.name)
        for target in getattr(statement, "targets", []):
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return names


def failure(outputs: list) -> str:
    errors = [o for o in outputs if o.output_type == "error"]
    return f"{errors[0].ename}: {errors[0].evalue}" if errors else ""


def passed(outputs: list) -> bool:
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    return not failure(outputs) and "Self-check passed" in text


def as_cell(metadata: dict, stdout: str, error: str) -> nbformat.NotebookNode:
    """A test cell as autograde leaves it: what it printed, and its error if any."""
    cell = nbformat.v4.new_code_cell("", metadata=metadata)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stdout)]
    if error:
        ename, _, evalue = error.partition(": ")
        cell.outputs.append(
            nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])
        )
    return cell


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


async def run_variants(
    name: str, selected: set[str], hand: dict[str, list], setting_changes: dict[str, str]
) -> dict[str, Exercise]:
    """The `selected` exercises of one notebook, in one kernel, run up to the last of them:
    per exercise its variants (`hand`: the hand-written ones, (label, code, expected text))
    and its probes against the authority."""
    [source_path] = (ROOT / "solutions" / name).glob("*.ipynb")
    release, solution = read(ROOT / "notebooks" / name / source_path.name), read(source_path)
    key, stamps = read_key(key_path(ROOT, name)), stamp_places.stamps_of(release)
    hidden = {notebooks.meta(c)["grade_id"]: c for c in solution.cells if notebooks.is_test_cell(c)}
    filled = command.answered(release, solution)
    parameters = next(c.source for c in filled.cells if "parameters" in c.metadata.get("tags", []))
    course = cell_roles.CourseCells.of(solution)
    last = max(
        (
            i
            for i, c in enumerate(filled.cells)
            if notebooks.is_test_cell(c) and notebooks.meta(c)["grade_id"] in selected
        ),
        default=-1,
    )
    client = NotebookClient(
        filled,
        timeout=HANG,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT / "notebooks" / name)}},
    )
    found, right, bound = {}, "", []
    async with client.async_setup_kernel():
        kernel = Kernel(client)
        await kernel.run(DRIVER)
        for index, cell in enumerate(filled.cells[: last + 1]):
            if cell.cell_type != "code":
                continue
            if notebooks.is_answer_cell(cell):
                right = cell.source
            if not notebooks.is_test_cell(cell):
                assert not failure(await kernel.run(cell.source)), cell.source
                bound += [n for n in top_level_names(cell.source) if n not in bound]
                continue
            grade_id = notebooks.meta(cell)["grade_id"]
            if grade_id not in selected:
                assert passed(await kernel.run(cell.source)), f"{grade_id} fails"
                continue
            source = hidden[grade_id].source
            await kernel.must("from kvlesson.grading.checks import rules as _r\n_r.forget()")
            plan = await plan_inputs(kernel, source, grade_id)
            like = await alike(kernel, source, bound, grade_id)
            shown = probe_search.examples(right, probe_search.Probes.of(cell.source))
            variants = [("solution", right, None, "solution")]
            variants += [
                (f"{m.mistake}: {m.source}", m.source, None, "generated")
                for m in mutants.mutants(
                    right,
                    examples=shown,
                    like=like,
                    declared=probe_search.declared_mistakes(source),
                )
            ]
            variants += [(*written, "hand") for written in hand.get(grade_id, [])]
            if grade_id in setting_changes:
                variants.append(
                    (
                        "setting: " + setting_changes[grade_id],
                        right + "\n" + setting_changes[grade_id],
                        "release's setting",
                        "setting",
                    )
                )
            rows = await kernel.variants(
                [code for _, code, _, _ in variants],
                cell.source,
                source,
                parameters + "\n" + right,
                bound_names(right),
                plan,
                checked_names(cell.source),
            )
            exercise = Exercise()
            for (variant, code, expect, origin), (
                check_out,
                check_error,
                out,
                error,
                differs,
            ) in zip(variants, rows):
                mark = marks.mark_cell(
                    as_cell(hidden[grade_id].metadata, out, error), key["exercises"][grade_id], None
                )
                uses = forbidden_uses(code, key["exercises"][grade_id], course)
                right_grade = mark.score == mark.points and not uses
                if origin == "setting":
                    right_grade = False  # not an answer: the check must not call it right
                check_passed = not check_error and "Self-check passed" in check_out
                exercise.outcomes.append(
                    Outcome(
                        grade_id,
                        variant,
                        code,
                        expect,
                        check_passed,
                        check_error,
                        right_grade,
                        mark.flags + uses,
                        differs,
                        origin,
                    )
                )
            exercise.authority = await held(
                kernel, source, right, key["exercises"][grade_id], stamps, grade_id
            )
            assert passed(await kernel.run(cell.source)), f"{grade_id} fails after its variants"
            found[grade_id] = exercise
    return found


async def plan_inputs(kernel: Kernel, hidden_source: str, grade_id: str) -> str:
    """Plan the inputs around the instructor's test cell's probes (both sides, in the
    exercise's domain), with the right answer defined: the path of the plan, "" for a cell
    that calls no function."""
    if not probe_search.Probes.of(hidden_source).found:
        return ""
    path = str(ARTIFACTS / f"plan_{grade_id}.json")
    ARTIFACTS.mkdir(exist_ok=True)
    await kernel.must(
        f"{hidden_source}\nfrom kvlesson.authoring import probe_inputs\n"
        f"probe_inputs.plan({hidden_source!r}, {path!r})"
    )
    return path


async def alike(kernel: Kernel, source: str, bound: list[str], grade_id: str) -> dict:
    """The notebook's variables of the same kind as each argument the cell's probes pass."""
    if not probe_search.Probes.of(source).found:
        return {}
    path = ARTIFACTS / f"alike_{grade_id}.json"
    await kernel.must(
        f"from kvlesson.authoring import probe_inputs\n"
        f"probe_inputs.alike({source!r}, {bound!r}, {str(path)!r})"
    )
    return {f: {int(k): v for k, v in by.items()} for f, by in json.loads(path.read_text()).items()}


async def held(
    kernel: Kernel, source: str, right: str, exercise: dict, stamps: dict, grade_id: str
) -> list[tuple[str, str, bool]] | None:
    """Every probe of the instructor's test cell, hidden and visible, worked out by the
    exercise's authority and held against the key (hidden) and the released stamp (visible):
    (label, side, agrees); None when the exercise declares no authority."""
    if "authority=" not in source:  # no authority declared: nothing to run (the capstone's
        return None  # test cell would serve its days again)
    path = ARTIFACTS / f"authority_{grade_id}.json"
    functions = [n.name for n in ast.walk(ast.parse(right)) if isinstance(n, ast.FunctionDef)]
    await kernel.must(
        "from kvlesson.grading.checks import rules as _r\n_r.forget()\n"
        f"{source}\nfrom kvlesson.authoring import authority as _a\n"
        f"_a.answers({source!r}, {functions!r}, {str(path)!r})"
    )
    found = json.loads(path.read_text())
    if not found["authority"]:
        return None
    names = iter(stamp_places.stamp_names(source))
    rows = []
    for side, answers in found["sides"]:
        if side == "record":
            expected = [p["normal"] for p in exercise["probes"]]
            rows += [
                (label, side, theirs == ours)
                for (label, theirs), ours in zip(answers, expected, strict=True)
                if theirs is not None
            ]
        else:
            stamp = stamps[next(names)]["probes"]
            rows += [
                (label, side, selfcheck.digest(s["salt"], theirs) == s["hash"])
                for (label, theirs), s in zip(answers, stamp, strict=True)
                if theirs is not None
            ]
    return rows


def forbidden_uses(code: str, exercise: dict, course: cell_roles.CourseCells) -> tuple[str, ...]:
    """What the grade's reading of an answer cell finds of the exercise's forbidden
    functions: a name, or a package function that calls one."""
    names = {**course.names, **cell_scan.names_of(code)}
    codes = forbidden.resolve(exercise["forbidden"])
    return tuple(
        [f"names {n}" for n in probes.mentioned(code, exercise["forbidden"])]
        + [f"uses {n}" for n in forbidden.used_in(code, names, codes)]
    )
