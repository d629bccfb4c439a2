"""What the build did to one test cell, said in a few lines, and the checks that stop it.

For each exercise the build prints the probes it added to the cell (so an instructor sees
how the cell changed), the known mistakes it tried, the hints the self-check can give, the
mistakes the key names, the mistakes it dropped and why, and how many probes it held against
the exercise's authority. It stops on a probe whose key the authority contradicts, and on a
mistake the self-check names that the key cannot name: then the self-check, the feedback and
the class report would disagree about what a student did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvlesson.authoring.key_mistakes import as_keyed
from kvlesson.grading.course.known_mistakes import name_of

WRONG_KIND = ("error:", "kind:")  # an answer that raised, or is not the kind asked for


@dataclass
class Summary:
    """One test cell's build: filled in by `kvlesson.authoring.stamping`."""

    where: str
    choice: object = None  # the probe search's Choice (None: no search)
    known: list[str] = field(default_factory=list)  # every mistake tried, by code
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (code, why)
    authority: list | None = None  # [side, [[label, normal], ...]] per call; None: none
    hinted: list[str] = field(default_factory=list)  # the self-check's hints, their words
    key: list[dict] = field(default_factory=list)  # the key's known mistakes of this exercise
    in_view: list[str] = field(default_factory=list)  # probes whose answer a reader sees

    def added(self, side: str) -> list[str]:
        rows = self.choice.added.get(side, []) if self.choice is not None else []
        return [f"{row['function']}({', '.join(row['args'])})" for row in rows]

    def disagreements(self, entries: list[dict]) -> list[str]:
        """Each probe where the instructor's answer is not the authority's."""
        found = []
        for entry, (side, rows) in zip(entries, self.authority or []):
            for probe, (label, theirs) in zip(entry["probes"], rows):
                if theirs is not None and probe["normal"] != theirs:
                    found.append(
                        f"{label} ({'self-check' if side == 'verify' else 'hidden'}): "
                        f"the solution gives {probe['normal']}, the authority {theirs}"
                    )
        return found

    def why_dropped(self, entries: list[dict], wrong: list[dict]) -> list[tuple[str, str]]:
        """The mistakes neither the self-check nor the key names, with the reason."""
        hidden = next(i for i, e in enumerate(entries) if e["role"] == "record")
        right = [p["normal"] for p in entries[hidden]["probes"]]
        keyed = {tuple(known["answers"]) for known in self.key}
        found = list(self.dropped)
        for row in wrong:
            answers = row["answers"][hidden]
            if tuple(map(as_keyed, answers)) in keyed:
                continue
            if answers == right:
                why = "right on every hidden probe and every input tried"
            elif all(a == r or a.startswith(WRONG_KIND) for a, r in zip(answers, right)):
                why = "the key: it raises or gives another kind of answer on every hidden probe"
            else:
                why = "the key: another mistake, in other words, gives the same hidden answers"
            found.append((row["mistake"], why))
        return found

    def text(self, entries: list[dict], wrong: list[dict]) -> str:
        """The cell's summary, a few lines."""
        shown, hidden = self.added("verify"), self.added("record")
        lines = [
            f"{self.where}: added {len(shown)} self-check probe(s)"
            + (f" {', '.join(shown)}" if shown else "")
            + f" and {len(hidden)} hidden"
            + (f" {', '.join(hidden)}" if hidden else "")
        ]
        names = sorted({name_of(known["mistake"]) for known in self.key})
        lines.append(
            f"  {len(self.known)} known mistakes tried; the key names {len(self.key)} "
            f"answers: {', '.join(names) or 'none'}"
        )
        left_out = self.unnamed()
        for words in self.hinted:
            lines.append(
                f"  hint: {words}"
                + (" (left out: the key cannot name it)" if words in left_out else "")
            )
        dropped: dict[str, list[str]] = {}
        for code, why in self.why_dropped(entries, wrong):
            dropped.setdefault(why, []).append(name_of(code))
        for why, codes in dropped.items():
            lines.append(f"  dropped ({why}): {', '.join(sorted(set(codes)))}")
        if self.in_view:
            lines.append(
                f"  in view (answers a reader sees around the exercise; ask other inputs, or "
                f"name each with the reason it cannot help in KNOWN, "
                f"tests/authoring/test_shown_numbers.py): {'; '.join(self.in_view)}"
            )
        if self.authority is None:
            lines.append("  no authority declared")
        else:
            checked = sum(theirs is not None for _, rows in self.authority for _, theirs in rows)
            lines.append(
                f"  {checked} probes held against the authority, "
                f"{len(self.disagreements(entries))} disagree"
            )
        return "\n".join(lines)

    def unnamed(self) -> list[str]:
        """The hints the self-check would give that the key names in no answer."""
        said = {known["words"] for known in self.key}
        return [words for words in self.hinted if words not in said]

    def check(self, entries: list[dict], strict: bool = True) -> None:
        """Stop the build where a key is not true, or (`strict`: the build of the course's own
        setting, whose probe search can add an input) where the self-check would name a
        mistake the key cannot; the stamps leave such a hint out either way."""
        wrong = self.disagreements(entries)
        if wrong:
            raise ValueError(
                f"{self.where}: the instructor's solution disagrees with the "
                f"exercise's authority (declare(authority=...)):\n  " + "\n  ".join(wrong)
            )
        unnamed = self.unnamed()
        if unnamed and strict:
            raise ValueError(
                f"{self.where}: the self-check names mistakes the key cannot name "
                f"(the feedback and the class report would not): "
                f"{'; '.join(w.rstrip('.') for w in unnamed)}. Add a hidden probe "
                f"on which each gives an answer of its own."
            )
