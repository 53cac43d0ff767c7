"""A panel attempt (BenchEvolver, Section 3.3, Algorithm 1 line 21, and the measurement of any
kind's kept problems): every panel model attempts the task from the statement alone, K times;
an attempt passes only if every test passes. The pooled pass rate is a', and the verdict
histogram is the error pattern. ``phi`` maps a pass rate to a difficulty level."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from evolution.llm.parsing import ParseError, extract_code

from . import prompts

# phi: pass rate -> difficulty level 1..5. A pass rate at or above THRESHOLDS[i] maps to level
# i + 1; below the last threshold is level 5. Level 1 is saturated (almost always solved),
# level 5 is almost never solved. Configurable per campaign (``level_thresholds``). The
# BenchEvolver paper defines phi (Appendix B) but gives no thresholds: these are the project's.
DEFAULT_LEVEL_THRESHOLDS = (0.9, 0.7, 0.4, 0.1)


@dataclass(frozen=True)
class PanelDefaults:
    """How a panel measures unless a campaign sets its own: K attempts per target model, the
    sampling temperature and request time-out of every solver call (BenchEvolver's Table 5),
    the stdout captured per test, the failed calls allowed for one attempt before the
    measurement names the endpoint, and phi's thresholds. BenchEvolver's settings take their
    defaults from here and the shared panel measurement measures with them, so the two agree."""

    target_eval_k: int = 4
    temperature: float = 0.8
    timeout: float = 600.0
    max_output_bytes: int = 1_000_000
    infra_retry_limit: int = 3
    level_thresholds: tuple[float, ...] = DEFAULT_LEVEL_THRESHOLDS


PANEL_DEFAULTS = PanelDefaults()


def phi(
    pass_rate: float, thresholds: tuple[float, ...] | list[float] = DEFAULT_LEVEL_THRESHOLDS
) -> int:
    """Map an empirical pass rate in [0, 1] to a difficulty level in 1..len(thresholds)+1."""
    if not 0.0 <= pass_rate <= 1.0:
        raise ValueError(f"pass rate must be in [0, 1], got {pass_rate}")
    for index, threshold in enumerate(thresholds):
        if pass_rate >= threshold:
            return index + 1
    return len(thresholds) + 1


@dataclass
class PanelResult:
    passes: int
    attempts: int
    per_model: dict[str, dict]
    error_pattern: dict[str, int]
    infra_errors: int = 0

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0


def solver_messages(*, statement: str, harness: str, entry_point: str, starter_code: str = ""):
    template = prompts.load("solver")
    return template.messages(
        statement=statement,
        code_contract=prompts.code_contract(harness, entry_point, starter_code),
        starter_block=prompts.starter_block(starter_code, harness),
    ), template


def solver_code(text: str) -> tuple[str, str]:
    """(code, problem) — an attempt without a code block is a failed attempt, not a crash."""
    try:
        return extract_code(text, language="python"), ""
    except ParseError as exc:
        return "", str(exc)


def answered_attempt(content: str, call_id, earlier_details: dict | None) -> tuple[str, str, dict]:
    """(code, verdict, details) of a panel attempt the model answered: no code block is a
    failed attempt judged "NC" (empty verdict: to be judged); a retried attempt keeps the
    infrastructure errors of its earlier tries."""
    code, problem = solver_code(content)
    details = {"call_id": call_id}
    if earlier_details is not None:
        details["infra_errors"] = earlier_details.get("infra_errors", [])
    if problem:
        details["parse_error"] = problem
    return code, ("" if code else "NC"), details


# A panel attempt whose model call failed (transport, provider): not an answer, so not counted.
INFRA_ERROR = "IE"


def pool(attempts: list[tuple[str, str]]) -> PanelResult:
    """``attempts`` are (model name, verdict) pairs; AC passes. Infrastructure errors (IE) are
    counted apart and excluded from the pass rate: an outage is not difficulty."""
    per_model: dict[str, dict] = {}
    errors: Counter[str] = Counter()
    passes = 0
    infra = 0
    counted = 0
    for model, verdict in attempts:
        row = per_model.setdefault(model, {"passes": 0, "attempts": 0, "verdicts": {}})
        if verdict == INFRA_ERROR:
            row["infra_errors"] = row.get("infra_errors", 0) + 1
            infra += 1
            continue
        counted += 1
        row["attempts"] += 1
        row["verdicts"][verdict] = row["verdicts"].get(verdict, 0) + 1
        if verdict == "AC":
            row["passes"] += 1
            passes += 1
        else:
            errors[verdict] += 1
    return PanelResult(
        passes=passes,
        attempts=counted,
        per_model=per_model,
        error_pattern=dict(errors),
        infra_errors=infra,
    )
