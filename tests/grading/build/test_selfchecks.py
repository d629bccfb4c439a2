"""The self-checks tell the truth: every wrong answer the grade rejects, they reject too.

For each exercise of every notebook, wrong versions of the instructor's answer
are made systematically (`kvlesson.grading.build.mutants`: off by one, // for a ceiling,
/ for //, a factor 2 dropped, a term dropped, > for >=, GB for GiB and back,
the percent not divided, the notebook's global for the argument, a float for
an int) and by hand (the mistakes students make that no one-spot mutation
makes: a forbidden package call, the wrong model, a string). Each runs in one
kernel per notebook, in the released notebook answered right up to that
exercise: its answer, then the released self-check (what the student sees),
then the hidden test, whose record line `kvlesson.grading.marking` scores against the
key outside the kernel (the grade). The right answer must pass both; a wrong
one the grade rejects must fail the self-check with a message that starts
"Not yet:". Wrong versions the grade accepts (equivalent mutants) are printed.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kvlesson.grading.build import command, mutants, probe_search
from kvlesson.grading.checks import forbidden, probes
from kvlesson.grading.course import notebooks
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.marking import cell_roles, cell_scan, marks
from support.paths import ROOT

NAMES = command.assignments(ROOT)
REPORT = ROOT / "artifacts" / "selfcheck_variants.json"

# Mistakes no one-spot mutation of the solution makes: (label, answer code, text the
# self-check's message must contain or None). "static" in a label: the grade rejects it by
# reading the answer cell (a forbidden name), not by its values; the self-check reads the
# cell that set the variable in IPython's history.
HAND = {
    "ex0_1_tests": [
        ("the notebook's model", "def cache_bytes_per_token(m):\n    return 2 * model.layers * "
         "model.kv_heads * model.head_size * model.bytes_per_number", None),
        ("the package's answer", "def cache_bytes_per_token(m):\n    return m.bytes_per_token",
         "calls"),
        ("no return", "def cache_bytes_per_token(m):\n    2 * m.layers * m.kv_heads * m.head_size"
         " * m.bytes_per_number", "returned None"),
        ("no K and V", "def cache_bytes_per_token(m):\n    return m.layers * m.kv_heads * "
         "m.head_size * m.bytes_per_number", "K and V"),
    ],
    "ex0_2_tests": [
        ("GiB", "def weights_gb(m):\n    return m.params * m.bytes_per_number / 2**30", "GiB"),
        ("the package's answer", "def weights_gb(m):\n    return m.weights_bytes / 1e9", "calls"),
        ("a string", 'def weights_gb(m):\n    return "16.06 GB"', "should give a number"),
    ],
    "practice_tests": [("a float", "block_bytes = 16.0 * model.bytes_per_token", "whole number")],
    "q1_pool_tests": [
        ("GiB", "pool_gb = (SHARE / 100 * gpu.memory_bytes - model.weights_bytes - "
         "kv.RESERVE_BYTES) / 2**30\nunused_gb = 8.0", "GiB"),
        ("no reserve", "pool_gb = (SHARE / 100 * gpu.memory_bytes - model.weights_bytes) / 1e9\n"
         "unused_gb = 8.0", "RESERVE_BYTES"),
        ("a string", 'pool_gb = "53.9 GB"\nunused_gb = 8.0', "should be a number of GB"),
        ("static: the package's answer", "pool_gb = kv.memory_parts(SHARE, gpu, model).pool_bytes"
         " / 1e9\nunused_gb = kv.memory_parts(SHARE, gpu, model).unused_bytes / 1e9",
         "worked out with memory_parts"),
        ("static: an alias of the package's answer",
         "from kvlesson.memory.floor import memory_parts as mp\npool_gb = mp(SHARE, gpu, model).pool_bytes / 1e9\nunused_gb = 8.0",
         "worked out with memory_parts"),
    ],
    "ex1_1_tests": [
        ("the notebook's SHARE", "def pool_bytes(share):\n    return SHARE / 100 * "
         "gpu.memory_bytes - model.weights_bytes - kv.RESERVE_BYTES", "argument"),
        ("the package's answer", "def pool_bytes(share):\n    return kv.memory_parts(share, gpu,"
         " model).pool_bytes", "calls"),
        ("an alias of the package's answer",
         "from kvlesson.memory.floor import memory_parts as mp\ndef pool_bytes(share):\n    return mp(share, gpu, model).pool_bytes", "calls"),
        ("no return", "def pool_bytes(share):\n    share / 100 * gpu.memory_bytes", "returned None"),
        ("a fraction", "def pool_bytes(share):\n    return share * gpu.memory_bytes - "
         "model.weights_bytes - kv.RESERVE_BYTES", "percent"),
    ],
    "ex1_2_tests": [
        ("a float", "def blocks_in(pool):\n    return max(0, pool // (kv.BLOCK_TOKENS * "
         "model.bytes_per_token))", "whole number"),
        ("negative pools", "def blocks_in(pool):\n    return int(pool // (kv.BLOCK_TOKENS * "
         "model.bytes_per_token))", None),
    ],
    "ex2_1_tests": [
        ("rounds down", "def chat_blocks(tokens):\n    return tokens // kv.BLOCK_TOKENS",
         "whole block"),
        ("a float", "def chat_blocks(tokens):\n    return tokens / kv.BLOCK_TOKENS", "whole number"),
        ("one too many", "def chat_blocks(tokens):\n    return tokens // kv.BLOCK_TOKENS + 1", None),
        ("the package's answer", "def chat_blocks(tokens):\n    return kv.blocks_for(tokens)",
         "calls"),
    ],
    "ex2_2_tests": [
        ("strictly more", "def lowest_share_for(longest):\n    for share in range(1, 101):\n"
         "        if kv.memory_parts(share, gpu, model).blocks > kv.blocks_for(longest):\n"
         "            return share\n    return None", "boundary"),
        ("the package's answer", "def lowest_share_for(longest):\n    try:\n        return "
         "kv.lowest_share(longest, gpu, model)\n    except kv.ServerWontStart:\n        return None",
         "calls"),
    ],
    "q3_pool_tests": [
        ("no reserve", "pool_q3 = Q3_SHARE / 100 * gpu.memory_bytes - model.weights_bytes\n"
         "pool_gb_q3 = pool_q3 / 1e9\nblocks_q3 = 0\nstarts_q3 = False", "RESERVE_BYTES"),
    ],
    "q3_blocks_tests": [
        ("a float", "pool_q3 = Q3_SHARE / 100 * gpu.memory_bytes - model.weights_bytes - "
         "kv.RESERVE_BYTES\npool_gb_q3 = pool_q3 / 1e9\nblocks_q3 = pool_q3 // "
         "(kv.BLOCK_TOKENS * model.bytes_per_token)\nstarts_q3 = False", "whole number"),
    ],
    "ex3_1_tests": [
        ("the package's answer", "def knee_of(sweep):\n    return kv.stops_paying(sweep)", "calls"),
        ("the notebook's sweep", "def knee_of(table):\n    return knee_of_rows(sweep)\n"
         "def knee_of_rows(table):\n    caps, rates = list(table['cap']), list(table['tokens_per_s'])"
         "\n    for cap, rate, nxt in zip(caps, rates, rates[1:]):\n        if nxt / rate - 1 < 0.1:"
         "\n            return int(cap)\n    return None", None),
        ("the next cap", "def knee_of(sweep):\n    caps, rates = list(sweep['cap']), "
         "list(sweep['tokens_per_s'])\n    for i in range(len(rates) - 1):\n        if rates[i + 1]"
         " / rates[i] - 1 < 0.1:\n            return int(caps[i + 1])\n    return None", None),
    ],
    "ex3_2_tests": [
        ("the notebook's chats", "def prefill_floor_s(some_chats):\n    return sum(c.prompt for c"
         " in chats) * 2 * model.params / gpu.peak_flops", None),
        ("the package's answer", "def prefill_floor_s(chats):\n    return kv.prefill_floor(chats,"
         " gpu, model).seconds", "calls"),
        ("one operation per weight", "def prefill_floor_s(chats):\n    return sum(c.prompt for c"
         " in chats) * model.params / gpu.peak_flops", "two operations"),
    ],
    "q4_numbers_tests": [
        ("the notebook's share", "top = sweep.iloc[-1]\nrunning_top = float(top['avg_running'])\n"
         "pauses_top = int(top['pauses'])", None),
        ("a float", "running_top = float(q4_sweep.iloc[-1]['avg_running'])\n"
         "pauses_top = float(q4_sweep.iloc[-1]['pauses'])", "whole number"),
    ],
    "ex4_1_tests": [
        ("counted from 0", "tight = kv.trace(case, cap=10, blocks=6, gpu=gpu, model=model)\n"
         "first_pause_step = [s.paused != () for s in tight].index(True)\npaused_chat = 2\n"
         "steps_tight = len(tight)\nsteps_roomy = len(kv.trace(case, cap=10, blocks=100))", None),
        ("the hand case", "first_pause_step, paused_chat = 3, 1\nsteps_tight, steps_roomy = 18, 10",
         None),
    ],
}
HAND.update({
    "ex5_3_tests": [
        ("the card in GiB", "def starts_on_h100(model, tp, share, longest=131_072):\n"
         "    per_token = 2 * model.layers * max(1, model.kv_heads // tp) * model.head_size * "
         "model.bytes_per_number\n    pool = share / 100 * 80 * 2**30 - model.weights_bytes / tp "
         "- 3e9\n    blocks = max(0, int(pool // (16 * per_token)))\n"
         "    return blocks - 1 >= -(-longest // 16)", None),
        ("no reserve", "def starts_on_h100(model, tp, share, longest=131_072):\n"
         "    per_token = 2 * model.layers * max(1, model.kv_heads // tp) * model.head_size * "
         "model.bytes_per_number\n    pool = share / 100 * kv.H100_80GB.total_bytes - "
         "model.weights_bytes / tp\n    blocks = max(0, int(pool // (16 * per_token)))\n"
         "    return blocks - 1 >= -(-longest // 16)", None),
        ("GiB card and no reserve", "def starts_on_h100(model, tp, share, longest=131_072):\n"
         "    per_token = 2 * model.layers * max(1, model.kv_heads // tp) * model.head_size * "
         "model.bytes_per_number\n    pool = share / 100 * 80 * 2**30 - model.weights_bytes / tp"
         "\n    blocks = max(0, int(pool // (16 * per_token)))\n"
         "    return blocks - 1 >= -(-longest // 16)", None),
        ("strictly more, rounded down", "def starts_on_h100(model, tp, share, longest=131_072):\n"
         "    per_token = 2 * model.layers * max(1, model.kv_heads // tp) * model.head_size * "
         "model.bytes_per_number\n    pool = share / 100 * kv.H100_80GB.total_bytes - "
         "model.weights_bytes / tp - 3e9\n    blocks = max(0, int(pool // (16 * per_token)))\n"
         "    return blocks > longest // 16", None),
    ],
    "ex5_6_tests": [
        ("the default share", "def share_per_server(servers, total=0.9):\n    return 0.9 / servers",
         None),
        ("the package's answer", "from kvlesson.memory.other_servers import share_each\n"
         "def share_per_server(servers, total=0.9):\n    return share_each(servers, total)",
         "calls"),
    ],
    "ex5_2_tests": [
        ("the package's answer", "def concurrency_at_length(log_text, longest):\n"
         "    return kv.read_vllm_log(log_text).concurrency_at(longest)", "calls"),
    ],
    "ex5_5_tests": [
        ("no padding", "def slot_context(ctx_size, parallel):\n    return -(-ctx_size // parallel)",
         None),
        ("rounded", "def slot_context(ctx_size, parallel):\n    return round(ctx_size / parallel)",
         None),
        ("the package's answer", "from kvlesson.memory.other_servers import "
         "llama_cpp_slot_context\ndef slot_context(ctx_size, parallel):\n"
         "    return llama_cpp_slot_context(ctx_size, parallel)", "calls"),
    ],
    "ex6_1_tests": [
        ("not sorted", "import math\ndef nearest_rank(values, p):\n    return values[math.ceil(p / "
         "100 * len(values)) - 1]", None),
        ("the nearest rank rounded", "def nearest_rank(values, p):\n    ordered = sorted(values)\n"
         "    return ordered[round(p / 100 * len(ordered)) - 1]", None),
    ],
    "ex6_2_tests": [
        ("writing ignored", "def steps_to_read(prompt, budget, writing):\n    return -(-prompt // "
         "budget)", None),
        ("rounds down", "def steps_to_read(prompt, budget, writing):\n    return prompt // "
         "(budget - writing)", None),
        ("the first step left out", "def steps_to_read(prompt, budget, writing):\n    return "
         "-(-prompt // (budget - writing)) - 1", None),
    ],
})
# Not an answer but a changed setting: the self-check must say it holds for the release's.
SETTING_CHANGES = {"q1_pool_tests": "SHARE = 50", "ex2_1_tests": 'GPU = "H100_80GB"'}


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
    wrong_somewhere: bool = False  # differs from the solution on an input around the probes


# Runs in the notebook's kernel: each variant, then the self-check, the hidden test and the
# right answer again, each as a cell of its own (IPython's run_cell), in one round trip.
DRIVER = """
def _kvlesson_variants(codes, check, hidden, restore, answers, plan):
    import json
    from IPython.utils.capture import capture_output
    from kvlesson.grading.build.probe_inputs import wrong_somewhere
    shell = get_ipython()
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
                row.append(bool(plan) and wrong_somewhere(plan, shell.user_ns))
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

    async def variants(self, codes: list[str], check: str, hidden: str, restore: str,
                       answers: list[str], plan: str) -> list[list]:
        """[check stdout, check error, hidden stdout, hidden error, wrong somewhere] for each
        code; the names in `answers` are removed before each code runs; "wrong somewhere":
        the code's function differs from the instructor's on an input planned in `plan`
        (`kvlesson.grading.build.probe_search`, around the cell's probes), or False without one."""
        outputs = await self.run(f"_kvlesson_variants({codes!r}, {check!r}, {hidden!r}, "
                                 f"{restore!r}, {answers!r}, {plan!r})")
        assert not failure(outputs), failure(outputs)
        return json.loads("".join(o.get("text", "") for o in outputs if o.output_type == "stream"))


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
        cell.outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=evalue,
                                                   traceback=[]))
    return cell


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


async def run_variants(name: str) -> list[Outcome]:
    """Every variant of every exercise of one notebook, in one kernel."""
    [source_path] = (ROOT / "solutions" / name).glob("*.ipynb")
    release, solution = read(ROOT / "notebooks" / name / source_path.name), read(source_path)
    key = read_key(key_path(ROOT, name))
    hidden = {notebooks.meta(c)["grade_id"]: c for c in solution.cells
              if notebooks.is_test_cell(c)}
    filled = command.answered(release, solution)
    parameters = next(c.source for c in filled.cells if "parameters" in c.metadata.get("tags", []))
    course = cell_roles.CourseCells.of(solution)
    client = NotebookClient(filled, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "notebooks" / name)}})
    outcomes, right = [], ""
    async with client.async_setup_kernel():
        kernel = Kernel(client)
        await kernel.run(DRIVER)
        for cell in filled.cells:
            if cell.cell_type != "code":
                continue
            if notebooks.is_answer_cell(cell):
                right = cell.source
            if not notebooks.is_test_cell(cell):
                assert not failure(await kernel.run(cell.source)), cell.source
                continue
            grade_id = notebooks.meta(cell)["grade_id"]
            exercise = key["exercises"][grade_id]
            plan = await plan_inputs(kernel, hidden[grade_id].source, grade_id)
            shown = probe_search.examples(right, probe_search.Probes.of(cell.source))
            variants = [("solution", right, None)]
            variants += [(f"{m.mistake}: {m.source}", m.source, None)
                         for m in mutants.mutants(right, examples=shown)]
            variants += HAND.get(grade_id, [])
            if grade_id in SETTING_CHANGES:
                variants.append(("setting: " + SETTING_CHANGES[grade_id],
                                 right + "\n" + SETTING_CHANGES[grade_id], "release's setting"))
            rows = await kernel.variants([code for _, code, _ in variants], cell.source,
                                   hidden[grade_id].source, parameters + "\n" + right,
                                   bound_names(right), plan)
            for (variant, code, expect), (check_out, check_error, out, error, differs) in zip(
                    variants, rows):
                mark = marks.mark_cell(as_cell(hidden[grade_id].metadata, out, error),
                                         exercise, None)
                found = forbidden_uses(code, exercise, course)
                right_grade = mark.score == mark.points and not found
                if variant.startswith("setting"):
                    right_grade = False  # not an answer: the check must not call it right
                check_passed = not check_error and "Self-check passed" in check_out
                outcomes.append(Outcome(grade_id, variant, code, expect, check_passed,
                                        check_error, right_grade, mark.flags + tuple(found),
                                        differs))
            assert passed(await kernel.run(cell.source)), f"{grade_id} fails after its variants"
    return outcomes


async def plan_inputs(kernel: Kernel, hidden_source: str, grade_id: str) -> str:
    """Plan the inputs around the instructor's test cell's probes (both sides), with the
    right answer defined: the path of the plan, "" for a cell that calls no function."""
    if not probe_search.Probes.of(hidden_source).found:
        return ""
    path = str(ROOT / "artifacts" / f"plan_{grade_id}.json")
    (ROOT / "artifacts").mkdir(exist_ok=True)
    outputs = await kernel.run(f"{hidden_source}\nfrom kvlesson.grading.build import probe_inputs\n"
                               f"probe_inputs.plan({hidden_source!r}, {path!r})")
    assert not failure(outputs), failure(outputs)
    return path


def forbidden_uses(code: str, exercise: dict, course: cell_roles.CourseCells) -> tuple[str, ...]:
    """What the grade's reading of an answer cell finds of the exercise's forbidden
    functions: a name, or a package function that calls one."""
    names = {**course.names, **cell_scan.names_of(code)}
    codes = forbidden.resolve(exercise["forbidden"])
    return tuple([f"names {n}" for n in probes.mentioned(code, exercise["forbidden"])] +
                 [f"uses {n}" for n in forbidden.used_in(code, names, codes)])


@pytest.fixture(scope="module")
def outcomes() -> dict[str, list[Outcome]]:
    """Every notebook's variants, the notebooks in kernels side by side; also saved to
    artifacts/ for a person to read."""
    async def every() -> list[list[Outcome]]:
        return await asyncio.gather(*(run_variants(name) for name in NAMES))

    found = dict(zip(NAMES, asyncio.run(every())))
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps({name: [o.__dict__ for o in results]
                                  for name, results in found.items()}, indent=1))
    return found


def outcomes_of(cache: dict, name: str) -> list[Outcome]:
    return cache[name]


@pytest.mark.parametrize("name", NAMES)
def test_the_self_checks_reject_what_the_grade_rejects(name, outcomes):
    results = outcomes_of(outcomes, name)
    problems = []
    for o in results:
        if o.variant == "solution":
            if not (o.check_passed and o.grade_right):
                problems.append(f"{o.grade_id}: the solution: check {o.check_error or 'passed'}, "
                                f"grade {'right' if o.grade_right else 'wrong'} {o.flags}")
            continue
        if not o.grade_right and o.check_passed:
            problems.append(f"{o.grade_id}: the self-check passes a wrong answer ({o.variant})")
        if o.grade_right and not o.check_passed:
            problems.append(f"{o.grade_id}: the self-check fails an answer the grade accepts "
                            f"({o.variant}): {o.check_error}")
        if not o.check_passed and not re.match(r"\w+: Not yet:", o.check_error):
            problems.append(f"{o.grade_id}: a failure without 'Not yet:' ({o.variant}): "
                            f"{o.check_error}")
        if o.expect and o.expect not in o.check_error:
            problems.append(f"{o.grade_id}: {o.variant}: {o.expect!r} not in {o.check_error!r}")
        if o.variant.startswith("static") and o.grade_right:
            problems.append(f"{o.grade_id}: the grade accepts a forbidden answer ({o.variant})")
        if o.grade_right and o.wrong_somewhere:
            problems.append(f"{o.grade_id}: the grade accepts an answer that is wrong on an "
                            f"input around its probes ({o.variant})")
    counts = lies_and_blind(results)
    print(f"\n{name}: exercise: wrong variants, lies (the self-check passes what the grade "
          f"rejects), blind (the grade passes an answer wrong around its probes)")
    for grade_id, (total, lies, blind) in counts.items():
        print(f"  {grade_id}: {total}, {lies}, {blind}")
    for o in results:
        if o.grade_right and o.variant != "solution":
            print(f"  equivalent in {o.grade_id}: {o.variant.splitlines()[0][:100]}")
    assert not problems, "\n".join(problems)


def lies_and_blind(results: list[Outcome]) -> dict[str, list[int]]:
    """Per exercise: its wrong variants, the lies (the self-check passes a variant the grade
    rejects) and the blind ones (the grade passes a variant that differs from the solution
    on an input around the probes)."""
    counts: dict[str, list[int]] = {}
    for o in results:
        row = counts.setdefault(o.grade_id, [0, 0, 0])
        if o.variant == "solution":
            continue
        row[0] += 1
        row[1] += not o.grade_right and o.check_passed
        row[2] += o.grade_right and o.wrong_somewhere
    return counts


@pytest.mark.parametrize("name", NAMES)
def test_every_exercise_meets_the_listed_mistakes(name, outcomes):
    """Each exercise gets hand-written and generated variants, and its hints fire."""
    results = outcomes_of(outcomes, name)
    for grade_id in {o.grade_id for o in results}:
        mine = [o for o in results if o.grade_id == grade_id and o.variant != "solution"]
        assert len(mine) >= 2, f"{grade_id}: only {len(mine)} wrong variants"
    if not command.has_exercises(name):  # the reading page has nothing to check
        assert not results, f"{name} has no exercise, yet variants ran: {results}"
        return
    hinted = [o for o in results if o.check_error and "is not right:" in o.check_error]
    assert hinted, f"{name}: no wrong answer got a hint for its mistake"


def test_the_release_holds_no_expected_value():
    """No expected answer of any key appears in a released test cell, in any form
    written there (the digits of a count, a number to its places)."""
    leaks = []
    for name in NAMES:
        key = read_key(key_path(ROOT, name))
        [release] = (ROOT / "notebooks" / name).glob("*.ipynb")
        text = "\n".join(c.source for c in read(release).cells if notebooks.is_test_cell(c))
        for grade_id, exercise in key["exercises"].items():
            for probe in exercise["probes"]:
                shown = probe["normal"].split(":", 1)[-1]
                digits = shown.replace(".", "").replace("-", "").strip("0")
                if probe["kind"] != "yes_no" and digits.isdigit() and len(digits) >= 3 \
                        and re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d])", text):
                    leaks.append(f"{name} {grade_id} {probe['label']}: {shown}")
    assert not leaks, leaks
