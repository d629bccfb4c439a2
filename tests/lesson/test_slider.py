"""An explorer's slider (kvlesson.lesson.slider): its options, and the numbers a range
input holds when they are evenly spaced (what a screen reader that speaks the value says)."""

from __future__ import annotations

import pytest
import traitlets

from kvlesson.lesson.slider import Slider, number_line


@pytest.mark.parametrize(
    "labels, line",
    [
        ([str(n) for n in range(1, 101)], (1.0, 1.0)),  # the share: 1 to 100
        (["1", "2", "4", "8"], None),  # the caps double
        (["0.1", "0.2", "0.3"], (0.1, 0.1)),
        (["1,024", "2,048", "3,072"], (1024.0, 1024.0)),
        (["128", "512", "none"], None),  # a word among them
        (["5"], None),  # one stop: nothing to space
        (["3", "2", "1"], None),  # falling
    ],
)
def test_a_number_line_only_when_the_labels_are_evenly_spaced_numbers(labels, line):
    found = number_line(labels)
    assert found == line or (
        found is not None and line is not None and found == pytest.approx(line)
    )


def test_a_share_slider_holds_the_share_and_a_cap_slider_its_position():
    share = Slider("memory share (%)", range(1, 101), 90)
    assert share.number_line == [1.0, 1.0] and share.index == 89
    caps = Slider("cap", [1, 2, 4, 8], 4)
    assert caps.number_line == [] and caps.index == 2
    caps.index = 3
    assert caps.value == 8


def test_a_value_that_is_no_option_is_named():
    with pytest.raises(traitlets.TraitError, match="cap: 3 is not one of the options"):
        Slider("cap", [1, 2, 4, 8], 3)
