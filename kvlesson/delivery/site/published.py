"""Where the course is published, and the links that open a notebook from there.

One setting, `site/published.toml`: the students' repository (what Binder builds and a hub's
nbgitpuller clones), its branch, and the hub. Every link the website gives to open a
notebook, its clone command and the README's Binder badge come from it. Each part may be
empty: the website then says plainly that it has no such link (`ways`).

Binder's addresses are mybinder.org's three forms (its user guide: `/v2/gh/ACCOUNT/NAME/REF`
for GitHub, `/v2/gl/` with the project's path escaped for GitLab, `/v2/git/` with the whole
address escaped for any public git repository; `?labpath=` the file JupyterLab opens). A
hub's is nbgitpuller's (its documentation's link generator):
`/hub/user-redirect/git-pull?repo=...&branch=...&urlpath=lab/tree/NAME/...` clones the
repository into the folder NAME of the student's home, or merges what changed there without
overwriting the student's edits, and opens the path; docs/jupyterhub.md writes the same link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote, urlsplit

SETTING = PurePosixPath("site/published.toml")  # in the course repository
BINDER = "https://mybinder.org/v2"
KEYS = ("repository", "branch", "hub")
PLACEHOLDER = re.compile(r"\b(OWNER|ACCOUNT|REPO|HUB)\b|example\.(edu|org|com)")  # the guides'


@dataclass(frozen=True)
class Published:
    """The students' repository (an https address, or ''), its branch, the hub (or '')."""

    repository: str = ""
    branch: str = "main"
    hub: str = ""

    @property
    def folder(self) -> str:
        """The folder a clone of the repository makes (nbgitpuller's and git's): its name."""
        return self.repository.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")

    def binder(self, path: str) -> str | None:
        """mybinder.org's address that opens the file `path` of the repository in
        JupyterLab; None without a repository."""
        if not self.repository:
            return None
        url = urlsplit(self.repository)
        place = url.path.strip("/").removesuffix(".git")
        if url.hostname == "github.com":
            where = f"gh/{place}"
        elif url.hostname == "gitlab.com":
            where = f"gl/{quote(place, safe='')}"
        else:
            where = f"git/{quote(self.repository, safe='')}"
        return f"{BINDER}/{where}/{quote(self.branch, safe='')}?labpath={quote(path, safe='')}"

    def on_hub(self, path: str) -> str | None:
        """The hub's nbgitpuller link that clones the repository (or merges its news into the
        student's copy) and opens the file `path`; None without a hub or a repository."""
        if not (self.hub and self.repository):
            return None
        return (
            f"{self.hub}/hub/user-redirect/git-pull?repo={quote(self.repository, safe='')}"
            f"&branch={quote(self.branch, safe='')}"
            f"&urlpath={quote(f'lab/tree/{self.folder}/{path}', safe='')}"
        )

    def badge(self, path: str) -> str | None:
        """The README's Binder badge (Markdown) for `path`; None without a repository."""
        link = self.binder(path)
        return f"[![Binder](https://mybinder.org/badge_logo.svg)]({link})" if link else None


def address(name: str, value: object, hosted: bool) -> str:
    """`value` as an address for `name`: '' or http(s)://host/..., no query, no placeholder;
    a repository needs a path (https://github.com/ACCOUNT/NAME)."""
    if not isinstance(value, str):
        raise ValueError(f"{SETTING}: {name} must be a quoted address, not {value!r}")
    value = value.strip().rstrip("/")
    if not value:
        return ""
    url = urlsplit(value)
    if url.scheme not in ("https", "http") or not url.hostname or url.query or url.fragment:
        raise ValueError(
            f"{SETTING}: {name} must be an address such as https://host/path, with no ?query "
            f"or #part, not {value!r}"
        )
    if hosted and len([p for p in url.path.split("/") if p]) < 2:
        raise ValueError(
            f"{SETTING}: repository must name the account and the repository, as in "
            f"https://github.com/ACCOUNT/NAME, not {value!r}"
        )
    if PLACEHOLDER.search(value):
        raise ValueError(
            f"{SETTING}: {name} {value!r} is still a placeholder from the guides: give the "
            "real address, or leave it empty"
        )
    return value


def published(root: Path) -> Published:
    """The setting in `root`/site/published.toml (no file: nothing published, branch main)."""
    path = root / SETTING
    if not path.is_file():
        return Published()
    import tomllib  # Python 3.11, as Sphinx 9 (the site extra) needs

    try:
        table = tomllib.loads(path.read_text()).get("published", {})
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{SETTING} cannot be read: {error}") from error
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ValueError(
            f"{SETTING}: [published] holds {', '.join(unknown)}; it knows {', '.join(KEYS)}"
        )
    branch = table.get("branch", "main")
    if not isinstance(branch, str) or not re.fullmatch(r"[\w./-]+", branch):
        raise ValueError(f"{SETTING}: branch must be a branch's name, such as main, not {branch!r}")
    return Published(
        address("repository", table.get("repository", ""), hosted=True),
        branch,
        address("hub", table.get("hub", ""), hosted=False),
    )
