"""nbgrader configuration for the kvlesson course; run nbgrader from this folder.

The instructor notebooks (with solutions and hidden tests) live in
solutions/<assignment>/, the student release in notebooks/<assignment>/.
See docs/instructors.md for a term's commands.
"""

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "kvlesson"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
# The gradebook is nbgrader's default, SQLite in the course root (gradebook.db,
# never committed); a relative db_url would follow the folder nbgrader starts in.

# A student's cell may loop or hang: stop it after 30 s (no cell of the
# course needs more than a few), and grading goes on with the other cells.
c.Execute.timeout = 30
c.Execute.interrupt_on_timeout = True

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
