"""The guides say what the course and its set-up are.

docs/instructors.md and docs/jupyterhub.md quote facts about the course (how many
assignments, which answers are graded by hand and for how many points) and about the hub
(its address, the versions hub/setup.sh installs, the course's exchange). Each is read out
of the guide and compared with what the repository holds, so that a new notebook, a new
written answer or a new pin that the guides do not follow fails here.
"""

from __future__ import annotations

import re

import nbformat

from kvlesson.authoring import command
from support.paths import ROOT

INSTRUCTORS = (ROOT / "docs" / "instructors.md").read_text()
HUB = (ROOT / "docs" / "jupyterhub.md").read_text()
NUMBERS = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def written_answers() -> dict[str, tuple[str, float]]:
    """Each answer graded by hand (a markdown answer cell with points): its assignment and
    points."""
    found = {}
    for path in command.notebook_paths(ROOT / "solutions"):
        for cell in nbformat.read(path, 4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "markdown" and meta.get("solution") and meta.get("grade"):
                found[meta["grade_id"]] = (path.parent.name, float(meta["points"]))
    return found


def test_the_instructors_guide_names_every_assignment():
    said = re.search(r"There are (\w+) assignments: (.*?)\. ", INSTRUCTORS, re.S)
    assert said, "docs/instructors.md no longer says how many assignments there are"
    named = re.findall(r"`(\d\d_\w+)`", said[2])
    assert named == command.assignments()
    assert NUMBERS[said[1]] == len(named)


def test_the_instructors_guide_lists_every_written_answer_with_its_points():
    said = re.search(
        r"(\w+) are written answers that you grade by hand:\s+(.*?)\. Their", INSTRUCTORS, re.S
    )
    assert said, "docs/instructors.md no longer lists the written answers"
    listed = {
        cell: (assignment, float(points))
        for cell, assignment, points in re.findall(
            r"`(\w+)`\s+in\s+(\d\d_\w+)\s+\((\d+)\s+points?\)", said[2]
        )
    }
    assert listed == written_answers()
    assert NUMBERS[said[1].lower()] == len(listed)


def test_every_answer_id_the_guides_name_is_graded_by_hand():
    named = set(re.findall(r"`(q\d\w*)`", INSTRUCTORS + HUB))
    assert named == set(written_answers()), named ^ set(written_answers())


def test_the_hub_guide_counts_the_assignments():
    said = re.search(r"one folder per assignment, (\w+) of them\s+\(`(\w+)` to `(\w+)`\)", HUB)
    assert said, "docs/jupyterhub.md no longer says which assignments there are"
    names = command.assignments()
    assert (NUMBERS[said[1]], said[2], said[3]) == (len(names), names[0], names[-1])


def test_the_hub_guide_quotes_the_hubs_own_settings():
    setup = (ROOT / "hub" / "setup.sh").read_text()
    config = (ROOT / "hub" / "jupyterhub_config.py").read_text()
    hub_pin = re.search(r"^JUPYTERHUB_VERSION=(\S+)", setup, re.M)[1]
    proxy_pin = re.search(r"^PROXY_VERSION=(\S+)", setup, re.M)[1]
    assert f"JupyterHub {hub_pin}" in HUB and f"`configurable-http-proxy` {proxy_pin}" in HUB
    places = (ROOT / "hub" / "places.py").read_text()
    for name, what in (("HUB_API_PORT", "the hub's API"), ("PROXY_API_PORT", "its proxy's API")):
        port = re.search(rf"^{name} = (\d+)", places, re.M)[1]
        assert f"{what} ({port})" in HUB, name
    assert "on port 443 of the machine" in HUB and "places.TLS_CERT" in config
    state = re.search(r'^STATE = "(.*?)"', places, re.M)[1]
    assert f"It also makes `{state}`" in HUB and f"{state}/tls.crt" in HUB
