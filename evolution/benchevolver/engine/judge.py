"""Judge (Section 3.3): reject false difficulty and near-duplicate reskins. A cheap lexical
near-duplicate check runs before any model is asked."""

from __future__ import annotations

from dataclasses import dataclass

from evolution.judging.duplicates import DuplicateCheck, near_duplicate, similarity
from evolution.llm.parsing import ParseError, extract_json

from . import prompts

__all__ = [
    "DuplicateCheck",
    "JudgeVerdict",
    "judge_messages",
    "near_duplicate",
    "parse_judge",
    "similarity",
]


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
