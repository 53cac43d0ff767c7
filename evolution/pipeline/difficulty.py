"""Difficulty (Section 3.3, Algorithm 1 line 21): every panel model attempts the task from the
statement alone, K times; an attempt passes only if every test passes. a' is the pooled pass rate,
l' = phi(a'), and the verdict histogram is the error pattern fed to memory."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from evolution.llm.parsing import ParseError, extract_code

from . import prompts


@dataclass
class PanelResult:
    passes: int
    attempts: int
    per_model: dict[str, dict]
    error_pattern: dict[str, int]

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0


def solver_messages(*, statement: str, harness: str, entry_point: str):
    template = prompts.load("solver")
    return template.messages(
        statement=statement, code_contract=prompts.code_contract(harness, entry_point)
    ), template


def solver_code(text: str) -> tuple[str, str]:
    """(code, problem) — an attempt without a code block is a failed attempt, not a crash."""
    try:
        return extract_code(text, language="python"), ""
    except ParseError as exc:
        return "", str(exc)


def pool(attempts: list[tuple[str, str]]) -> PanelResult:
    """``attempts`` are (model name, verdict) pairs; AC passes."""
    per_model: dict[str, dict] = {}
    errors: Counter[str] = Counter()
    passes = 0
    for model, verdict in attempts:
        row = per_model.setdefault(model, {"passes": 0, "attempts": 0, "verdicts": {}})
        row["attempts"] += 1
        row["verdicts"][verdict] = row["verdicts"].get(verdict, 0) + 1
        if verdict == "AC":
            row["passes"] += 1
            passes += 1
        else:
            errors[verdict] += 1
    return PanelResult(
        passes=passes, attempts=len(attempts), per_model=per_model, error_pattern=dict(errors)
    )
