"""Making a release of the course: `kvlesson build` executes the instructor notebooks,
searches probes that catch every known mistake, stamps the self-checks, writes the keys and
releases the student notebooks; `kvlesson generate` records the assignments in the gradebook;
`kvlesson for` does it all for other hardware.

May import the model and the lesson, and of the grading wing `checks` (what runs in the
student's kernel) and `course` (the course on disk); never the box, the marking, the grade or
the report.
"""
