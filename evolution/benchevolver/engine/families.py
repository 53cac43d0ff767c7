"""Mutation families in the reviewers' controlled vocabulary of algorithm tags.

The global-memory rule (a family accepted in another lineage needs a larger gain) compares
families across lineages, so "two pointers", "two-pointer technique" and "sliding window" must
be one family. The vocabulary (canonical names and synonyms) is the platform's
(``evolution.vocabulary``), the one reviewers tag with.
"""

from __future__ import annotations

import re

from evolution.vocabulary import VOCABULARY

# Words that qualify a family without naming it ("two-pointer technique", "DP-based approach").
FILLER = {
    "a",
    "an",
    "the",
    "technique",
    "techniques",
    "approach",
    "method",
    "algorithm",
    "algorithms",
    "trick",
    "based",
    "using",
    "with",
    "via",
    "of",
    "on",
    "over",
    "for",
    "and",
}
MAX_LENGTH = 120

_index_cache: tuple[int, dict[str, str]] | None = None


def _normalize(text: str) -> str:
    text = re.sub(r"[-_./]+", " ", text.strip().lower())
    return re.sub(r"\s+", " ", text).strip()


def _singular(phrase: str) -> str:
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in phrase.split())


def _without_filler(key: str) -> str:
    return " ".join(w for w in key.split() if w not in FILLER) or key


def _index() -> dict[str, str]:
    global _index_cache
    vocabulary = VOCABULARY
    if _index_cache is not None and _index_cache[0] == id(vocabulary):
        return _index_cache[1]
    index: dict[str, str] = {}
    for canonical, synonyms in vocabulary.items():
        for phrase in (canonical, *synonyms):
            key = _normalize(phrase)
            # A family is matched with its filler words dropped, so its phrases are indexed
            # the same way too ("meet in the middle search" holds "meet in middle").
            for form in (key, _without_filler(key)):
                index.setdefault(form, canonical)
                index.setdefault(_singular(form), canonical)
    _index_cache = (id(vocabulary), index)
    return index


def vocabulary_names() -> list[str]:
    return sorted(VOCABULARY)


def canonical_family(name: str) -> str:
    """The vocabulary's canonical tag for a mutation family, else the family normalised.

    Exact match first (filler words dropped, plurals folded), then the longest vocabulary
    phrase the family contains as whole words ("offline queries with BIT" -> "fenwick tree").
    """
    key = _normalize(name)
    cleaned = _without_filler(key)
    index = _index()
    for candidate in (cleaned, _singular(cleaned), key):
        if candidate in index:
            return index[candidate]
    words = f" {_singular(cleaned)} "
    # Longest phrase wins; on a tie the later one ("counting with hash maps": the hash maps).
    best, best_rank = "", (0, -1)
    for phrase in index:
        at = words.rfind(f" {phrase} ")
        if at >= 0 and (len(phrase), at) > best_rank:
            best, best_rank = phrase, (len(phrase), at)
    if best:
        return index[best]
    return cleaned[:MAX_LENGTH]
