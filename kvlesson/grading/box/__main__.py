"""`python -m kvlesson.grading.box --socket FD`: a zygote in the box (kvlesson.grading.box.zygote)."""

import sys

from kvlesson.grading.box.zygote import main

main(sys.argv[1:])
