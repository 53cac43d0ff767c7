"""HumanEval/12: a malformed mutator answer -> recorded error (R1); an underspecified statement ->
revised -> faithful, but not harder (R2); stop: no_improve_patience."""

from __future__ import annotations

from ..answers import GENERATOR_HEAD, SOLVER_MODELS, canonical, code, mutation, repair, written

SEED = "HumanEval/12"

# The entry point stays HumanEval/12's `longest`, as for HumanEval/0.

LONGEST_REPEATED = '''
from collections import Counter
from typing import List, Optional


def longest(strings: List[str]) -> Optional[str]:
    """The longest string occurring at least twice; ties -> lexicographically smallest."""
    counts = Counter(strings)
    best = None
    for s, c in counts.items():
        if c >= 2 and (best is None or len(s) > len(best) or (len(s) == len(best) and s < best)):
            best = s
    return best
'''

LONGEST_REPEATED_FIRST = """
def longest(strings):
    best = None
    for s in strings:
        if strings.count(s) >= 2 and (best is None or len(s) > len(best)):
            best = s
    return best
"""

# Reads "repeated" as "has a repeated letter": a plausible misreading of the first statement.
LONGEST_OVERALL = """
def longest(strings):
    best = None
    for s in strings:
        doubled = any(a == b for a, b in zip(s, s[1:]))
        if doubled and (best is None or len(s) > len(best)):
            best = s
    return best
"""

LONGEST_REPEATED_GENERATOR = (
    GENERATOR_HEAD
    + """
import json

sizes = {"small": rng.randint(2, 8), "medium": rng.randint(50, 300), "large": 3000}
n = sizes[args.tier]
pool = ["".join(rng.choice("ab") for _ in range(rng.randint(1, 4))) for _ in range(max(2, n // 3))]
print(json.dumps([rng.choice(pool) for _ in range(n)]))
"""
)

LONGEST_REPEATED_V1 = """
# Longest Repeated Word

Write `longest(strings: list[str]) -> str | None` that returns the longest string of the
list that is repeated.

## Input
A list of 2 to 3000 short words over the letters a and b.

## Output
The longest repeated word, or None.
"""

LONGEST_REPEATED_V2 = """
# Longest Repeated Word

Write `longest(strings: list[str]) -> str | None`. A word is *repeated* when it occurs at
least twice in the list (as a whole element). Return the longest repeated word; if several
repeated words have that length, return the lexicographically smallest of them. Return None when
no word occurs twice.

## Input
A list of 2 to 3000 words, each 1 to 4 letters from {a, b}.

## Output
The chosen word, or None.
"""


def answers(put, panel) -> None:
    """Its answers: the panel's calibration of the seed, then every round's."""
    panel(SEED, 0, {m: [canonical(SEED)] * 4 for m in SOLVER_MODELS})
    # ---- HumanEval/12 R1: the mutator answers without a code block -> recorded error
    s = "HumanEval/12"
    put(
        s,
        "mutator",
        "round=1",
        "I would make the task harder by asking for the longest palindrome instead.",
    )
    # ---- R2: underspecified statement -> revised -> faithful -> not harder
    put(
        s,
        "mutator",
        "round=2",
        mutation(
            "Return the longest word that occurs at least twice, breaking ties lexicographically.",
            "The parent only compares lengths; counting occurrences needs a multiset.",
            "counting with hash maps",
            LONGEST_REPEATED,
        ),
    )
    put(
        s,
        "writer",
        "round=2",
        written(
            "Longest Repeated Word",
            LONGEST_REPEATED_V1,
            ['["ab", "a", "ab", "b", "a"]\n', '["a", "b"]\n'],
        ),
    )
    put(s, "test_generator", "round=2;try=0", code(LONGEST_REPEATED_GENERATOR))
    for index in range(3):
        put(s, "faithfulness", f"round=2;repair=0;attempt={index}", code(LONGEST_OVERALL))
    put(
        s,
        "repair",
        "round=2;repair=0",
        repair(
            "statement",
            "State what 'repeated' means, the tie-break and the None case.",
            statement=LONGEST_REPEATED_V2.strip(),
        ),
    )
    # The revised statement asks for the test generator again (the same program fits it).
    put(s, "test_generator", "round=2;try=0;statement=1", code(LONGEST_REPEATED_GENERATOR))
    for index, program in enumerate([LONGEST_REPEATED, LONGEST_REPEATED_FIRST, LONGEST_REPEATED]):
        put(s, "faithfulness", f"round=2;repair=1;attempt={index}", code(program))
    panel(s, 2, {m: [LONGEST_REPEATED] * 4 for m in SOLVER_MODELS})
