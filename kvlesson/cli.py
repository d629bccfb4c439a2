"""`kvlesson`: one command for every job of the course, as `nbgrader <verb>` is for nbgrader's.

    kvlesson numbers [--gpu ...]        every number the lesson quotes, section by section
    kvlesson open [--instructor]        the course in JupyterLab
    kvlesson build [ASSIGNMENT ...]     execute solutions/, regenerate notebooks/ and keys/
    kvlesson exercise ASSIGNMENT NAME   a new exercise's cells in an instructor notebook
    kvlesson check ASSIGNMENT NAME      every check of one exercise, and what to change
    kvlesson for --gpu G --out DIR      the course for other hardware
    kvlesson grade ASSIGNMENT ...       grade a whole class, each submission in the box
    kvlesson report [ASSIGNMENT ...]    the class report of what is graded
    kvlesson site [--out DIR]           the course as an offline static website

`python -m kvlesson VERB ...` is the same command. Each verb lives in the module that does its
job (the table VERBS), which gives its arguments and runs it; only the verb asked for is
imported, so `kvlesson numbers` starts without nbgrader. The addresses of earlier versions
(one module a verb, the numbers without a verb) are gone: CHANGELOG.md says what to type now.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Verb:
    """One job of the command: the module that does it, the name its functions start with
    (`NAME_arguments(parser)` and `NAME_run(args) -> int`; plain `arguments` and `run`
    when empty), and what it does, in a line."""

    module: str
    name: str
    about: str

    def functions(self):
        module = importlib.import_module(self.module)
        prefix = f"{self.name}_" if self.name else ""
        return getattr(module, f"{prefix}arguments"), getattr(module, f"{prefix}run")


VERBS = {
    "numbers": Verb(
        "kvlesson.lesson.printout", "", "print every number the lesson quotes, section by section"
    ),
    "open": Verb(
        "kvlesson.delivery.lab",
        "open",
        "open the course in JupyterLab: a student's (Validate only) or --instructor's",
    ),
    "student": Verb(
        "kvlesson.delivery.lab",
        "student",
        "give a JupyterLab the student's interface (Binder, a hub, open)",
    ),
    "build": Verb(
        "kvlesson.authoring.build",
        "",
        "execute solutions/, stamp the self-checks, write keys/ and release notebooks/",
    ),
    "exercise": Verb(
        "kvlesson.authoring.scaffold",
        "",
        "write a new exercise's cells into an instructor notebook, ready to edit",
    ),
    "check": Verb(
        "kvlesson.authoring.exercise_check",
        "",
        "every check of one exercise (build first if it changed), and what to change",
    ),
    "generate": Verb(
        "kvlesson.authoring.generate",
        "",
        "record the assignments in the gradebook (a new clone, before a release)",
    ),
    "for": Verb(
        "kvlesson.authoring.course_for",
        "",
        "write the course, executed, for another card, model or setting",
    ),
    "grade": Verb(
        "kvlesson.grading.grade.command",
        "",
        "grade a whole class: each submission sealed, run in the box and marked",
    ),
    "report": Verb(
        "kvlesson.grading.report.files",
        "",
        "write the class report of the graded assignments (what the class got wrong)",
    ),
    "site": Verb(
        "kvlesson.delivery.site.command",
        "",
        "build the course as an offline static website (the site extra)",
    ),
}


def hardware() -> str:
    """The cards and models the course knows, from the package (for --help)."""
    from kvlesson.memory.specs import GPUS, MODELS

    cards = ", ".join(f"{key} ({card.name})" for key, card in GPUS.items())
    models = ", ".join(f"{key} ({model.name})" for key, model in MODELS.items())
    return f"cards: {cards}\nmodels: {models}"


def overview() -> str:
    width = max(map(len, VERBS))
    lines = [
        "usage: kvlesson VERB [ARGUMENTS]   (kvlesson VERB --help for a verb's arguments)",
        "",
        __doc__.splitlines()[0].split(": ", 1)[1],
        "",
        "verbs:",
    ]
    lines += [f"  {verb:<{width}}  {about.about}" for verb, about in VERBS.items()]
    return "\n".join(lines + ["", hardware()])


def own_programs_first() -> None:
    """This Python's programs first on PATH, so that a verb finds its own environment's
    tools whatever the PATH it was started with (nbgrader runs `alembic` by name; a
    notebook's `!` line runs in a JupyterLab whose PATH may lack the environment's bin)."""
    programs = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != programs:
        os.environ["PATH"] = os.pathsep.join([programs, path]) if path else programs


def run_verb(verb: str, argv: list[str]) -> int:
    """Run one verb with its arguments, this environment's programs first on PATH; its
    exit code."""
    own_programs_first()
    arguments, run = VERBS[verb].functions()
    parser = argparse.ArgumentParser(
        prog=f"kvlesson {verb}",
        description=VERBS[verb].about,
        epilog=hardware(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arguments(parser)
    args, extra = parser.parse_known_args(argv)
    if extra and not hasattr(args, "extra_arguments"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:
        args.extra_arguments = extra  # the verb passes them on (`kvlesson open --port 9000`)
    try:
        return run(args) or 0
    except (ValueError, RuntimeError) as error:
        parser.error(str(error))  # the usage, the problem in words, exit code 2


def main(argv: list[str] | None = None) -> int:
    """The command line: a verb and its arguments."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(overview())
        return 0 if argv else 2
    if argv[0] not in VERBS:
        print(
            f"kvlesson: no verb {argv[0]!r}; the verbs are {', '.join(VERBS)} "
            "(kvlesson --help says what each does)",
            file=sys.stderr,
        )
        return 2
    return run_verb(argv[0], argv[1:])
