"""`python -m kvlesson.box ...`: start one boxed kernel (see kvlesson.box.launch)."""

import sys

from kvlesson.box.launch import main

sys.exit(main())
