"""LLM-as-judge (section 8): parse one judge's answer, aggregate an ensemble (section 12).

A judge answers ``{"score": "correct"|"incorrect", "rationale": "..."}``: correct scores 1.0,
incorrect 0.0. Anything else is a *parse failure*: it scores 0.0 (the document's conservative
fallback) but is recorded as such, so it is never mistaken for a real "incorrect".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from evolution.llm import extract_json
from evolution.llm.errors import ParseError

SCORES = {"correct": 1.0, "incorrect": 0.0}


@dataclass(frozen=True)
class Verdict:
    score: float
    rationale: str
    parse_failure: bool = False
    reason: str = ""  # why parsing failed
    judge: str = ""  # endpoint name

    def to_dict(self) -> dict:
        return asdict(self)


def parse_verdict(content: str, *, judge: str = "") -> Verdict:
    """The judge's verdict, or a parse-failure verdict scoring 0.0 with the reason."""
    try:
        data = extract_json(content)
    except ParseError as exc:
        return Verdict(0.0, "", parse_failure=True, reason=str(exc), judge=judge)
    raw = data.get("score")
    label = raw.strip().lower() if isinstance(raw, str) else None
    rationale = data.get("rationale", "")
    rationale = rationale if isinstance(rationale, str) else str(rationale)
    if label not in SCORES:
        return Verdict(
            0.0,
            rationale,
            parse_failure=True,
            reason=f'"score" must be "correct" or "incorrect", got {raw!r}',
            judge=judge,
        )
    return Verdict(SCORES[label], rationale, judge=judge)


@dataclass(frozen=True)
class Aggregate:
    score: float
    disagreement: bool
    parse_failures: int
    rationale: str


def aggregate(verdicts: list[Verdict], rule: str) -> Aggregate:
    """One score from the judges. ``majority``: 1.0 when more than half the judges say correct
    (a tie is not a majority: 0.0). ``mean``: the mean of the judges' scores. Judges disagree
    when their scores differ; a parse failure counts as its 0.0 score."""
    if not verdicts:
        raise ValueError("aggregate needs at least one verdict")
    scores = [v.score for v in verdicts]
    if rule == "majority":
        score = 1.0 if sum(scores) > len(scores) / 2 else 0.0
    elif rule == "mean":
        score = sum(scores) / len(scores)
    else:
        raise ValueError(f"unknown aggregation rule {rule!r}")
    if len(verdicts) == 1:
        rationale = verdicts[0].rationale or verdicts[0].reason
    else:
        rationale = "\n".join(
            f"[{v.judge or f'judge {i + 1}'}] "
            + ("parse failure: " + v.reason if v.parse_failure else v.rationale)
            for i, v in enumerate(verdicts)
        )
    return Aggregate(
        score=score,
        disagreement=len(set(scores)) > 1,
        parse_failures=sum(v.parse_failure for v in verdicts),
        rationale=rationale,
    )


@dataclass(frozen=True)
class QualityVerdict:
    accepted: bool
    reason: str
    parse_failure: bool = False


def parse_quality(content: str) -> QualityVerdict:
    """The quality filter's verdict ``{"verdict": "accept"|"reject", "reason": ...}``. An
    unreadable verdict rejects the question (it is regenerated within the bound)."""
    try:
        data = extract_json(content)
    except ParseError as exc:
        return QualityVerdict(False, f"unreadable quality verdict: {exc}", parse_failure=True)
    verdict = str(data.get("verdict", "")).strip().lower()
    reason = str(data.get("reason", ""))
    if verdict not in ("accept", "reject"):
        return QualityVerdict(
            False, f'"verdict" must be "accept" or "reject", got {verdict!r}', parse_failure=True
        )
    return QualityVerdict(verdict == "accept", reason)
