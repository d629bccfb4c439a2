"""The grading box: each graded submission's kernel runs where it can harm nothing.

nbgrader runs a submission's cells, hidden tests included, in one kernel; without a box
that kernel has the instructor's rights. Here autograde (nbgrader_config.py selects
`kvlesson.grading.box.execute.BoxedExecute`) starts every kernel through bubblewrap:

* walls (kvlesson.grading.box.walls): a read-only system; the course root (gradebook.db,
  solutions/, keys/, other students' work), the course repository, the exchange and the
  grader's home hidden; only the submission's working copy writable; no network (the grader
  talks to the kernel over Unix sockets), its own process namespace (a process it starts
  dies with it), no capabilities, a clean environment;
* the watch (kvlesson.grading.box.watch): an audit hook installed before any cell runs, which
  refuses and reports processes, ctypes, sockets and new audit hooks, and reports writes
  outside the working copy;
* the rescue (kvlesson.grading.box.execute): a cell that kills its kernel or cannot be
  interrupted scores 0 and is flagged; the kernel is restarted, the cells that ran fine are
  run again, and grading goes on with the next cell.

* the limits (kvlesson.grading.box.limits): memory, processes and disk, per submission;
* the ledger (kvlesson.grading.box.ledger): every forbidden function that ran from a
  student's code; flags (kvlesson.grading.box.flags): what the box saw, kept in the graded
  notebook; the launcher (kvlesson.grading.box.launch): what a boxed kernelspec runs.

* the second run (kvlesson.grading.box.withheld): a copy of kvlesson without an exercise's
  forbidden functions, put in place of every kvlesson the kernel could import, for the
  grade's second run of a submission (kvlesson.grading.grade.second_run); fonts
  (kvlesson.grading.box.fonts): matplotlib's list of fonts, made once per grading run.

What it does not protect: a cell can slow grading until the timeout, and the watch can be
silenced by C code or by the kernel itself (the walls still hold then, and the second run
does not depend on the watch).

May import `checks` (the ledger knows forbidden functions) and `course`; nothing else of
the grading wing.
"""
