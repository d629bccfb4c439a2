"""`python -m kvlesson.box ...`: start one boxed kernel (kvlesson.grading.box.launch).

A command's old address, kept so that a kernelspec written for an earlier release still works.
"""

from kvlesson.grading.box.launch import main

if __name__ == "__main__":
    raise SystemExit(main())
