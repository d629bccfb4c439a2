"""`python -m kvlesson.grade`: grade a whole class (kvlesson.grading.grade_class).

A command's old address, kept so that what instructors and the guides type still works.
"""

from kvlesson.grading.grade_class import main

if __name__ == "__main__":
    raise SystemExit(main())
