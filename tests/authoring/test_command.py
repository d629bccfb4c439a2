"""What the authoring verbs share: the course they find, and a stored notebook that does not
change with the machine's load."""

from __future__ import annotations

import nbformat
import pytest

from kvlesson.authoring import command
from support.paths import ROOT


def test_the_commands_find_the_course_repository_they_are_installed_from():
    """`kvlesson build` and `kvlesson site` read solutions/ beside the package (an editable
    install): a module moved one folder up or down must still find it."""
    from kvlesson.delivery.site import command as site

    assert command.ROOT == site.ROOT == ROOT
    assert (command.ROOT / "solutions").is_dir()


def stream(text: str, name: str = "stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_a_line_the_kernel_sent_in_pieces_is_stored_whole():
    """A busy machine's kernel cut "Self-check passed." from its newline: stored as it came,
    the notebook changed with the load (the build of 2026-12-07 under load 9)."""
    cut = [stream("KVLESSON-MARK {}\n"), stream("Self-check passed."), stream("\n")]
    assert command.whole_streams(cut) == [
        stream("KVLESSON-MARK {}\n"),
        stream("Self-check passed.\n"),
    ]


def test_whole_lines_and_other_streams_stay_as_the_kernel_sent_them():
    kept = [stream("a\n"), stream("b\n"), stream("warning", "stderr"), stream("c")]
    assert command.whole_streams(kept) == kept
    shown = nbformat.v4.new_output("display_data", data={"text/plain": "x"})
    assert command.whole_streams([stream("a"), shown, stream("b")]) == [
        stream("a"),
        shown,
        stream("b"),
    ]


def test_an_assignment_the_course_lacks_is_named_with_the_ones_it_has():
    with pytest.raises(ValueError, match=r"no assignment 02_cieling .*the assignments are 00_"):
        command.chosen(["02_cieling"])
    assert command.chosen(["02_ceiling", "01_floor_plan"]) == ["01_floor_plan", "02_ceiling"]
    assert command.chosen(None) == command.assignments()
