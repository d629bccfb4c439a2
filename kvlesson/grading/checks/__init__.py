"""What runs in the student's kernel (and in the build's): the self-check a student runs,
the hidden test's record line, the kinds of answer and their normal forms, and forbidden
functions known by their code.

May import the standard library and the model and lesson wings (whose functions it
forbids); nothing else of the grading wing, and never nbgrader: it is imported by every
notebook of the course.
"""
