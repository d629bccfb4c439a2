"""`python -m kvlesson.course`: build the course, or the course for other hardware
(kvlesson.grading.course_build).

A command's old address, kept so that what instructors and the guides type still works.
"""

from kvlesson.grading.course_build import main

if __name__ == "__main__":
    raise SystemExit(main())
