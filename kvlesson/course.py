"""`python -m kvlesson.course`: build the course, or the course for other hardware
(kvlesson.grading.course_build).

A command's old address, kept so that what instructors and the guides type still works.
`python -m kvlesson.course site` builds the course as a static website
(kvlesson.grading.site.command).
"""

import sys

from kvlesson.grading.course_build import main


def dispatch(argv: list[str]) -> int:
    """`site` to the website's command, every other command to the build's."""
    if argv[:1] == ["site"]:
        from kvlesson.grading.site.command import main as site
        return site(argv[1:])
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(dispatch(sys.argv[1:]))
