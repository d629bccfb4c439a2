"""The end-to-end tier's shared fixtures: Debian's Chromium (`browser`, `page`)."""

from support.browser import browser, page  # noqa: F401 (fixtures, found by name)
