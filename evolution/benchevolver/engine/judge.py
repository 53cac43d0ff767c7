"""Judge (Section 3.3): reject false difficulty, candidates without an algorithmic lift over
their parent (the paper's "each accepted mutation must change the solution structure enough to
make the parent algorithm insufficient"), and near-duplicate reskins. A cheap lexical
near-duplicate check runs before any model is asked. The judge sees the parent's and the
candidate's references, the mutator's claim of why the parent fails, how the parent's reference
did on the new tests, and how each target model failed."""

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
    "panel_error_text",
    "parse_judge",
    "similarity",
]


# Code shown to the judge is cut to this many characters each.
CODE_CHARS = 4000


def judge_messages(
    *,
    statement: str,
    idea: str,
    lineage_statements: list[str],
    parent_code: str = "",
    code: str = "",
    parent_weakness: str = "",
    parent_outcome: str = "",
    panel_errors: str = "",
):
    template = prompts.load("judge")
    listing = "\n\n---\n\n".join(s[:3000] for s in lineage_statements) or "(none)"
    return template.messages(
        statement=statement,
        idea=idea,
        lineage_statements=listing,
        parent_code=parent_code[:CODE_CHARS] or "(none)",
        code=code[:CODE_CHARS] or "(none)",
        parent_weakness=parent_weakness or "(not given)",
        parent_outcome=parent_outcome or "(not run)",
        panel_errors=panel_errors or "(none recorded)",
    ), template


def panel_error_text(panel_results: dict) -> str:
    """Each target model's verdicts, e.g. ``model-a: 1/4 pass; WA 2, TLE 1``: where the models
    fail (wrong answers or time) says more than one pooled histogram."""
    lines = []
    for model, row in sorted((panel_results or {}).items()):
        verdicts = {k: v for k, v in (row.get("verdicts") or {}).items() if k != "AC"}
        text = f"{model}: {row.get('passes', 0)}/{row.get('attempts', 0)} pass"
        if verdicts:
            text += "; " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
        lines.append(text)
    return "\n".join(lines)


@dataclass
class JudgeVerdict:
    artificial: bool
    duplicate: bool
    reasons: list[str]
    parsed: bool
    # Whether the candidate needs an algorithmic lift over its parent; None when the answer does
    # not say (an answer in the first prompt version's format).
    lift: bool | None = None

    @property
    def rejects(self) -> bool:
        return self.artificial or self.duplicate or self.lift is False


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
    lift = data.get("lift")
    lift = None if lift is None else _truthy(lift)
    artificial = bool(data.get("artificial")) or (
        verdict == "reject" and not data.get("duplicate") and lift is not False
    )
    reasons = data.get("reasons") or []
    if not isinstance(reasons, list):
        reasons = [str(reasons)]
    return JudgeVerdict(
        artificial=artificial,
        duplicate=bool(data.get("duplicate")),
        reasons=[str(r) for r in reasons],
        parsed=True,
        lift=lift,
    )


def _truthy(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return bool(value)
