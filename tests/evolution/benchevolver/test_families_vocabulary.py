"""BenchEvolver's mutation families and the reviewers' tags name the same things from one
vocabulary, the platform's (``evolution.vocabulary``): no app registers it at start-up."""

from __future__ import annotations

from evolution.benchevolver.engine import families
from evolution.vocabulary import VOCABULARY


def test_the_families_read_the_platforms_vocabulary_directly():
    assert families.vocabulary_names() == sorted(VOCABULARY)
    # As docs/benchevolver.md says: synonyms fold into one family.
    assert families.canonical_family("two-pointer technique") == families.canonical_family(
        "sliding window"
    )
    assert not hasattr(families, "register_vocabulary")
