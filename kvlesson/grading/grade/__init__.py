"""`kvlesson grade`: a whole class graded, each submission sealed, run in the box and marked
by a worker of its own, with a deadline; the command alone writes the results.

May import `course`, `box`, `marking` and `report`: the top floor of the grading wing.
"""
