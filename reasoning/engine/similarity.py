"""Lexical similarity for the measured novelty check.

Similarity of two questions is the Jaccard index of their sets of word bigrams (lower-cased
words and numbers; a text of one word uses its unigram). Bigrams rather than words, so two
questions on the same topic in different words stay apart while a reworded copy (same
sentences, changed numbers or names) scores high.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    words = _WORD.findall((text or "").lower())
    if len(words) < 2:
        return frozenset((w,) for w in words)
    return frozenset(zip(words, words[1:], strict=False))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the word-bigram sets, in [0, 1]; two empty texts score 0."""
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


@dataclass(frozen=True)
class Nearest:
    score: float
    key: object | None  # the caller's identifier of the most similar prior text


def nearest(text: str, priors: Iterable[tuple[object, str]]) -> Nearest:
    """The most similar of ``priors`` ((key, text) pairs) to ``text``."""
    mine = shingles(text)
    best = Nearest(0.0, None)
    if not mine:
        return best
    for key, prior in priors:
        other = shingles(prior)
        if not other:
            continue
        score = len(mine & other) / len(mine | other)
        if score > best.score:
            best = Nearest(score, key)
    return best
