"""Grading a class: self-checks in the student's kernel, the course on disk, the box,
marking, the grade command, the class report and nbgrader's exchange.

Sub-wings by role in the pipeline and by where the code runs, lowest first (each may import
itself and the ones named; docs/architecture.md draws them, tests/test_architecture.py
keeps them):

* `checks/`: runs in the student's kernel: the self-check, the hidden test's record,
  forbidden functions. Nothing else of the wing, and no nbgrader.
* `course/`: the course on disk, the ground floor: its folders and configuration, the key,
  the catalogue of known mistakes, the gradebook, sealing, the result types.
* `box/` (checks, course): where a submission's kernel runs.
* `marking/` (checks, course): an autograded notebook and its key to marks. Pure: no
  writes, no processes.
* `exchange/` (course): nbgrader's exchange made safe between accounts: collect, submit,
  the release of feedback.
* `report/` (course, marking): what the class got wrong, read from the course.
* `grade/` (course, box, marking, report): `kvlesson grade`: workers, a deadline, one writer.

May import the model, the lesson and the package root; never `authoring` or `delivery`
(which import its `checks` and `course`).
"""
