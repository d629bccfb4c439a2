"""A student id is inert wherever it appears (kvlesson.grading.course.ids): every way in
(collect, the zip path, a teaching assistant's folders) refuses a name that would be markup
in the formgrader's header, a second line in the terminal, a formula in a spreadsheet or a
path, and takes the ids real classes use."""

from __future__ import annotations

import pytest

from kvlesson.grading.course.ids import MAX_ID, id_problem

NOT_UTF8 = b"ana\xff".decode("utf-8", "surrogateescape")


@pytest.mark.parametrize(
    "name",
    [
        "ana",
        "s1234567",
        "o_brien",
        "ana.lima",
        "ana.lima@uni.example",
        "jos\u00e9",
        "\u674e\u96f7",
        "_tester",
        "x" * MAX_ID,
    ],
)
def test_the_ids_classes_use_are_taken(name):
    assert id_problem(name) == "", name


@pytest.mark.parametrize(
    "name, why",
    [
        ("", "is empty"),
        ("<img src=x onerror=alert(1)>", "starts with '<'"),
        ("ana<img src=x onerror=alert(1)>", "holds '<'"),
        ('ana"onmouseover=alert(1)', "holds '\"'"),
        ("ana'", 'holds "\'"'),
        ("ana&amp;", "holds '&'"),
        ("ana bob", "holds ' '"),
        ("ana+02_ceiling", "holds '+'"),
        ("=HYPERLINK(1)", "starts with '='"),
        ("-rf", "starts with '-'"),
        ("@SUM(1)", "starts with '@'"),
        (".ipynb_checkpoints", "starts with '.'"),
        ("..", "starts with '.'"),
        ("two\nlines", "control character"),
        ("ana\x1b[2J", "control character"),
        ("ana\u202egnp.exe", "control character"),  # right-to-left override
        ("a\u200db", "control character"),  # zero-width joiner
        ("jose\u0301", "holds"),  # a combining accent, not one letter
        (NOT_UTF8, "is not UTF-8 text"),
        ("x" * (MAX_ID + 1), f"longer than {MAX_ID}"),
    ],
)
def test_a_name_that_is_not_inert_everywhere_is_never_an_id(name, why):
    assert why in id_problem(name), (name, id_problem(name))
