"""The course as a static website: student text, executed figures and tables, the guides.

    python -m kvlesson.course site [--out site/_build]

`pages` makes each notebook's page from the student release with the instructor notebook's
outputs on the cells that are neither answers nor self-checks; `layout` writes the Sphinx
sources (the README, the notebooks, the guides, a configuration that loads nothing from
outside); `command` builds them with Sphinx, myst-nb and sphinx-book-theme (the `site` extra).
This sub-wing imports only the standard library and nbformat; Sphinx runs as its own process.
"""
