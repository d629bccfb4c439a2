"""The course as a static website: student text, executed figures and tables, the guides.

    kvlesson site [--out site/_build]

`pages` makes each notebook's page from the student release with the instructor notebook's
outputs on the cells that are neither answers nor self-checks; `layout` writes the Sphinx
sources (the README, the notebooks, the guides, a configuration that loads nothing from
outside); `command` builds them with Sphinx, myst-nb and sphinx-book-theme (the `site` extra).
Sphinx runs as its own process.

Part of the delivery wing (its rule is in `kvlesson/delivery/__init__.py`).
"""
