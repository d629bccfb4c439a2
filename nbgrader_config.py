"""nbgrader configuration for the kvlesson course; run nbgrader from this folder.

The instructor notebooks (with solutions and hidden tests) live in
solutions/<assignment>/, the student release in notebooks/<assignment>/.
See docs/instructors.md for a term's commands.
"""

from nbgrader.converters.autograde import Autograde
from nbgrader.preprocessors import Execute, OverwriteCells

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "kvlesson"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
# The gradebook is nbgrader's default, SQLite in the course root (gradebook.db,
# never committed); a relative db_url would follow the folder nbgrader starts in.

# Autograde runs each submission's kernel in the grading box (kvlesson/grading/box: bubblewrap,
# no network, the course root, gradebook and exchange hidden) and rescues a cell that
# kills its kernel or cannot be interrupted: that cell scores 0 and is flagged, the other
# cells are graded. `python -m kvlesson.grade ASSIGNMENT` runs this autograde, then marks.
c.Autograde.autograde_preprocessors = [
    "kvlesson.grading.box.execute.BoxedExecute" if step is Execute else step
    for step in Autograde.class_traits()["autograde_preprocessors"].default()
]
# Locked cells are put back as the instructor wrote them; nbgrader's warning that one
# "has changed" comes only when it differs from what the release gave
# (kvlesson/grading/course/released.py: without it, every test cell with hidden tests of every
# honest student is warned about).
c.Autograde.sanitize_preprocessors = [
    "kvlesson.grading.course.released.OverwriteReleasedCells" if step is OverwriteCells else step
    for step in Autograde.class_traits()["sanitize_preprocessors"].default()
]
# Late work (docs/instructors.md, "Late work"): a submission counts at the time its files
# reached the exchange; later than the due date (and the student's extension) by more than
# the grace, it is flagged and loses this share of its score per started day late. A
# learning platform's download that says only "late" (Canvas's late_ in a file name) counts
# as late by platform_late_days. kvlesson grade applies it to the course's marks.
c.AssignLatePenalties.plugin_class = "kvlesson.grading.grade.lateness.LatePolicy"
c.LatePolicy.grace_minutes = 0
c.LatePolicy.percent_per_day = 10
c.LatePolicy.platform_late_days = 1
# A student's cell may loop or hang: stop it after 30 s (no cell of the
# course needs more than a few), and grading goes on with the other cells.
c.Execute.timeout = 30
c.Execute.interrupt_on_timeout = True

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# The exchange, safe between accounts (kvlesson/grading/exchange/): collect seals each
# submission (a link planted in the exchange to your notebook, keys/ or the gradebook is left
# out and flagged) and skips work handed in under a classmate's name; submit leaves a
# submission to its student and the instructors; feedback is never released through a link.
c.ExchangeFactory.collect = "kvlesson.grading.exchange.SafeCollect"
c.ExchangeFactory.submit = "kvlesson.grading.exchange.SafeSubmit"
c.ExchangeFactory.release_feedback = "kvlesson.grading.exchange.SafeReleaseFeedback"
# A learning platform's download (nbgrader zip_collect, docs/instructors.md): plain files only,
# unpacked with limits; student ids checked; of one student's files for a notebook the newest
# (by the pattern's `order` or `timestamp`), or none with a note, never the class stopped; a
# file the pattern's `late` group marks is flagged late by the grading command.
c.ZipCollectApp.extractor_plugin = "kvlesson.grading.exchange.unpack.SafeExtractor"
c.ZipCollectApp.collector_plugin = "kvlesson.grading.exchange.download.PlatformFileNames"
# Feedback pages and the formgrader keep only inert HTML: the grading command cleans every
# graded notebook as rendered before it stores it, and the pages clean again as they render,
# with the course's cleaner in place of nbconvert's (nbgrader's templates render Markdown,
# comments included, without cleaning; nbconvert's cleaner drops the figures' images).
c.HTMLExporter.sanitize_html = True
c.HTMLExporter.filters = {
    "clean_html": "kvlesson.grading.grade.sanitize.clean_html",
    "markdown2html": "kvlesson.grading.grade.sanitize.markdown2html",
}
# The formgrader's header writes the student's id and names into the page unescaped: they
# are escaped first (every way in also refuses an id that is not inert).
c.HTMLExporter.preprocessors = ["kvlesson.grading.grade.escaped_names.EscapedNames"]
# The grading command's mark of a graded folder stays with the grader: never in feedback.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    ".kvlesson-graded.json",
]
