"""The course on disk, the grading wing's ground floor: nbgrader's configuration and the
course's folders, a notebook's cells as nbgrader marks them, the grader's key, the catalogue
of known mistakes, the gradebook, sealing a submission, the Python the grader starts, and
the types a submission's result takes from the box to the report.

May import the standard library, nbgrader, nbformat and traitlets; nothing else of the
grading wing.
"""
