"""The names the formgrader's header writes, escaped before its template sees them.

nbgrader's formgrader renders a submission with nbconvert's HTML exporter and its own
`formgrade` template, whose header writes the student's id, first and last name, the
notebook's and the assignment's names and the notebook's path straight into the page
(nbconvert's templates do not escape): an id such as `<img src=x onerror=...>` is markup
there. Every way in takes only inert ids (`kvlesson.grading.course.ids`), but a gradebook
can hold others (nbgrader's own commands, a roster file); so nbgrader_config.py gives the
exporter this step too, which escapes each of those names as HTML text first.
"""

from __future__ import annotations

import html

from nbconvert.preprocessors import Preprocessor

# What the formgrader's SubmissionHandler puts in `resources` for its header.
NAMES = ("student", "first_name", "last_name", "notebook_id", "assignment_id", "notebook_path")


class EscapedNames(Preprocessor):
    """nbconvert's step that escapes the formgrader header's names in `resources`."""

    def preprocess(self, nb, resources):
        for key in NAMES:
            if isinstance(resources.get(key), str):
                resources[key] = html.escape(resources[key], quote=True)
        return nb, resources
