"""The catalogue of known mistakes: each one's code, the hint a self-check gives for it, and
its name in the class report.

The build finds a known mistake by mutating the instructor's solution
(`kvlesson.authoring.mutants`), or takes it from the exercise's own declaration
(`kvlesson.grading.checks.rules`: a wrong answer cell, its name and its hint, coded
"declared:<name>"); the key stores, per exercise, the answers each one gives with its hint's
words; the marking names the one a wrong answer matched, and the class report counts them by
these names.
"""

MISTAKES = {  # code: the hint a self-check gives when a wrong answer matches this mistake;
    # when two mistakes give the same wrong answer, the one listed first names it
    "ceil": "a part left over still counts as a whole one: round up, not down.",
    "true_div": "/ gives a float; whole blocks need whole-number division, //.",
    "factor2": "a factor of 2 is missing.",
    "term": "a term of the sum is missing.",
    "factor": "a factor is missing: an input of the product is left out.",
    "gib": "that is GiB (2**30 bytes); the question asks for GB (1e9 bytes).",
    "gb": "that is GB (1e9 bytes); the question asks for GiB (2**30 bytes).",
    "percent": "the share is in percent: divide it by 100.",
    "boundary": "check the comparison at the boundary: > against >=, < against <=.",
    "global": "the function should use its argument, not the notebook's variable of that name.",
    "float": "that is a float; the answer is a whole number, an int.",
    "off_by_one": "it is off by one: check where the count starts and where it stops.",
    "constant": "your answer is what the right working gives with one of the exercise's "
    "numbers one up or one down: check each number you used against the text.",
    "rounding": "check the rounding the question asks for: up, down or to the nearest.",
    "kilo": "a thousand is 1,000 here, or 1,024 where the question counts in binary units: "
    "check which.",
    "swapped": "the arguments are taken in the wrong order: check the order the question gives.",
    "hardcoded": "the function should use its argument, not one value the self-check passes it.",
}


NAMES = {  # code: the mistake in a few words, as the class report names it
    "ceil": "floor for ceiling",
    "true_div": "/ for //",
    "factor2": "a factor of 2 dropped",
    "term": "a term left out",
    "factor": "an input left out of a product",
    "gib": "GB read as GiB",
    "gb": "GiB read as GB",
    "percent": "a percent not divided by 100",
    "boundary": "> for >= at the boundary",
    "global": "the notebook's global for the argument",
    "float": "a float for an int",
    "off_by_one": "off by one",
    "constant": "a number one away",
    "rounding": "the wrong rounding",
    "kilo": "1,000 and 1,024 mixed up",
    "swapped": "the arguments swapped",
    "hardcoded": "an argument hard-coded from an example",
}


DECLARED = "declared:"  # the code of a mistake an exercise declares: "declared:<its name>"


def declared_code(name: str) -> str:
    """The code of the mistake an exercise declares under `name`."""
    return DECLARED + name


def is_known(code: str) -> bool:
    """Whether `code` names a known mistake: the catalogue's or an exercise's own."""
    return code in MISTAKES or (code.startswith(DECLARED) and len(code) > len(DECLARED))


def name_of(code: str) -> str:
    """A known mistake in a few words, as the class report names it."""
    return NAMES.get(code) or code[len(DECLARED) :] if is_known(code) else code


def rank(code: str) -> int:
    """Where a mistake comes when two give one answer: an exercise's own first (its
    author wrote it for this answer), then the catalogue's order."""
    return -1 if code.startswith(DECLARED) else list(MISTAKES).index(code)
