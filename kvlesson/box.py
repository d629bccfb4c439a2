"""`python -m kvlesson.box ...`: an earlier release's address of the boxed kernel's launcher
(kvlesson.grading.box.launch), kept for one release so that a kernelspec written for it still
starts; the grader itself starts `python -m kvlesson.grading.box`.
"""

import sys

from kvlesson.grading.box.launch import main

if __name__ == "__main__":
    print(
        "kvlesson: `python -m kvlesson.box` is now `python -m kvlesson.grading.box`; the old "
        "address goes in the next release",
        file=sys.stderr,
    )
    raise SystemExit(main())
