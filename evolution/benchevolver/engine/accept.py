"""Acceptance (Algorithm 1, line 22) and the stopping rules (Table 5)."""

from __future__ import annotations

import math
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


# The most pooled attempts ``attempts_to_prove`` looks through: far beyond any panel's budget,
# reached only by level thresholds so close together that a level's band is a sliver.
MAX_PROOF_ATTEMPTS = 100_000


def attempts_to_prove(level: int, confidence: float, thresholds) -> int:
    """The fewest pooled panel attempts from which on ``level`` can always be proven at
    ``confidence``: at this count and at every larger one, some pass count has its point
    estimate in the level's band of phi and its Wilson upper bound mapping to that level. At
    95% with the default phi: levels 2-5 need 14, 14, 14 and 35 attempts (0/35 proves level 5;
    0/16 proves only level 4). Below it a count may happen to work (7/10 proves level 2, while
    no pass count of 11, 12 or 13 does): the cap must not depend on such luck.

    At each count the smallest pass count in the band is tried (it has the lowest upper bound).
    The scan ends once a pass count one above the band's lower edge would be proven too: from
    there on the band is wider than the interval and every count works.

    Raises ValueError when that takes more than ``MAX_PROOF_ATTEMPTS`` attempts."""
    thresholds = list(thresholds)
    if not 1 <= level <= len(thresholds) + 1:
        raise ValueError(f"no level {level}")
    if level == 1:
        return 1
    lower = thresholds[level - 1] if level <= len(thresholds) else 0.0
    upper_limit = thresholds[level - 2]
    first = None
    for n in range(1, MAX_PROOF_ATTEMPTS + 1):
        x = math.ceil(lower * n - 1e-12)
        proven = x / n < upper_limit and wilson_interval(x, n, confidence)[1] < upper_limit
        if not proven:
            first = None
            continue
        first = first or n
        edge = min(lower * n + 1, n) if level <= len(thresholds) else 0
        if wilson_interval(edge, n, confidence)[1] < upper_limit:
            return first
    raise ValueError(
        f"level {level} cannot be proven at {confidence:.1%} confidence within "
        f"{MAX_PROOF_ATTEMPTS} attempts: its band of level_thresholds is too narrow"
    )


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
