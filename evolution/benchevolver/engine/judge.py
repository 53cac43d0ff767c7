"""Judge (Section 3.3): reject false difficulty and near-duplicate reskins. A cheap lexical
near-duplicate check runs before any model is asked."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evolution.llm.parsing import ParseError, extract_json

from . import prompts

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


def judge_messages(*, statement: str, idea: str, lineage_statements: list[str]):
    template = prompts.load("judge")
    listing = "\n\n---\n\n".join(s[:3000] for s in lineage_statements) or "(none)"
    return template.messages(statement=statement, idea=idea, lineage_statements=listing), template


@dataclass
class JudgeVerdict:
    artificial: bool
    duplicate: bool
    reasons: list[str]
    parsed: bool

    @property
    def rejects(self) -> bool:
        return self.artificial or self.duplicate


def parse_judge(text: str) -> JudgeVerdict:
    """An unparsable judge answer does not accept by default: it is reported as such and the
    caller records an error decision."""
    try:
        data = extract_json(text)
    except ParseError as exc:
        return JudgeVerdict(
            artificial=False, duplicate=False, reasons=[f"unparsable: {exc}"], parsed=False
        )
    verdict = str(data.get("verdict", "")).lower()
    artificial = bool(data.get("artificial")) or (verdict == "reject" and not data.get("duplicate"))
    reasons = data.get("reasons") or []
    if not isinstance(reasons, list):
        reasons = [str(reasons)]
    return JudgeVerdict(
        artificial=artificial,
        duplicate=bool(data.get("duplicate")),
        reasons=[str(r) for r in reasons],
        parsed=True,
    )
