"""Acceptance (Algorithm 1, line 22) and the stopping rules (Table 5)."""

from __future__ import annotations

from dataclasses import dataclass

from .config import EvolutionSettings


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
