"""How the course reaches a student: the student's JupyterLab and the course as a website.

* `lab.py`: the student's JupyterLab (nbgrader's Validate button only) and `kvlesson open`,
  `kvlesson student` (Binder, a hub, scripts/open.sh).
* `site/`: `kvlesson site`, the course as an offline static website.

May import the model and the lesson, `grading.course` (the course on disk) and `authoring`
(where the set-up cell keeps its stamps); nothing else of the grading wing.
"""
