"""Grade a whole class with one command: each submission sealed and graded on its own.

    kvlesson grade ASSIGNMENT [ASSIGNMENT ...] [--course ROOT] [--force] [--jobs N]
    kvlesson report [ASSIGNMENT ...] [--names]

1. The course root is found as nbgrader finds it (`kvlesson.grading.course.folders`), from
   whichever folder the command starts in. The submissions with no result yet (or
   submitted again) are graded; `--force` grades every one again.
2. Each submission goes to a worker (`kvlesson.grading.grade.worker`, `--jobs` of them side
   by side, default: one per core): sealed into a private folder, autograded by nbgrader for
   that student alone with every kernel in the box (`kvlesson.grading.box`), and marked
   outside the kernel against the key (`kvlesson.grading.marking`). A submission that
   nbgrader cannot grade, that breaks the marker or that runs past `--timeout` costs that
   submission only: it scores 0, with the reason.
3. This process is the only writer: as each result comes, the graded notebooks (cleaned of
   live HTML, `kvlesson.grading.grade.sanitize`) go into autograded/, the marks and nbgrader's
   other grades into the gradebook, each flag as a comment on the answer cell of its
   exercise. A run killed midway loses nothing: the next run grades exactly what has no
   result.
4. Every flag of the class is printed, with the student, the cell and the reason, and
   written to flags/ASSIGNMENT.csv.
5. The class report, what the class got wrong (`kvlesson.grading.report.files`), is written
   to reports/ASSIGNMENT.html and .csv, anonymous unless `--names`; `--report` grades
   nothing and writes it for every graded assignment, with how mistakes carry over.

Exit code: 0 when every submission has a mark, 1 when some could not be graded (they
score 0 and are named), 2 when the course is not ready (no key, no bubblewrap) or an
assignment named has nothing in submitted/ to grade.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from kvlesson.grading.box.bubblewrap import bwrap_path
from kvlesson.grading.course import folders
from kvlesson.grading.course.folders import Course, how_to_hand_in, read_timestamp
from kvlesson.grading.course.gradebook import record_assignments, snapshot
from kvlesson.grading.course.key import key_path, read_key
from kvlesson.grading.course.results import SubmissionResult
from kvlesson.grading.course.text import counted, terminal_safe
from kvlesson.grading.grade.pool import Job, Workers
from kvlesson.grading.grade.store import pending, store_files, store_grades, submitted_folders
from kvlesson.grading.grade.summary import FLAGS_FOLDER, summary, write_flags_file
from kvlesson.grading.report.graded import check_known, graded_notebooks

SUBMISSION_SECONDS = 600  # the most one submission may take, kernel restarts included


def report_line(course: Course, assignment: str, names: bool) -> str:
    """The class report of `assignment` written, and where (matplotlib loaded only now)."""
    from kvlesson.grading.report import files

    return files.report_line(course, assignment, names)


def check_ready(course: Course, assignment: str, report=print) -> dict:
    """The key, after checking that the course can grade `assignment` and putting the
    assignment in the gradebook if it is not there; ValueError or RuntimeError saying what
    to do."""
    check_known(course, assignment)
    bwrap_path()
    key = read_key(key_path(course.root, assignment))
    if record_assignments(course, [assignment]):
        report(
            f"kvlesson grade: {assignment} was not recorded in the gradebook (released "
            f"without being generated): it is now, from solutions/ (nbgrader "
            f"generate_assignment {assignment} --force)"
        )
    return key


def grade_pending(
    course: Course,
    assignments: list[str],
    force: bool,
    jobs: int,
    workers: Workers,
    report=print,
) -> list[SubmissionResult]:
    """Grade every pending submission of the `assignments` with `workers` (grown to `jobs`,
    none more than the pending submissions), writing each result as it comes; the results
    of this run."""
    run = workers.run_folder
    results: list[SubmissionResult] = []
    (course.root / FLAGS_FOLDER).mkdir(exist_ok=True)
    template = run / "template.db"
    snapshot(course.database(), template)
    todo = [
        Job(
            str(course.root),
            assignment,
            student,
            str(run / assignment / student),
            str(template),
            [str(run)],
            str(run / "shared"),
        )
        for assignment in assignments
        for student in pending(course, assignment, force)
    ]
    if not todo:
        workers.stop()  # every submission has its result: the one started early is not needed
        return results
    workers.grow(min(jobs, len(todo)))
    for result in workers.run(todo):
        result = store_guarded(course, result, report)
        shutil.rmtree(run / result.assignment / result.student, ignore_errors=True)
        results.append(result)
        report(
            f"graded {result.student}, {result.assignment} ({len(results)}/"
            f"{len(todo)})" + ("" if result.graded else f": {result.failure}")
        )
    return results


def store(course: Course, result: SubmissionResult) -> None:
    """Write one result into the course: the gradebook first, the marker last (a run killed
    between the two leaves no marker, so the next run grades this submission again), and
    nbgrader's log of it."""
    where = course.submitted / result.student / result.assignment
    # a failure keeps the submission's time, so the next run leaves it be
    result.timestamp = result.timestamp or read_timestamp(where)
    store_grades(course, result.assignment, result)
    store_files(course, result.assignment, result)
    log = course.root / FLAGS_FOLDER / f"{result.assignment}.log"
    with log.open("a") as out:
        out.write(f"===== {result.student}: nbgrader's log =====\n{terminal_safe(result.log)}\n")


def store_guarded(course: Course, result: SubmissionResult, report=print) -> SubmissionResult:
    """Store one result; if storing it fails (a name or a text the gradebook refuses, a file
    that cannot be written), store instead that this submission could not be graded, with
    why: the failure is that student's, and the class goes on. The result stored."""
    try:
        store(course, result)
        return result
    except Exception as error:  # this student's only: the next result is stored as usual
        reason = (
            f"not graded: storing its result failed ({type(error).__name__}: "
            f"{str(error)[:200]}); grade it again with --force once fixed"
        )
        failed = SubmissionResult(
            result.assignment,
            result.student,
            result.timestamp,
            False,
            flags=list(result.flags),
            failure=reason,
            log=result.log,
        )
    try:
        store(course, failed)
    except Exception as error:
        report(
            f"kvlesson grade: {failed.student}, {failed.assignment}: {reason}; even that "
            f"could not be stored ({type(error).__name__}: {str(error)[:200]})"
        )
    return failed


def arguments(parser: argparse.ArgumentParser) -> None:
    """The grading command's arguments."""
    parser.description = __doc__.split("\n\n")[0]
    parser.add_argument(
        "assignments",
        nargs="*",
        metavar="ASSIGNMENT",
        help="the assignments to grade, e.g. 01_floor_plan",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="grade nothing: write the class "
        "report of every graded assignment (or of each ASSIGNMENT), with how "
        "mistakes carry from one to the next (as `kvlesson report`)",
    )
    parser.add_argument(
        "--names",
        action="store_true",
        help="name the students in the class "
        "report (default: anonymous, so that it can be shown to the class)",
    )
    parser.add_argument(
        "--course",
        type=Path,
        help="the course root (default: the one the "
        "nbgrader configuration names, else this folder)",
    )
    parser.add_argument(
        "--force", action="store_true", help="grade every submission again, not only new ones"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="submissions graded side by side (default: the number of cores)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=SUBMISSION_SECONDS,
        help=f"seconds one submission may take (default {SUBMISSION_SECONDS})",
    )


def run(args: argparse.Namespace) -> int:
    """Grade each ASSIGNMENT for the whole class; the exit code the module docstring gives."""
    workers: Workers | None = None
    with contextlib.ExitStack() as stack:
        try:
            if args.jobs < 1 or args.timeout <= 0:
                raise ValueError("--jobs must be 1 or more and --timeout above 0")
            if not args.assignments and not args.report:
                raise ValueError(
                    "name the ASSIGNMENT to grade, e.g. 01_floor_plan, or give "
                    "--report for the class report of every graded assignment"
                )
            if not args.report:  # a worker first: its imports run beside the configuration's
                folder = Path(tempfile.mkdtemp(prefix="kvlesson-grade-"))
                stack.callback(shutil.rmtree, folder, ignore_errors=True)
                workers = stack.enter_context(Workers(1, folder, args.timeout))
            root, config = folders.course_root(Path.cwd(), args.course)
            course = Course(root, config)
            if args.report:
                from kvlesson.grading.report import files  # matplotlib: to draw the report

                print(files.course_line(course, args.assignments, args.names))
                return 0
            for assignment in args.assignments:
                check_ready(course, assignment, report=lambda line: print(line, file=sys.stderr))
                if submitted_folders(course, assignment) == ([], []):
                    raise ValueError(
                        f"nothing to grade of {assignment}: {how_to_hand_in(assignment)}"
                    )
        except (ValueError, RuntimeError) as error:
            if workers is not None:
                workers.stop()  # nothing to grade: it ends now, mid-import
            print(f"kvlesson grade: {error}", file=sys.stderr)
            return 2
        now = grade_pending(
            course,
            args.assignments,
            args.force,
            args.jobs,
            workers,
            report=lambda line: print(line, file=sys.stderr),
        )
        failures = []
        for assignment in args.assignments:
            for line in submitted_folders(course, assignment)[1]:  # no student id: never graded
                print(f"kvlesson grade: {line}", file=sys.stderr)
                failures.append(line.split(":", 1)[0])
            results = graded_notebooks(course, assignment)
            print(
                summary(
                    assignment,
                    results,
                    write_flags_file(root, assignment, results),
                    sum(r.assignment == assignment for r in now),
                )
            )
            print(report_line(course, assignment, args.names))
            failures += sorted({f"{g.student} ({assignment})" for g in results if g.failure})
        if failures:
            print(
                f"kvlesson grade: {counted(len(failures), 'submission')} could not be graded "
                f"({', '.join(failures)}): they score 0, and the reason is in their flags",
                file=sys.stderr,
            )
            return 1
        return 0
