"""Marking: an autograded notebook and its key to marks, outside the student's kernel.

Whose is each cell and which cells work out an answer (`cell_roles`), a student's cells
read as code (`cell_scan`), the known mistake a wrong answer is (`diagnosis`), and each
exercise's mark and outcome (`marks`). Pure: it reads notebooks and keys, writes nothing
and starts no process.

May import `checks` and `course`; nothing else of the grading wing.
"""
