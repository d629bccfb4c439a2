"""`kvlesson site`'s words on where the pages open notebooks (kvlesson.delivery.site.command):
the setting it read, and the README's Binder badge when there is a repository."""

from __future__ import annotations

from kvlesson.delivery.site.command import where_published
from kvlesson.delivery.site.published import SETTING


def test_no_repository_is_said_with_the_file_to_set(tmp_path):
    words = where_published(tmp_path)
    assert str(SETTING) in words and "no Binder or hub link" in words


def test_a_repository_is_said_with_the_readmes_badge(tmp_path):
    (tmp_path / SETTING).parent.mkdir()
    (tmp_path / SETTING).write_text('[published]\nrepository = "https://github.com/team/course"\n')
    words = where_published(tmp_path)
    assert "from https://github.com/team/course (main, no hub" in words
    assert (
        "[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/team/course/"
        "main?labpath=notebooks%2F00_start_here%2Fstart_here.ipynb)" in words
    )
