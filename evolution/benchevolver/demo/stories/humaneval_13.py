"""HumanEval/13: the panel fails the seed too often to count as saturated: skipped (outside
allowed_seed_levels)."""

from __future__ import annotations

SEED = "HumanEval/13"

GCD_GOOD = """
def greatest_common_divisor(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
"""

GCD_WRONG = """
def greatest_common_divisor(a: int, b: int) -> int:
    return min(a, b)
"""


def answers(put, panel) -> None:
    """Its answers: the panel's calibration, which fails the seed too often."""
    panel(
        SEED,
        0,
        {
            "solver-a": [GCD_GOOD, GCD_WRONG, GCD_GOOD, GCD_WRONG],
            "solver-b": [GCD_WRONG, GCD_GOOD, GCD_WRONG, GCD_WRONG],
        },
    )
