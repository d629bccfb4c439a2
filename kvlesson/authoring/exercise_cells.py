"""The exercise `kvlesson exercise` writes: its three cells, with the nbgrader metadata the
course's exercises carry, and three wrong answers of a student's own for it.

A small exercise that builds and checks as it is (the cache of one chat, in GB, for the
notebook's `model`), written to be changed into one's own: the question, the answer cell
between the solution markers, and the test cell, whose hidden part declares the exercise's
rules (`kvlesson.grading.checks.rules`) and records it for the grade, and whose visible part
is the self-check with `stamp=""` for the build to fill (docs/self-checks.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

NUMBERED = re.compile(r"^ex(\d+)_(\d+)$")  # ex2_3: Exercise 2.3
DEFAULT_FUNCTION = "chat_cache_gb"
DEFAULT_TITLE = "the cache of one chat"


@dataclass(frozen=True)
class NewExercise:
    """An exercise to write: its name (the stem of its grade ids), the function the student
    writes, its points and its title."""

    name: str
    function: str = DEFAULT_FUNCTION
    points: float = 1
    title: str = DEFAULT_TITLE

    @property
    def heading(self) -> str:
        """ "Exercise 2.3" for ex2_3; "Exercise ex_blocks" for a name with no number."""
        numbered = NUMBERED.match(self.name)
        return f"Exercise {numbered[1]}.{numbered[2]}" if numbered else f"Exercise {self.name}"

    def cells(self) -> list[nbformat.NotebookNode]:
        """The question, the answer cell and the test cell, with their nbgrader metadata."""
        return [
            nbformat.v4.new_markdown_cell(self._question()),
            nbformat.v4.new_code_cell(self._answer(), metadata=_nbgrader(self.name + "_answer")),
            nbformat.v4.new_code_cell(
                self._tests(), metadata=_nbgrader(self.name + "_tests", self.points)
            ),
        ]

    def _question(self) -> str:
        return (
            f"## {self.heading}: {self.title}\n\n"
            f"Write `{self.function}(tokens)`: the KV cache one chat of `tokens` tokens takes "
            f"with this notebook's `model`, in GB (`1e9` bytes), counted in whole blocks of "
            f"`kv.BLOCK_TOKENS` tokens: a block only partly filled counts whole. Return a "
            f"number (checked to three decimals). Do not call `kv.blocks_for`: the grade gives "
            f"no point for an answer that calls it."
        )

    def _answer(self) -> str:
        return (
            f"def {self.function}(tokens):\n"
            f'    """The KV cache of a chat of `tokens` tokens, in GB, in whole blocks."""\n'
            f"    ### BEGIN SOLUTION\n"
            f"    blocks = -(-tokens // kv.BLOCK_TOKENS)\n"
            f"    return blocks * kv.BLOCK_TOKENS * model.bytes_per_token / 1e9\n"
            f"    ### END SOLUTION"
        )

    def _tests(self) -> str:
        f, forbidden = self.function, '("blocks_for",)'
        return (
            f"# Self-check for {self.heading}: chats the notebook does not show, some not a "
            f"whole number of blocks\n"
            f"### BEGIN HIDDEN TESTS\n"
            f"# kvlesson exercise wrote this example: make the question, the answer, the\n"
            f"# rules and the probes your own (docs/first-exercise.md, docs/self-checks.md)\n"
            f"from kvlesson.grading.checks.rules import declare\n"
            f"declare(\n"
            f"    domain=lambda tokens: isinstance(tokens, int) and tokens >= 1,  # a chat\n"
            f"    authority=lambda tokens: kv.blocks_for(tokens) * kv.BLOCK_TOKENS "
            f"* model.bytes_per_token / 1e9,\n"
            f'    mistakes={{"tokens, not whole blocks": (\n'
            f'        "def {f}(tokens):\\n    return tokens * model.bytes_per_token / 1e9",\n'
            f'        "a chat takes whole blocks of `kv.BLOCK_TOKENS` tokens: round its tokens "\n'
            f'        "up to whole blocks before you count their bytes.")}},\n'
            f")\n"
            f'selfcheck.record("{self.name}_tests", [\n'
            f'    selfcheck.number(f"{f}({{tokens}})", lambda tokens=tokens: {f}(tokens), '
            f'"GB", 3)\n'
            f"    for tokens in (3, 1_000, 77_777)\n"
            f"], forbidden={forbidden})\n"
            f"### END HIDDEN TESTS\n"
            f"selfcheck.verify([\n"
            f'    selfcheck.number("{f}(5)", lambda: {f}(5), "GB", 3),\n'
            f'    selfcheck.number("{f}(12_345)", lambda: {f}(12_345), "GB", 3),\n'
            f'], hints={{"else": "Re-read the exercise: whole blocks of `kv.BLOCK_TOKENS` '
            f'tokens, "\n'
            f'                  "`model.bytes_per_token` bytes a token, and GB of 1e9 bytes."}},\n'
            f'   forbidden={forbidden}, stamp="")'
        )

    def hand(self) -> list[tuple[str, str, str | None]]:
        """Three wrong answers of a student's own for the example, for `HAND`."""
        f = self.function
        blocks = "-(-tokens // kv.BLOCK_TOKENS)"
        return [
            (
                "bytes, not GB",
                f"def {f}(tokens):\n    return {blocks} * kv.BLOCK_TOKENS * model.bytes_per_token",
                "looks like it is in bytes; the question asks for GB",
            ),
            (
                "every attention head cached",
                f"def {f}(tokens):\n    per_token = 2 * model.layers * model.heads * "
                f"model.head_size * model.bytes_per_number\n"
                f"    return {blocks} * kv.BLOCK_TOKENS * per_token / 1e9",
                None,
            ),
            (
                "a block for each token",
                f"def {f}(tokens):\n    return tokens * kv.BLOCK_TOKENS * model.bytes_per_token / 1e9",
                None,
            ),
        ]


def _nbgrader(grade_id: str, points: float | None = None) -> dict:
    """A cell's nbgrader metadata: an autograded answer cell, or (with points) its test cell."""
    test = points is not None
    found = {
        "grade": test,
        "grade_id": grade_id,
        "locked": test,
        "schema_version": 3,
        "solution": not test,
        "task": False,
    }
    if test and float(points).is_integer():
        points = int(points)  # 1, as the course's cells have it, not 1.0
    return {"nbgrader": {**found, "points": points} if test else found}
