"""The grading box: each graded submission's kernel runs where it can harm nothing.

nbgrader runs a submission's cells, hidden tests included, in one kernel; without a box
that kernel has the instructor's rights. Here every kernel of autograde (nbgrader_config.py
selects `kvlesson.grading.box.execute.BoxedExecute`; the grading worker calls it directly)
is forked from a zygote in bubblewrap:

* walls (kvlesson.grading.box.walls, bubblewrap): a read-only system; the course root
  (gradebook.db, solutions/, keys/, other students' work), the course repository, the
  exchange and the grader's home hidden; the root and /dev read-only; every writable place
  (the working copy, /tmp, home, /dev/shm, the connection folder) an in-memory file system
  of a fixed size, made anew for each kernel; no network (the grader talks to the kernel
  over Unix sockets), its own process namespace (a process it starts dies with it), no
  capabilities, a clean environment;
* the zygote (kvlesson.grading.box.zygote, launch, kernel): a process in the box that has
  made a kernel's imports once and forks one kernel per notebook run; it runs no student
  code, and each kernel puts up its own walls before any (kvlesson.grading.box.enter): its
  namespaces, its fresh writable places, its own user namespace and keyring, no capability;
* the watch (kvlesson.grading.box.watch): an audit hook installed before any cell runs, which
  refuses and reports processes, ctypes, sockets and new audit hooks, and reports writes
  outside the working copy;
* the rescue (kvlesson.grading.box.execute): a cell that kills its kernel or cannot be
  interrupted scores 0 and is flagged; a new kernel is forked, the cells that ran fine are
  run again, and grading goes on with the next cell.

* the limits (kvlesson.grading.box.limits): memory, processes and disk, per submission;
* the ledger (kvlesson.grading.box.ledger): every forbidden function that ran from a
  student's code, and the assignment's ledger built from the instructor's notebooks;
  events and flags (kvlesson.grading.box.events, flags): what the box saw, kept in the
  graded notebook.

* the second run (kvlesson.grading.box.withheld): a copy of kvlesson without an exercise's
  forbidden functions, put in place of every kvlesson the zygote could import, for the
  grade's second run of a submission (kvlesson.grading.grade.second_run); fonts
  (kvlesson.grading.box.fonts): matplotlib's list of fonts, made once per grading run.

What it does not protect: a cell can slow grading until the timeout, and the watch can be
silenced by C code or by the kernel itself (the walls still hold then, and the second run
does not depend on the watch).

May import `checks` (the ledger knows forbidden functions) and `course`; nothing else of
the grading wing.
"""
