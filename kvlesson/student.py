"""`python -m kvlesson.student`: give JupyterLab the student interface
(kvlesson.grading.student_lab).

A command's old address, kept so that what instructors and the guides type still works.
"""

from kvlesson.grading.student_lab import main

if __name__ == "__main__":
    raise SystemExit(main())
