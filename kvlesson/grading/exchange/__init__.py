"""nbgrader's exchange, made safe between accounts (nbgrader_config.py selects these).

nbgrader's own exchange trusts every account that can write to it: through it a student
could hand in work under a classmate's name or named with an earlier time, bring back the
instructor's files as their own, stop the collection of the whole class, or change a
classmate's submission. Each of its steps is replaced here, one module per role:

* `collect` (kvlesson.grading.exchange.collect): `SafeCollect` takes each student's own
  newest submission and seals it; what an entry of inbound is, and when it was handed in,
  is read by kvlesson.grading.exchange.inbound.
* `submit` (kvlesson.grading.exchange.submit): `SafeSubmit` closes each submission folder
  to its student and the instructors.
* `feedback` (kvlesson.grading.exchange.feedback): `SafeReleaseFeedback` releases feedback
  from plain files only, student by student.
* the accounts (kvlesson.grading.exchange.accounts): who owns an entry, who runs the command.
* a learning platform's download, for nbgrader's `zip_collect` (nbgrader_config.py selects
  both): `unpack.SafeExtractor` unpacks plain files only, with limits, and
  `download.PlatformFileNames` sorts their names into students, one student's odd files
  costing that student only, lateness kept.

nbgrader_config.py and hub/nbgrader_config.py name the three classes by this package
(`kvlesson.grading.exchange.SafeCollect`, `.SafeSubmit`, `.SafeReleaseFeedback`), as a hub
already set up does: they are imported here, so those names keep working.

May import `course` (sealing); nothing else of the grading wing.
"""

from kvlesson.grading.exchange.collect import SafeCollect
from kvlesson.grading.exchange.feedback import SafeReleaseFeedback
from kvlesson.grading.exchange.submit import SafeSubmit

__all__ = ["SafeCollect", "SafeReleaseFeedback", "SafeSubmit"]
