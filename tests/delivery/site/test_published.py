"""Where the course is published (kvlesson.delivery.site.published): one setting, the
links it makes, clear errors for a bad one, and a README whose Binder link is that setting's."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from kvlesson.delivery.site.published import SETTING, Published, published
from support.paths import ROOT

FIRST = "notebooks/00_start_here/start_here.ipynb"


def write(folder: Path, text: str) -> Path:
    (folder / SETTING).parent.mkdir(parents=True, exist_ok=True)
    (folder / SETTING).write_text(text)
    return folder


def test_no_setting_means_nothing_published_and_no_link():
    where = published(Path("/nonexistent"))
    assert where == Published()
    assert (where.binder(FIRST), where.on_hub(FIRST), where.badge(FIRST)) == (None, None, None)


def test_binder_opens_the_file_in_jupyterlab_from_github_gitlab_or_any_git_host():
    github = Published("https://github.com/course-team/kvlesson-students", "main")
    assert github.binder(FIRST) == (
        "https://mybinder.org/v2/gh/course-team/kvlesson-students/main"
        "?labpath=notebooks%2F00_start_here%2Fstart_here.ipynb"
    )
    gitlab = Published("https://gitlab.com/uni/ml/kvlesson", "term-2")
    assert gitlab.binder(FIRST).startswith("https://mybinder.org/v2/gl/uni%2Fml%2Fkvlesson/term-2?")
    other = Published("https://git.uni.example/kv.git", "main")
    assert other.binder(FIRST).startswith(
        "https://mybinder.org/v2/git/https%3A%2F%2Fgit.uni.example%2Fkv.git/main?"
    )


def test_the_hub_link_is_nbgitpullers_and_opens_the_file_in_the_clone():
    where = Published(
        "https://github.com/course-team/kvlesson-students.git", "main", "https://hub.uni.edu"
    )
    link = urlsplit(where.on_hub("notebooks/01_floor_plan/floor_plan.ipynb"))
    assert (link.scheme, link.netloc, link.path) == (
        "https",
        "hub.uni.edu",
        "/hub/user-redirect/git-pull",
    )
    query = parse_qs(link.query)
    assert query == {
        "repo": ["https://github.com/course-team/kvlesson-students.git"],
        "branch": ["main"],
        "urlpath": ["lab/tree/kvlesson-students/notebooks/01_floor_plan/floor_plan.ipynb"],
    }
    assert Published(hub="https://hub.uni.edu").on_hub(FIRST) is None  # a hub needs a repository


@pytest.mark.parametrize(
    "text, words",
    [
        ('[published]\nrepository = "https://github.com/OWNER/REPO"', "placeholder"),
        ('[published]\nrepository = "github.com/team/course"', "an address such as https://"),
        ('[published]\nrepository = "https://github.com/team"', "the account and the repository"),
        ('[published]\nhub = "https://hub.uni.edu/?next=x"', "no ?query"),
        ("[published]\nhub = 42", "a quoted address"),
        ('[published]\nbranch = "two words"', "a branch's name"),
        ('[published]\nrepo = "https://github.com/a/b"', "holds repo; it knows repository"),
        ('[published\nrepository = ""', "cannot be read"),
    ],
)
def test_a_bad_setting_names_the_problem_and_what_is_allowed(tmp_path, text, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        published(write(tmp_path, text))


def test_a_good_setting_is_read_whole(tmp_path):
    where = published(
        write(
            tmp_path,
            '[published]\nrepository = "https://github.com/team/course/"\n'
            'branch = "spring-2027"\nhub = "https://hub.uni.edu/"\n',
        )
    )
    assert where == Published(
        "https://github.com/team/course", "spring-2027", "https://hub.uni.edu"
    )
    assert where.folder == "course"


def test_the_readme_names_no_placeholder_and_its_binder_link_is_the_settings():
    readme = (ROOT / "README.md").read_text()
    assert "OWNER" not in readme
    links = re.findall(r"https://mybinder\.org/v2/[^)\s]+", readme)
    badge = published(ROOT).badge(FIRST)
    if badge is None:
        assert links == [], (
            "the README links to Binder, but site/published.toml names no repository"
        )
        assert str(SETTING) in readme, "the README does not say where the Binder link comes from"
    else:
        assert badge in readme and set(links) == {published(ROOT).binder(FIRST)}
