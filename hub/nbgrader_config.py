"""nbgrader configuration for every account of the course's hub: students and instructors.

hub/setup.sh copies it to PREFIX/etc/everyone, a folder that hub/jupyterhub_config.py puts
on every user's Jupyter configuration path, so each server and each nbgrader command in it
reads it (a path in this file reaches the formgrader; `--Exchange.root` on a command line
does not).
"""

import os

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "kvlesson"  # the course id of the repository's nbgrader_config.py
# The exchange: one folder on this machine that every account can write (hub/setup.sh
# does not make it: see docs/jupyterhub.md). KVLESSON_EXCHANGE moves it, for the tests.
c.Exchange.root = os.environ.get("KVLESSON_EXCHANGE", "/srv/nbgrader/exchange")
# Each submission folder closed to other students (nbgrader's own leaves it writable by all).
c.ExchangeFactory.submit = "kvlesson.grading.exchange.SafeSubmit"
