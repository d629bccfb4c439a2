"""The build: `kvlesson build` executes the instructor notebooks, searches probes that
catch every known mistake, stamps the self-checks, writes the keys and releases the
student notebooks; `kvlesson for` does it for other hardware.

May import `checks` and `course`; nothing else of the grading wing.
"""
