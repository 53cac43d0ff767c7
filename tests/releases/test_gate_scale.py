"""The gate's near-duplicate rule at scale (issue #36): each statement is tokenised once, not once
per pair, and the indexed check answers exactly as the pairwise one did."""

from __future__ import annotations

import random

from evolution.judging import duplicates
from evolution.judging.duplicates import ShingleIndex, near_duplicate
from releases.gate import CandidateFacts, GateRules, evaluate
from tests.support.gate_rules import SELECTION_TIME_OK

_WORDS = [f"w{i}" for i in range(60)]


def _texts(rng: random.Random, count: int) -> list[str]:
    """Short texts from a small vocabulary (many shared shingles, equal scores), with exact
    copies, light rewrites and texts too short to shingle."""
    out = []
    for i in range(count):
        if out and i % 7 == 0:
            out.append(rng.choice(out))
        elif out and i % 5 == 0:
            words = rng.choice(out).split()
            words[rng.randrange(len(words))] = rng.choice(_WORDS) if words else ""
            out.append(" ".join(words))
        elif i % 11 == 0:
            out.append(rng.choice(["", "one", "two words"]))
        else:
            out.append(" ".join(rng.choice(_WORDS[:12]) for _ in range(rng.randint(3, 25))))
    return out


def test_the_index_answers_as_the_pairwise_check_for_every_text():
    rng = random.Random(36)
    texts = _texts(rng, 160)
    index = ShingleIndex(texts[:100])  # the rest are seen first when asked
    for i, text in enumerate(texts):
        earlier = {f"t{j}": texts[j] for j in rng.sample(range(len(texts)), 40) if j != i}
        for threshold in (0.0, 0.5, 0.85):
            assert index.near_duplicate(text, earlier, threshold) == near_duplicate(
                text, earlier, threshold
            ), (i, threshold)
    assert index.near_duplicate("a b c", {}, 0.5) == near_duplicate("a b c", {}, 0.5)


def _original(i: int, statement: str) -> CandidateFacts:
    return CandidateFacts(
        problem_id=i,
        public_id=f"P{i:03d}",
        title=f"problem {i}",
        origin="original",
        statement=statement,
        pass_at_1=0.3,
        panel_passes=3,
        panel_attempts=10,
    )


def test_the_gate_tokenises_each_statement_once(monkeypatch):
    rng = random.Random(5)
    statements = _texts(rng, 60)
    calls = []
    real = duplicates.shingles

    def counted(text, size=3):
        calls.append(text)
        return real(text, size)

    monkeypatch.setattr(duplicates, "shingles", counted)
    candidates = [_original(i, s) for i, s in enumerate(statements)]
    reports = evaluate(candidates, GateRules.from_dict(SELECTION_TIME_OK))
    # Every other rule passes, so each candidate is compared with every earlier kept one:
    # about 1,800 pairs, which the pairwise check shingled twice each.
    assert sum(r.passed for r in reports) > 40
    assert len(calls) <= len(set(statements))
    duplicate = [r for r in reports if not r.passed]
    assert duplicate and all(r.failures()[0].rule == "duplicate" for r in duplicate)
