"""The three ways to start, in words (kvlesson.delivery.site.ways): a link where the course is
published, a plain sentence where it is not, and the notebook to download on every page."""

from __future__ import annotations

from pathlib import PurePosixPath

from kvlesson.delivery.site.published import Published
from kvlesson.delivery.site.ways import (
    NO_HUB,
    NO_REPOSITORY,
    about_binder,
    about_hub,
    about_own,
    notebook_ways,
    start_list,
)

NOWHERE = Published()
PUBLISHED = Published("https://github.com/team/kvlesson-students", "main", "https://hub.uni.edu")
PAGE = PurePosixPath("notebooks/03_cap_sweep/cap_sweep.ipynb")


def test_without_an_address_every_way_says_so_plainly_and_links_nowhere():
    for words in (start_list(NOWHERE), about_binder(NOWHERE), about_hub(NOWHERE)):
        assert "mybinder.org/v2" not in words and "git-pull" not in words
        assert NO_REPOSITORY in words or NO_HUB in words
    own = about_own(NOWHERE)
    assert "git clone" not in own and NO_REPOSITORY in own
    assert "pip install -r binder/requirements.txt" in own  # the steps that need no address
    box = notebook_ways(NOWHERE, PAGE, "cap_sweep.ipynb")
    assert f"Binder: no link, {NO_REPOSITORY}" in box and f"Hub: no link, {NO_HUB}" in box
    assert '<a href="cap_sweep.ipynb" download>' in box


def test_with_the_addresses_each_way_is_one_click():
    start = start_list(PUBLISHED)
    assert PUBLISHED.binder("notebooks/00_start_here/start_here.ipynb") in start
    assert PUBLISHED.on_hub("notebooks/00_start_here/start_here.ipynb") in start
    own = about_own(PUBLISHED)
    assert "git clone https://github.com/team/kvlesson-students\ncd kvlesson-students\n" in own
    box = notebook_ways(PUBLISHED, PAGE, "cap_sweep.ipynb")
    assert PUBLISHED.binder(str(PAGE)).replace("&", "&amp;") in box
    assert PUBLISHED.on_hub(str(PAGE)).replace("&", "&amp;") in box
    assert 'href="../../about.html#on-your-own-machine"' in box


def test_a_page_without_the_release_says_why_instead_of_a_download():
    box = notebook_ways(NOWHERE, PAGE, None, "this copy of the website was built without it")
    assert "download" not in box.split("Download:", 1)[0].lower()
    assert "Download: no copy of the notebook here: this copy of the website was built" in box
