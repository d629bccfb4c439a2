"""The class report: what the class got wrong, read back from the graded course (never from
a run), as counts, charts, a self-contained page and CSV.

May import `course` and `marking` (the outcomes' words); nothing else of the grading wing.
"""
