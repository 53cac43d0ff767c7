"""The cheap lexical near-duplicate check every method runs before any model is asked: Jaccard
similarity of word 3-shingles against the earlier texts (BenchEvolver's judge, X-Coder's
statement gate, EvoSyn's synthesized problems, the release gate)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")


def shingles(text: str, size: int = 3) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < size:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of word 3-shingles: 1.0 identical wording, ~0 unrelated."""
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


@dataclass
class DuplicateCheck:
    duplicate: bool
    score: float
    against: str  # label of the closest earlier text


def near_duplicate(text: str, earlier: dict[str, str], threshold: float) -> DuplicateCheck:
    best_label, best = "", 0.0
    for label, other in earlier.items():
        score = similarity(text, other)
        if score > best:
            best_label, best = label, score
    return DuplicateCheck(duplicate=best >= threshold, score=round(best, 4), against=best_label)


class ShingleIndex:
    """The near-duplicate check of one text against many, each text tokenised once.

    ``near_duplicate`` answers exactly as the function of that name (same closest label, same
    score, the first of equal scores in ``earlier``'s order), but instead of shingling both texts
    of every pair it keeps each text's shingles and an inverted index from shingle to the texts
    holding it, and counts the shingles a text shares with all the others in one pass over its
    shingles' postings (numpy). The curation gate compares every candidate with the seeds and
    the candidates kept before it: quadratic in pairs, linear in tokenising.
    """

    def __init__(self, texts: Iterable[str] = ()):
        self._ids: dict[str, int] = {}
        self._rows: list[np.ndarray] = []  # per text: its shingles' ids
        self._vocabulary: dict[tuple[str, ...], int] = {}
        self._shingle_column: list[int] = []
        self._text_column: list[int] = []
        self._postings: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        for text in texts:
            self.add(text)

    def add(self, text: str) -> int:
        """The text's id, shingling it the first time it is seen."""
        known = self._ids.get(text)
        if known is not None:
            return known
        text_id = len(self._rows)
        self._ids[text] = text_id
        row = [self._vocabulary.setdefault(s, len(self._vocabulary)) for s in shingles(text)]
        self._rows.append(np.array(row, dtype=np.int64))
        self._shingle_column.extend(row)
        self._text_column.extend([text_id] * len(row))
        self._postings = None
        return text_id

    def _index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(texts ordered by shingle, each shingle's first offset into them, shingle counts)."""
        if self._postings is None:
            shingle_ids = np.array(self._shingle_column, dtype=np.int64)
            order = np.argsort(shingle_ids, kind="stable")
            texts = np.array(self._text_column, dtype=np.int64)[order]
            counts = np.bincount(shingle_ids, minlength=len(self._vocabulary))
            offsets = np.concatenate(([0], np.cumsum(counts)))
            sizes = np.array([len(row) for row in self._rows], dtype=np.int64)
            self._postings = (texts, offsets, sizes)
        return self._postings

    def _shared(self, text_id: int) -> np.ndarray:
        """Per known text, how many shingles it shares with text ``text_id``."""
        texts, offsets, _ = self._index()
        row = self._rows[text_id]
        if not len(row):
            return np.zeros(len(self._rows), dtype=np.int64)
        holders = np.concatenate([texts[offsets[s] : offsets[s + 1]] for s in row])
        return np.bincount(holders, minlength=len(self._rows))

    def near_duplicate(
        self, text: str, earlier: dict[str, str], threshold: float
    ) -> DuplicateCheck:
        text_id = self.add(text)
        others = np.fromiter((self.add(o) for o in earlier.values()), np.int64, len(earlier))
        if not len(others):
            return DuplicateCheck(duplicate=threshold <= 0.0, score=0.0, against="")
        _, _, sizes = self._index()
        shared = self._shared(text_id)[others]
        own, their = sizes[text_id], sizes[others]
        union = np.maximum(own + their - shared, 1)
        scores = np.where((own > 0) & (their > 0), shared / union, 0.0)
        at = int(np.argmax(scores))
        best = float(scores[at])
        label = next(itertools.islice(iter(earlier), at, None)) if best > 0 else ""
        return DuplicateCheck(duplicate=best >= threshold, score=round(best, 4), against=label)
