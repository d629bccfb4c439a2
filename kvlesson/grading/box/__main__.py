"""`python -m kvlesson.grading.box ...`: start one boxed kernel (kvlesson.grading.box.launch)."""

import sys

from kvlesson.grading.box.launch import main

sys.exit(main())
