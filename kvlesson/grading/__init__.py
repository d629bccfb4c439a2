"""The course's machinery: self-checks, the release, grading and the student's JupyterLab.

The kinds of answer and their normal forms (`probes`), the self-check and the hidden
test's record (`selfcheck`), known mistakes (`mistakes`), the build that stamps hashes and
writes keys (`stamping`, `course_build`), marking outside the kernel (`marking`), the
grading box (`box`), the one grading command (`grade_class`), autograde's check of locked
cells (`released_cells`) and the student's interface (`student_lab`).

May import anything in kvlesson; nothing in the model or the lesson imports it.
"""
