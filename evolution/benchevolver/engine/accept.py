"""Acceptance (Algorithm 1, line 22) and the stopping rules (Table 5)."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

from .config import EvolutionSettings, phi


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


def wilson_interval(passes: int, attempts: int, confidence: float) -> tuple[float, float]:
    """The Wilson score interval for a binomial pass rate (two-sided, ``confidence`` e.g. 0.95).

    Unlike the normal approximation it stays inside [0, 1] and is honest at 0/n and n/n, which
    is where a small panel lives: 8/8 gives about [0.68, 1.0], 7/8 about [0.53, 0.98]."""
    if attempts <= 0:
        return 0.0, 1.0
    p = passes / attempts
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    z2 = z * z
    denominator = 1 + z2 / attempts
    center = (p + z2 / (2 * attempts)) / denominator
    margin = z * ((p * (1 - p) / attempts + z2 / (4 * attempts * attempts)) ** 0.5) / denominator
    return max(0.0, center - margin), min(1.0, center + margin)


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


def evidence_verdict(
    *, evidence: Evidence | None, needed: int, attempts_per_model: int, settings: EvolutionSettings
) -> str:
    """ "enough" (the interval clears the level needed), "more" (ask the panel again: the point
    estimate gains but the interval does not, and the cap allows) or "insufficient"."""
    if evidence is None or evidence.level >= needed:
        return "enough"
    if attempts_per_model < settings.max_panel_attempts:
        return "more"
    return "insufficient"
