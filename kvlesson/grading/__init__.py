"""The course's machinery: self-checks, the build, the grading box, marking, the grade
command, the class report, the exchange and the student's JupyterLab.

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
* `build/` (checks, course): `kvlesson build` and `for`: execute, search probes, stamp.
* `exchange/` (course): nbgrader's exchange made safe between accounts: collect, submit,
  the release of feedback.
* `site/` (course, build): `kvlesson site`, the course as an offline static website.
* `report/` (course, marking): what the class got wrong, read from the course.
* `grade/` (course, box, marking, report): `kvlesson grade`: workers, a deadline, one writer.
* `student_lab.py`: the student's JupyterLab; imports nothing of the wing.

May import anything in kvlesson; nothing in the model or the lesson imports it.
"""
