"""nbgrader configuration of an instructor's server on the course's hub.

hub/setup.sh copies it to PREFIX/etc/instructor, on the configuration path of the accounts
in the instructors' group only. The course is the instructor's clone of the repository in
~/kvlesson (inside the server's root folder, as the formgrader requires); the repository's
own nbgrader_config.py is loaded from there, so that the folders, the cell timeout and the
answer stubs are the ones every test uses, and the gradebook is ~/kvlesson/gradebook.db
from whichever folder a command starts in.
"""

import os

c = get_config()  # noqa: F821 - provided by nbgrader

COURSE = os.path.expanduser("~/kvlesson")
c.CourseDirectory.root = COURSE
load_subconfig(os.path.join(COURSE, "nbgrader_config.py"))  # noqa: F821 - provided by nbgrader
