"""Acceptance (Algorithm 1, line 22) and the stopping rules (Table 5)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from evolution.judging.difficulty import phi

from .config import EvolutionSettings
from .evidence import MAX_PROOF_ATTEMPTS, attempts_to_prove, wilson_interval

__all__ = [
    "MAX_PROOF_ATTEMPTS",
    "Evidence",
    "Outcome",
    "attempt_cap",
    "attempts_to_prove",
    "decide",
    "evidence_verdict",
    "level_evidence",
    "required_level",
    "stop_reason",
    "wilson_interval",
]


@dataclass(frozen=True)
class Outcome:
    decision: str  # accepted | not_harder (the other decisions are made earlier)
    reason: str


def decide(
    *,
    level: int,
    parent_level: int,
    seed_level: int,
    settings: EvolutionSettings,
    family_used_elsewhere: bool,
) -> Outcome:
    """A(I') = r(I') ∧ ℓ' ≥ ℓ(parent) ∧ ℓ' ≥ ℓ_seed + Δ ∧ ¬Artificial(I'), with the global-memory
    rule: a family that already succeeded in another lineage must gain Δ + extra over the seed.
    Validity and artificiality are decided before this call."""
    gain_needed = settings.accept_min_level_gain
    if family_used_elsewhere:
        gain_needed += settings.reused_family_extra_gain
    if level < parent_level:
        return Outcome("not_harder", f"level {level} is below the parent's level {parent_level}")
    if level < seed_level + gain_needed:
        why = f"level {level} < seed level {seed_level} + required gain {gain_needed}"
        if family_used_elsewhere:
            why += " (family already accepted in another lineage: larger gain required)"
        return Outcome("not_harder", why)
    return Outcome(
        "accepted",
        f"level {level} (parent {parent_level}, seed {seed_level}, gain ≥ {gain_needed})",
    )


def stop_reason(
    *,
    iterations: int,
    accepted: int,
    no_improve: int,
    best_level: int | None,
    settings: EvolutionSettings,
) -> str | None:
    """The first stopping rule that fires, or None to continue."""
    if best_level is not None and best_level >= settings.accept_target_level:
        return f"accept_target_level reached (level {best_level})"
    if accepted >= settings.max_accepted_per_seed:
        return f"max_accepted_per_seed reached ({accepted})"
    if no_improve >= settings.no_improve_patience:
        return f"no_improve_patience reached ({no_improve} consecutive non-accepted iterations)"
    if iterations >= settings.max_iters_per_seed:
        return f"max_iters_per_seed reached ({iterations})"
    return None


# --------------------------------------------------------------------------- levels with evidence


@dataclass(frozen=True)
class Evidence:
    """What the measured pass rate supports: ``level`` is phi of the interval's upper bound, the
    hardest level the panel's answers prove at the configured confidence."""

    passes: int
    attempts: int
    low: float
    high: float
    confidence: float
    level: int

    def describe(self) -> str:
        return (
            f"{self.passes}/{self.attempts} pass, {self.confidence:.0%} Wilson interval "
            f"[{self.low:.2f}, {self.high:.2f}] supports level {self.level}"
        )


def level_evidence(*, passes: int, attempts: int, settings: EvolutionSettings) -> Evidence | None:
    """None when ``level_confidence`` is 0 (the paper's point estimate decides alone)."""
    if settings.level_confidence <= 0:
        return None
    low, high = wilson_interval(passes, attempts, settings.level_confidence)
    return Evidence(
        passes=passes,
        attempts=attempts,
        low=round(low, 4),
        high=round(high, 4),
        confidence=settings.level_confidence,
        level=phi(high, settings.level_thresholds),
    )


def required_level(
    *, parent_level: int, seed_level: int, settings: EvolutionSettings, family_used_elsewhere: bool
) -> int:
    """The lowest level an accepted candidate may have (Algorithm 1, line 22, with the global rule)."""
    gain = settings.accept_min_level_gain
    if family_used_elsewhere:
        gain += settings.reused_family_extra_gain
    return max(parent_level, seed_level + gain)


def attempt_cap(*, needed: int, panel_size: int, settings: EvolutionSettings) -> int:
    """Attempts per panel model a candidate may reach while its gain is unproven: the level's own
    cap (``max_panel_attempts`` 0, the default: ``attempts_to_prove`` shared over the panel), or
    the campaign's fixed ``max_panel_attempts``."""
    if settings.max_panel_attempts > 0:
        return settings.max_panel_attempts
    pooled = attempts_to_prove(needed, settings.level_confidence, settings.level_thresholds)
    return math.ceil(pooled / max(panel_size, 1))


def evidence_verdict(
    *,
    evidence: Evidence | None,
    needed: int,
    attempts_per_model: int,
    panel_size: int,
    settings: EvolutionSettings,
) -> str:
    """ "enough" (the interval clears the level needed), "more" (ask the panel again: the point
    estimate gains but the interval does not, and the level's attempt cap allows) or
    "insufficient"."""
    if evidence is None or evidence.level >= needed:
        return "enough"
    if attempts_per_model < attempt_cap(needed=needed, panel_size=panel_size, settings=settings):
        return "more"
    return "insufficient"
